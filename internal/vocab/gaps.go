package vocab

import (
	"fmt"
	"io/fs"
	"strings"
)

// Gap names one part of a policy that a runner could not enforce. It is the
// one gap type of the project: the provider's report (sandbox.Gap is this
// type), the launchers' notice lines, and the gaps the seatbelt and winacl
// packages predict.
type Gap struct {
	// Area is the class of confinement that is incomplete.
	Area Area `json:"area"`
	// Reason says what is not enforced and why.
	Reason string `json:"reason"`
}

// String returns "area: reason".
func (g Gap) String() string { return string(g.Area) + ": " + g.Reason }

// JoinGaps formats gaps as their String forms joined by "; ": the list a
// notice line, a "full enforcement required" refusal and the CLI's notice
// carry.
func JoinGaps(gaps []Gap) string {
	parts := make([]string, len(gaps))
	for i, g := range gaps {
		parts[i] = g.String()
	}
	return strings.Join(parts, "; ")
}

// Area is the class of confinement a Gap is about; in JSON and in String,
// its value ("fs", "net", ...).
type Area string

// The areas of a Gap.
const (
	AreaFS   Area = "fs"   // the file system: writes, reads, lookups
	AreaNet  Area = "net"  // the network
	AreaIPC  Area = "ipc"  // other processes reached by IPC, sockets or signals
	AreaProc Area = "proc" // other processes seen (their metadata, memory)
	// AreaClassify: the report of a result (telling a runner failure from
	// the command's own), rather than the confinement itself.
	AreaClassify Area = "classify"
	// AreaLimits: a resource limit the policy asked for (processes,
	// memory, temp dir size) that the runner cannot hold here.
	AreaLimits Area = "limits"
)

// Landlock ABI levels at which the access classes this project relies on
// appeared. One table, read by both the provider (to predict the report)
// and the launcher (to print the notice), so the two always agree.
const (
	ABIRefer    = 2 // rename and link across directories
	ABITruncate = 3 // truncate(2) and O_TRUNC
	ABINetTCP   = 4 // TCP bind and connect
	ABIIoctlDev = 5 // ioctl on device files
	ABIScopes   = 6 // abstract UNIX socket and signal scoping
	// ABIResolveUnix: connect(2) and sendmsg(2) to pathname UNIX sockets,
	// confined by path (LANDLOCK_ACCESS_FS_RESOLVE_UNIX).
	ABIResolveUnix = 9
)

// LandlockGaps returns the gaps a landlock launcher has on a kernel of
// Landlock ABI abi for spec s. The gaps that depend on the kernel come from
// the table above; ReadOnly paths are always gaps (Landlock only adds rights
// down a hierarchy, so it cannot take write back under a writable root).
func LandlockGaps(abi int, s Spec) []Gap {
	var gaps []Gap
	gaps = append(gaps, LandlockKernelGaps(abi, s)...)
	gaps = append(gaps, AllowNetworkGaps(s)...)
	gaps = append(gaps, LandlockPortGap(s)...)
	gaps = append(gaps, LandlockUnclosedGaps...)
	if len(s.DenyRead) > 0 {
		gaps = append(gaps, LandlockDenyReadMetadataGap)
	}
	for _, p := range s.ReadOnly {
		gaps = append(gaps, Gap{AreaFS, fmt.Sprintf("read-only subpath %s stays writable: landlock cannot narrow a writable root (needs the namespaces runner)", p)})
	}
	for _, d := range s.DenyRead {
		if WithinAny(d, s.Writable) {
			gaps = append(gaps, Gap{AreaFS, fmt.Sprintf("deny-read path %s is inside a writable root and stays readable: landlock cannot narrow a writable root (needs the namespaces runner)", d)})
		}
	}
	return gaps
}

// The landlock runner's gaps that no Landlock ABI up to 7 closes, on every
// wrap (the deny-read one when the policy denies reads).
var (
	// LandlockProcGap: no pid namespace.
	LandlockProcGap = Gap{AreaProc, "every host process stays visible in /proc, with its command line (landlock has no pid namespace; needs the namespaces runner)"}
	// LandlockDenyReadMetadataGap: Landlock checks opens, not lookups.
	LandlockDenyReadMetadataGap = Gap{AreaFS, "deny-read paths can still be looked up and listed: their names, sizes and times (stat, ls -l of the parent, ls of a denied directory), and inotify watches on them, which report the names of files opened, created and changed there (landlock confines opens, not lookups; needs the namespaces runner)"}
)

// LandlockUnclosedGaps are the gaps of every landlock wrap, whatever the
// kernel and the policy: so a landlock launcher asked for full enforcement
// always refuses, naming at least these. The host's IPC namespace is not
// among them: the launcher's seccomp filter refuses System V IPC and POSIX
// message queues (hostIPC in internal/seccompfilter/gen).
var LandlockUnclosedGaps = []Gap{LandlockProcGap}

// ErratumSignalScoping is the bit of LANDLOCK_CREATE_RULESET_ERRATA a
// kernel sets once its signal scoping no longer lets the threads of one
// process signal each other (erratum 2 of ABI 6). Without it, the
// effective ABI is one below ABIScopes, as go-landlock reads it.
const ErratumSignalScoping = 1 << 1

// LandlockKernelGaps returns only the gaps that come from the kernel's
// Landlock ABI: the ones the launcher announces with its notice line.
func LandlockKernelGaps(abi int, s Spec) []Gap {
	var gaps []Gap
	if abi < 1 {
		return []Gap{{AreaFS, "the kernel has no Landlock"}}
	}
	if abi < ABIRefer {
		gaps = append(gaps, Gap{AreaFS, fmt.Sprintf("Landlock ABI %d cannot allow renames or links between directories (needs ABI %d): they are refused everywhere", abi, ABIRefer)})
	}
	if abi < ABITruncate {
		gaps = append(gaps, Gap{AreaFS, fmt.Sprintf("Landlock ABI %d cannot confine truncate (needs ABI %d): files outside the writable roots can be truncated", abi, ABITruncate)})
	}
	if abi < ABIIoctlDev {
		gaps = append(gaps, Gap{AreaFS, fmt.Sprintf("Landlock ABI %d cannot confine ioctl on devices (needs ABI %d)", abi, ABIIoctlDev)})
	}
	if s.Network != NetworkAllow && abi < ABINetTCP {
		gaps = append(gaps, Gap{AreaNet, fmt.Sprintf("Landlock ABI %d has no TCP rules (needs ABI %d): network deny rests on seccomp alone", abi, ABINetTCP)})
	}
	gaps = append(gaps, UnixSocketGaps(abi, s)...)
	if abi < ABIScopes {
		gaps = append(gaps, Gap{AreaIPC, fmt.Sprintf("Landlock ABI %d cannot scope signals (needs ABI %d): the command can signal processes of the same user, its supervisor included, and a command that kills the supervisor leaves what it started running", abi, ABIScopes)})
		if s.Network != NetworkAllow {
			gaps = append(gaps, Gap{AreaNet, fmt.Sprintf("Landlock ABI %d cannot scope abstract UNIX sockets (needs ABI %d): host services listening on them stay reachable", abi, ABIScopes)})
		}
	}
	return gaps
}

// linkAbove returns the first existing symlink, or other non-directory,
// strictly between the deepest writable root holding p and p itself, or
// "".
func linkAbove(p string, roots []string, lstat func(string) (fs.FileInfo, error)) string {
	root := ""
	for _, r := range roots {
		if Within(p, r) && len(r) > len(root) {
			root = r
		}
	}
	if root == "" || p == root {
		return ""
	}
	rest := strings.TrimPrefix(p[len(root):], "/")
	at := strings.TrimSuffix(root, "/")
	parts := strings.Split(rest, "/")
	for _, part := range parts[:len(parts)-1] {
		at += "/" + part
		fi, err := lstat(at)
		if err != nil {
			return ""
		}
		if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
			return at
		}
	}
	return ""
}

// ErrPortsNeedTCPRules is why a landlock wrap with loopback ports (the
// proxied network, allowed local ports) cannot run on a kernel without
// Landlock's TCP rules: seccomp would have to let TCP sockets through, and
// nothing would then hold their connects to those ports.
func ErrPortsNeedTCPRules(abi int) error {
	return fmt.Errorf("the proxied network and allowed local ports need Landlock's TCP rules (ABI %d; this kernel has %d)", ABINetTCP, abi)
}

// LandlockPortGap is the gap of loopback ports under landlock: a Landlock
// port rule holds for every address, so the command can connect to those
// ports on any host, not only on loopback. nil without ports.
func LandlockPortGap(s Spec) []Gap {
	if len(s.Ports) == 0 {
		return nil
	}
	ports := make([]string, len(s.Ports))
	for i, p := range s.Ports {
		ports[i] = fmt.Sprint(p)
	}
	what := "allowed local port"
	if s.Network == NetworkProxied {
		what = "the domain proxy's port first, then the allowed local ports"
	}
	return []Gap{{AreaNet, fmt.Sprintf("TCP connects to port %s (%s) are allowed to every address, not only loopback: a Landlock port rule cannot tell addresses apart (needs the namespaces runner); the proxy's port is picked at random for each wrap, and no other socket, UDP or DNS is allowed", strings.Join(ports, ", "), what)}}
}

// UnixSocketGaps is the gap of allowing some pathname UNIX sockets under
// network deny on a kernel whose Landlock cannot confine UNIX socket
// lookups by path: both Linux runners then have to let the command create
// UNIX sockets at all, and every socket the user may write to is reachable.
// With no socket allowed, seccomp refuses UNIX sockets outright on any
// kernel, and under network allow every socket is open anyway (see
// AllowNetworkGaps).
func UnixSocketGaps(abi int, s Spec) []Gap {
	if s.Network == NetworkAllow || len(s.UnixSockets) == 0 || abi >= ABIResolveUnix {
		return nil
	}
	return []Gap{{AreaIPC, fmt.Sprintf("allowed UNIX sockets cannot be confined by path on Landlock ABI %d (needs ABI %d): every pathname UNIX socket the user can write to is reachable, not only %s", abi, ABIResolveUnix, strings.Join(s.UnixSockets, ", "))}}
}

// AllowNetworkGaps are the gaps of network allow on every Linux runner: a
// UNIX socket reaches the host's daemons, some of which act outside the
// sandbox on the command's behalf.
func AllowNetworkGaps(s Spec) []Gap {
	if s.Network != NetworkAllow {
		return nil
	}
	return []Gap{{AreaIPC, "network allow also opens UNIX sockets to host daemons (D-Bus and systemd --user start processes outside the sandbox, ssh-agent signs with the user's keys, Docker's socket is root)"}}
}

// NamespaceGaps returns the gaps of the namespaces runner for s: what a
// mount namespace cannot bind because it is a symlink, or is not there
// while no guard refuses its creation (s.Guarded empty)
// (mount(2) follows a final symlink and cannot cover the link itself), and
// a read-only file with more than one hard link (a bind covers one name).
// lstat is os.Lstat, or a fake in tests. Provider and launcher call it on
// the same spec, so the report matches what the launcher does.
//
// abi is the kernel's Landlock ABI: the namespaces launcher confines
// allowed UNIX sockets with Landlock where the kernel can (UnixSocketGaps).
func NamespaceGaps(s Spec, abi int, lstat func(string) (fs.FileInfo, error)) []Gap {
	var gaps []Gap
	for _, p := range s.ReadOnly {
		fi, err := lstat(p)
		switch {
		case err != nil && len(s.Guarded) > 0:
			// Not there, and the launcher's guard refuses creating it
			// (the provider lists every missing one in Guarded).
		case err != nil:
			gaps = append(gaps, Gap{AreaFS, fmt.Sprintf("read-only subpath %s does not exist, so it cannot be bound read-only: the command can create it", p)})
		case fi.Mode()&fs.ModeSymlink != 0:
			gaps = append(gaps, Gap{AreaFS, fmt.Sprintf("read-only subpath %s is a symlink: what it points to is kept read-only, but the link itself can be replaced inside its writable parent", p)})
		case fi.Mode().IsRegular() && LinkCount(fi) > 1:
			// A bind covers this name only: another name for the same
			// inode inside a writable root writes it (the launcher with
			// -full refuses it again on the file it opens).
			gaps = append(gaps, Gap{AreaFS, fmt.Sprintf("read-only subpath %s has %d hard links: it is bound read-only by this name only, and another name for the same file inside a writable root stays writable", p, LinkCount(fi))})
		}
	}
	for _, g := range s.Guarded {
		above := linkAbove(g, s.Writable, lstat)
		if above == "" {
			continue
		}
		if fi, err := lstat(above); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			gaps = append(gaps, Gap{AreaFS, fmt.Sprintf("protected name %s cannot exist while %s is not a directory: the guard does not cover it, so the command can replace %s with a directory holding it", g, above, above)})
			continue
		}
		gaps = append(gaps, Gap{AreaFS, fmt.Sprintf("protected name %s does not exist and lies behind the symlink %s: the guard does not follow it, so the command can create what it leads to", g, above)})
	}
	for _, d := range s.DenyRead {
		if !WithinAny(d, s.Writable) {
			continue
		}
		if _, err := lstat(d); err != nil {
			gaps = append(gaps, Gap{AreaFS, fmt.Sprintf("deny-read path %s does not exist inside a writable root: if the command creates it, it can read it", d)})
		}
	}
	if abi < ABIScopes {
		gaps = append(gaps, Gap{AreaIPC, fmt.Sprintf("Landlock ABI %d cannot scope signals (needs ABI %d): the command can signal every process of its spawner's process group (kill(0)), the spawner included unless it gave the launcher a group of its own", abi, ABIScopes)})
	}
	gaps = append(gaps, UnixSocketGaps(abi, s)...)
	return append(gaps, AllowNetworkGaps(s)...)
}
