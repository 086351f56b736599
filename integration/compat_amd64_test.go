//go:build linux && amd64

package integration

import (
	"runtime/debug"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// sysCreat is creat(2), which amd64 has (arm64 has only openat).
const sysCreat = unix.SYS_CREAT

// createVerbs are the tool's verbs that create a file with a mode.
var createVerbs = []string{"create", "creat", "mknod-reg"}

func int80(trap, a1, a2, a3 uintptr) uintptr

// Numbers of socket(2) in the other syscall tables of an x86_64 kernel.
const (
	i386Socket = 359
	x32Bit     = 0x40000000
)

// compatSocket makes a TCP socket through the 32-bit table (int 0x80) or
// the x32 table, the classic ways around a filter written for x86_64.
func compatSocket(table string) (answer string) {
	switch table {
	case "i386":
		// Some hypervisors' kernels (this project's VMs among them) answer
		// int 0x80 with a general protection fault even with IA32
		// emulation built in: then no 32-bit table is reachable at all.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if recover() != nil {
				answer = "int 0x80 faults (general protection)"
			}
		}()
		r := int64(int32(int80(i386Socket, unix.AF_INET, unix.SOCK_STREAM, 0)))
		if r < 0 {
			return unix.ErrnoName(syscall.Errno(-r))
		}
		unix.Close(int(r))
		return "ok"
	case "x32":
		fd, _, e := unix.RawSyscall(x32Bit|unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 0)
		if e != 0 {
			return unix.ErrnoName(e)
		}
		unix.Close(int(fd))
		return "ok"
	}
	return "error: table"
}

func TestOtherSyscallTablesCannotOpenSockets(t *testing.T) {
	for _, table := range []string{"i386", "x32"} {
		t.Run(table, func(t *testing.T) {
			control := hostToolRaw(t, "compat-socket", table)
			if control != "ok" {
				t.Skipf("this kernel has no %s syscall table (unconfined: %s): nothing to get around", table, control)
			}
			forEachRunner(t, func(t *testing.T, s *sbx) {
				r := s.run(s.policy(), self(t), toolArg, "compat-socket", table)
				answer := strings.TrimSpace(r.stdout)
				killed := r.code == 128+int(syscall.SIGSYS)
				if !killed && answer != "EACCES" && answer != "EPERM" && answer != "ENOSYS" {
					t.Errorf("socket through the %s table under network deny: exit %d, %q; want the process killed or refused", table, r.code, answer)
				}
			})
		})
	}
}
