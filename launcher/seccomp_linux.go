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
// Only the native architecture is allowed: a syscall through another table
// (int 0x80, x32) kills the process, so the 32-bit socketcall(2) cannot be
// used to go around the rules.
func seccompFilter(s vocab.Spec) (*seccomp.ScmpFilter, error) {
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
	if !s.AllowNetwork {
		for _, name := range []string{"socket", "io_uring_setup", "io_uring_enter", "io_uring_register"} {
			sc, err := seccomp.GetSyscallFromName(name)
			if err != nil {
				return fail(name, err)
			}
			if err := f.AddRule(sc, eacces); err != nil {
				return fail(name+" rule", err)
			}
		}
	}
	return f, nil
}
