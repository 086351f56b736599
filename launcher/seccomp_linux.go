package launcher

import (
	"fmt"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// seccompFilter builds the launcher's filter: everything is allowed except
//
//   - in every mode: ioctl TIOCSTI and TIOCLINUX (pushing keystrokes into
//     the controlling terminal, which runs them after the sandbox exits);
//   - under network deny: socket(2) of every family, UNIX included (a UNIX
//     socket reaches host daemons: D-Bus and systemd --user can start
//     processes outside the sandbox, ssh-agent signs with the user's keys,
//     Docker's socket is root), and io_uring, whose socket and connect
//     operations never pass through the socket syscalls. socketpair(2)
//     stays allowed: it connects nothing outside the process tree.
//
// The namespaces profile (seccompNamespaces) also refuses what only
// matters with the capabilities a user namespace gives: mounts, new user
// namespaces, entering other namespaces, kernel keyrings, BPF, module and
// kexec loading, file handles (open_by_handle_at walks past any mount);
// and, under network deny, only UNIX sockets (the network namespace holds
// IP in).
//
// Only the native architecture is allowed: a syscall through another table
// (int 0x80, x32) kills the process, so the 32-bit socketcall(2) cannot be
// used to go around the rules.
// seccompProfile selects the runner's variant of the filter.
type seccompProfile int

const (
	seccompLandlock seccompProfile = iota
	seccompNamespaces
)

// namespaceDenied are refused (EPERM) under the namespaces runner.
var namespaceDenied = []string{
	"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
	"move_mount", "open_tree", "mount_setattr", "setns", "keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "init_module", "finit_module", "delete_module", "kexec_load",
	"kexec_file_load", "open_by_handle_at", "name_to_handle_at", "swapon", "swapoff", "reboot",
	"syslog", "acct", "quotactl", "userfaultfd", "iopl", "ioperm",
}

func seccompFilter(s vocab.Spec, profile seccompProfile) (*seccomp.ScmpFilter, error) {
	f, err := seccomp.NewFilter(seccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("seccomp: new filter: %w", err)
	}
	fail := func(step string, err error) (*seccomp.ScmpFilter, error) {
		f.Release()
		return nil, fmt.Errorf("seccomp: %s: %w", step, err)
	}
	if err := f.SetBadArchAction(seccomp.ActKillProcess); err != nil {
		return fail("bad-arch action", err)
	}
	if err := f.SetNoNewPrivsBit(true); err != nil {
		return fail("no_new_privs", err)
	}
	eperm := seccomp.ActErrno.SetReturnCode(int16(unix.EPERM))
	eacces := seccomp.ActErrno.SetReturnCode(int16(unix.EACCES))

	ioctl, err := seccomp.GetSyscallFromName("ioctl")
	if err != nil {
		return fail("ioctl", err)
	}
	for _, req := range []uint64{unix.TIOCSTI, unix.TIOCLINUX} {
		// The request is compared on its low 32 bits: the kernel reads it as
		// an unsigned int, so high bits set by a caller must not hide it.
		cond, err := seccomp.MakeCondition(1, seccomp.CompareMaskedEqual, 0xffffffff, req)
		if err != nil {
			return fail("ioctl condition", err)
		}
		if err := f.AddRuleConditional(ioctl, eperm, []seccomp.ScmpCondition{cond}); err != nil {
			return fail("ioctl rule", err)
		}
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
	if !s.AllowNetwork {
		for _, name := range []string{"io_uring_setup", "io_uring_enter", "io_uring_register"} {
			if err := add(name, eacces); err != nil {
				f.Release()
				return nil, err
			}
		}
		var conds []seccomp.ScmpCondition
		if profile == seccompNamespaces {
			// The network namespace has only its own loopback: IP sockets
			// reach nothing outside. UNIX sockets still reach the host's
			// daemons through the file system, so those are refused.
			c, err := seccomp.MakeCondition(0, seccomp.CompareEqual, unix.AF_UNIX)
			if err != nil {
				return fail("socket condition", err)
			}
			conds = append(conds, c)
		}
		if err := add("socket", eacces, conds...); err != nil {
			f.Release()
			return nil, err
		}
	}
	if profile == seccompNamespaces {
		for _, name := range namespaceDenied {
			if err := add(name, eperm); err != nil {
				f.Release()
				return nil, err
			}
		}
		// New user namespaces (where capabilities come back) through
		// unshare and clone; clone3 hides its flags in memory, so it answers
		// ENOSYS and the C library falls back to clone.
		newuser, err := seccomp.MakeCondition(0, seccomp.CompareMaskedEqual, unix.CLONE_NEWUSER, unix.CLONE_NEWUSER)
		if err != nil {
			return fail("clone condition", err)
		}
		for _, name := range []string{"unshare", "clone"} {
			if err := add(name, eperm, newuser); err != nil {
				f.Release()
				return nil, err
			}
		}
		if err := add("clone3", seccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS))); err != nil {
			f.Release()
			return nil, err
		}
	}
	return f, nil
}
