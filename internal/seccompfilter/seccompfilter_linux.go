// Package seccompfilter is the one definition of the launchers' seccomp
// filters. The landlock launcher builds and loads its filter in-process
// (Build); the namespaces launcher's stage 2 is C, so the provider compiles
// that filter (BPF) and hands the program to it in vocab.SeccompEnv.
package seccompfilter

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// Profile selects the runner's variant of the filter.
type Profile int

const (
	// Landlock is the landlock runner's filter.
	Landlock Profile = iota
	// Namespaces is the namespaces runner's filter.
	Namespaces
)

// allowedFamilies are the socket families socket(2) may create under
// network deny:
//
//   - namespaces: IP and netlink, which the sandbox's own network namespace
//     holds in (it has only its own loopback). Every other family is
//     refused: UNIX sockets reach the host's daemons through the file
//     system, vsock and the like are not namespaced at all.
//   - landlock: none.
//   - both: UNIX when the spec allows some UNIX sockets by path; the
//     launcher then confines their lookups with Landlock where the kernel
//     can (vocab.UnixSocketGaps says where it cannot).
func allowedFamilies(s vocab.Spec, profile Profile) map[int]bool {
	allowed := map[int]bool{}
	if profile == Namespaces {
		allowed[unix.AF_INET], allowed[unix.AF_INET6], allowed[unix.AF_NETLINK] = true, true, true
	}
	if len(s.UnixSockets) > 0 {
		allowed[unix.AF_UNIX] = true
	}
	return allowed
}

// denySocketFamilies refuses socket(2) for every family but allowed: one
// rule per family below AF_MAX, and one for AF_MAX and above (which also
// catches a family with high bits set, that the kernel would truncate).
func denySocketFamilies(f *seccomp.ScmpFilter, act seccomp.ScmpAction, allowed map[int]bool) error {
	sc, err := seccomp.GetSyscallFromName("socket")
	if err != nil {
		return fmt.Errorf("seccomp: socket: %w", err)
	}
	rule := func(op seccomp.ScmpCompareOp, v uint64) error {
		c, err := seccomp.MakeCondition(0, op, v)
		if err == nil {
			err = f.AddRuleConditional(sc, act, []seccomp.ScmpCondition{c})
		}
		if err != nil {
			return fmt.Errorf("seccomp: socket family rule: %w", err)
		}
		return nil
	}
	for fam := 0; fam < unix.AF_MAX; fam++ {
		if !allowed[fam] {
			if err := rule(seccomp.CompareEqual, uint64(fam)); err != nil {
				return err
			}
		}
	}
	return rule(seccomp.CompareGreaterEqual, unix.AF_MAX)
}

// namespaceDenied are refused (EPERM) under both runners: what only
// matters with capabilities (which the command does not have, but the
// kernel's own checks are not the only line), kernel keyrings (Kerberos
// caches, cached passphrases), BPF and perf, and file handles.
var namespaceDenied = []string{
	"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
	"move_mount", "open_tree", "mount_setattr", "setns", "keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "init_module", "finit_module", "delete_module", "kexec_load",
	"kexec_file_load", "open_by_handle_at", "name_to_handle_at", "swapon", "swapoff", "reboot",
	"syslog", "acct", "quotactl", "userfaultfd", "iopl", "ioperm",
}

// Build builds the launcher's filter: everything is allowed except
//
//   - in every mode: ioctl TIOCSTI and TIOCLINUX (pushing keystrokes into
//     the controlling terminal, which runs them after the sandbox exits);
//   - under network deny: socket(2) of every family, UNIX included unless
//     the spec allows UNIX sockets by path (a UNIX socket reaches host
//     daemons: D-Bus and systemd --user can start processes outside the
//     sandbox, ssh-agent signs with the user's keys, Docker's socket is
//     root), and io_uring, whose socket and connect operations never pass
//     through the socket syscalls. socketpair(2) stays allowed: it
//     connects nothing outside the process tree.
//
// Both also refuse (namespaceDenied) mounts, new user namespaces (where
// capabilities come back), entering other namespaces, kernel keyrings,
// BPF, perf, module and kexec loading, and file handles
// (open_by_handle_at walks past any mount). Under network deny the
// namespaces profile allows IP and netlink sockets, which its network
// namespace holds in; the landlock profile allows no socket at all.
//
// Only the native architecture is allowed: a syscall through another table
// (int 0x80, x32) kills the process, so the 32-bit socketcall(2) cannot be
// used to go around the rules.
func Build(s vocab.Spec, profile Profile) (*seccomp.ScmpFilter, error) {
	f, err := seccomp.NewFilter(seccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("seccomp: new filter: %w", err)
	}
	if err := addRules(f, s, profile); err != nil {
		f.Release()
		return nil, err
	}
	return f, nil
}

var (
	eperm  = seccomp.ActErrno.SetReturnCode(int16(unix.EPERM))
	eacces = seccomp.ActErrno.SetReturnCode(int16(unix.EACCES))
	enosys = seccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS))
)

// addRules fills f; see seccompFilter for what and why.
func addRules(f *seccomp.ScmpFilter, s vocab.Spec, profile Profile) error {
	if err := f.SetBadArchAction(seccomp.ActKillProcess); err != nil {
		return fmt.Errorf("seccomp: bad-arch action: %w", err)
	}
	if err := f.SetNoNewPrivsBit(true); err != nil {
		return fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	add := func(name string, act seccomp.ScmpAction, conds ...seccomp.ScmpCondition) error {
		sc, err := seccomp.GetSyscallFromName(name)
		if err != nil {
			return fmt.Errorf("seccomp: %s: %w", name, err)
		}
		if len(conds) == 0 {
			err = f.AddRule(sc, act)
		} else {
			err = f.AddRuleConditional(sc, act, conds)
		}
		if err != nil {
			return fmt.Errorf("seccomp: %s rule: %w", name, err)
		}
		return nil
	}
	cond := func(arg uint, op seccomp.ScmpCompareOp, values ...uint64) seccomp.ScmpCondition {
		c, err := seccomp.MakeCondition(arg, op, values...)
		if err != nil {
			// Only reachable with an invalid operator, which the calls below
			// never pass; the rule then fails to add and says so.
			return seccomp.ScmpCondition{}
		}
		return c
	}
	for _, req := range []uint64{unix.TIOCSTI, unix.TIOCLINUX} {
		// The request is compared on its low 32 bits: the kernel reads it as
		// an unsigned int, so high bits set by a caller must not hide it.
		if err := add("ioctl", eperm, cond(1, seccomp.CompareMaskedEqual, 0xffffffff, req)); err != nil {
			return err
		}
	}
	if !s.AllowNetwork {
		for _, name := range []string{"io_uring_setup", "io_uring_enter", "io_uring_register"} {
			if err := add(name, eacces); err != nil {
				return err
			}
		}
		if allowed := allowedFamilies(s, profile); len(allowed) > 0 {
			if err := denySocketFamilies(f, eacces, allowed); err != nil {
				return err
			}
		} else if err := add("socket", eacces); err != nil {
			return err
		}
	}
	for _, name := range namespaceDenied {
		if err := add(name, eperm); err != nil {
			return err
		}
	}
	// Calls that act on another process by pid, which Landlock does not
	// scope: resource limits (prlimit64 can give the user's editor a
	// one-byte file-size limit), priorities, CPU affinity, scheduling, I/O
	// priority. Each is allowed only on the caller itself (pid or who 0,
	// and for setpriority and ioprio_set only the single-process form).
	for _, r := range []struct {
		name string
		arg  uint
	}{
		{"prlimit64", 0}, {"sched_setaffinity", 0}, {"sched_setscheduler", 0},
		{"sched_setparam", 0}, {"sched_setattr", 0}, {"setpriority", 1}, {"ioprio_set", 1},
	} {
		if err := add(r.name, eperm, cond(r.arg, seccomp.CompareNotEqual, 0)); err != nil {
			return err
		}
	}
	const prioProcess, ioprioWhoProcess = 0, 1
	if err := add("setpriority", eperm, cond(0, seccomp.CompareNotEqual, prioProcess)); err != nil {
		return err
	}
	if err := add("ioprio_set", eperm, cond(0, seccomp.CompareNotEqual, ioprioWhoProcess)); err != nil {
		return err
	}
	// New user namespaces (where capabilities come back) through unshare
	// and clone; clone3 hides its flags in memory, so it answers ENOSYS and
	// the C library falls back to clone.
	newuser := cond(0, seccomp.CompareMaskedEqual, unix.CLONE_NEWUSER, unix.CLONE_NEWUSER)
	for _, name := range []string{"unshare", "clone"} {
		if err := add(name, eperm, newuser); err != nil {
			return err
		}
	}
	return add("clone3", enosys)
}

// BPF returns the compiled program of the filter for s, in hex: what the
// namespaces launcher loads with seccomp(2).
func BPF(s vocab.Spec, profile Profile) (string, error) {
	f, err := Build(s, profile)
	if err != nil {
		return "", err
	}
	defer f.Release()
	// seccomp_export_bpf_mem needs libseccomp 2.6; the file form works on
	// 2.5 (Debian bookworm), so export into a memfd and read it back.
	fd, err := unix.MemfdCreate("sandbox-local-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return "", fmt.Errorf("seccomp: export: %w", err)
	}
	mf := os.NewFile(uintptr(fd), "seccomp-bpf")
	defer mf.Close()
	if err := f.ExportBPF(mf); err != nil {
		return "", fmt.Errorf("seccomp: export: %w", err)
	}
	if _, err := mf.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("seccomp: export: %w", err)
	}
	b, err := io.ReadAll(mf)
	if err != nil {
		return "", fmt.Errorf("seccomp: export: %w", err)
	}
	return hex.EncodeToString(b), nil
}
