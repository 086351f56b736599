package launcher

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/llrights"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockConfig is the ruleset for s: every filesystem right handled (so
// all that is not granted is denied); TCP bind and connect handled under
// network deny and proxied, with connect allowed only to s.Ports (the
// proxy's, allowed local ports; landlockRuleset adds those rules); signals always scoped to the sandbox,
// abstract UNIX sockets too under network deny; and under network deny
// with UNIX sockets allowed by path, the resolution of pathname UNIX
// sockets (granted on exactly those paths by planFS). Best effort: on an older
// ABI go-landlock drops what the kernel lacks, and the launcher says so
// with the notice line the provider made (-notice: vocab.LandlockKernelGaps).
func landlockConfig(s vocab.Spec) landlock.Config {
	c := landlock.Config{
		HandledAccessFS: landlock.AccessFSSet(llrights.HandledFS),
		Scoped:          landlock.ScopedSet(ll.ScopeSignal),
	}
	if s.Network != vocab.NetworkAllow {
		c.HandledAccessNet = landlock.AccessNetSet(ll.AccessNetBindTCP | ll.AccessNetConnectTCP)
		c.Scoped |= landlock.ScopedSet(ll.ScopeAbstractUnixSocket)
		if len(s.UnixSockets) > 0 {
			// seccomp lets UNIX sockets be created only in this case;
			// Landlock (ABI 9) then limits which ones they reach.
			c.HandledAccessFS |= landlock.AccessFSSet(ll.AccessFSResolveUnix)
		}
	}
	return c.BestEffort()
}

// landlockRuleset builds the ruleset fd for s without enforcing it. The
// path rules are added from descriptors the launcher opened itself (see
// addGrant), not by path through go-landlock, which follows symlinks.
func landlockRuleset(s vocab.Spec, abi int) (int, error) {
	plan := planFS(s, osLister{}, stdPTYs())
	config := landlockConfig(s)
	fd, _, err := config.NewRulesetFD()
	if err != nil {
		return -1, fmt.Errorf("landlock ruleset: %w", err)
	}
	if fd < 0 {
		return -1, fmt.Errorf("landlock ruleset: the kernel has no Landlock")
	}
	rights := uint64(config.HandledAccessFS) & llrights.FSRightsOf(abi)
	for _, g := range plan {
		if err := addGrant(fd, g, rights); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("landlock ruleset: %w", err)
		}
	}
	if len(s.Ports) > 0 && abi < vocab.ABINetTCP {
		// Without TCP rules the sockets seccomp lets through for the ports
		// would reach every address and port.
		unix.Close(fd)
		return -1, fmt.Errorf("landlock ruleset: %w", vocab.ErrPortsNeedTCPRules(abi))
	}
	for _, port := range s.Ports {
		if err := ll.LandlockAddNetPortRule(fd, &ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(port)}, 0); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("landlock ruleset: connect to port %d: %w", port, err)
		}
	}
	return fd, nil
}

// openStrict opens the absolute, clean path p as an O_PATH descriptor
// without following a symlink in any component (ELOOP when there is one).
// Where openat2 is refused (a container's seccomp profile older than the
// call), it walks p one component at a time instead.
func openStrict(p string, flags int) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{
		Flags:   uint64(unix.O_PATH | unix.O_CLOEXEC | flags),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return openByComponents(p, flags)
	}
	return fd, err
}

// openByComponents is openStrict without openat2: each component is opened
// with O_NOFOLLOW beneath the descriptor of the one before, so no symlink
// is followed and nothing is looked up by path twice.
func openByComponents(p string, flags int) (int, error) {
	if !strings.HasPrefix(p, "/") {
		return -1, fmt.Errorf("%s: %w", p, unix.EINVAL)
	}
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	names := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if p == "/" {
		names = nil
	}
	for i, name := range names {
		f := unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i == len(names)-1 {
			f |= flags
		}
		next, err := unix.Openat(dir, name, f, 0)
		unix.Close(dir)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return -1, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(next)
			return -1, unix.ELOOP
		}
		dir = next
	}
	return dir, nil
}

// errSwapped explains an ELOOP from openStrict.
var errSwapped = errors.New("a component is a symlink now, it was not at wrap time")

func swapped(err error) error {
	if errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("%w (%w)", errSwapped, err)
	}
	return err
}

// addGrant adds g to the ruleset from a descriptor opened as g.Class says,
// after checking that it is the kind of object the plan found, so what is
// checked is what the rule is made on:
//
//   - root (writable roots, the temp dir): resolved at Wrap; a symlink in
//     any component, a missing directory or anything else is fatal;
//   - walked (the read grants around deny-read paths): a symlink, another
//     type or nothing there now is not granted (less is read, never more);
//   - socket (allowed UNIX sockets): resolved at Wrap; granted only when
//     what is there now, reached without symlinks, is a socket;
//   - device: followed (only root can change /dev); gone is skipped.
func addGrant(rulesetFD int, g grant, rights uint64) error {
	var fd int
	var err error
	if g.Class == device {
		fd, err = unix.Open(g.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
	} else {
		fd, err = openStrict(g.Path, 0)
	}
	if err != nil {
		switch {
		case g.Class == root:
			return fmt.Errorf("writable root %s: %w", g.Path, swapped(err))
		case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), g.Class != device && errors.Is(err, unix.ELOOP):
			return nil
		}
		return fmt.Errorf("open %s: %w", g.Path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", g.Path, err)
	}
	if isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR; isDir != g.Dir {
		if g.Class == root {
			return fmt.Errorf("writable root %s is not a directory", g.Path)
		}
		return nil // changed since the plan looked
	}
	if g.Class == socket && st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil
	}
	access := g.Access & rights
	if !g.Dir {
		access &= llrights.FileRights
	}
	if access == 0 {
		return nil
	}
	if err := ll.LandlockAddPathBeneathRule(rulesetFD, &ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: access}, 0); err != nil {
		return fmt.Errorf("landlock_add_rule %s: %w", g.Path, err)
	}
	return nil
}

// enterDir makes dir the working directory. It was resolved at Wrap time:
// a symlink on its path now is fatal, so the command never starts in a
// directory another sandbox chose for it.
func enterDir(dir string) error {
	fd, err := openStrict(dir, unix.O_DIRECTORY)
	if err != nil {
		return fmt.Errorf("chdir %s: %w", dir, swapped(err))
	}
	defer unix.Close(fd)
	if err := unix.Fchdir(fd); err != nil {
		return fmt.Errorf("chdir %s: %w", dir, err)
	}
	return nil
}

// stdPTYs returns the /dev/pts terminals behind standard input, output and
// error: the only ones the command may reopen by path.
func stdPTYs() []string {
	var ptys []string
	for fd := 0; fd <= 2; fd++ {
		p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err == nil && strings.HasPrefix(p, "/dev/pts/") && !contains(ptys, p) {
			ptys = append(ptys, p)
		}
	}
	return ptys
}

// restrictThread enforces the ruleset on the calling thread, which must be
// locked (runtime.LockOSThread) and must be the one that execs: a Landlock
// domain and a seccomp filter pass from the execing thread to the new
// program. no_new_privs is set first, as both require.
func restrictThread(rulesetFD int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(rulesetFD, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}
