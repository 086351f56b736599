//go:build cgo

package main

import (
	"testing"

	"github.com/bo-agent/sandbox-local/internal/seccompfilter/key"
	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// run evaluates program (as compile returns it for t) on one system call
// the way the kernel's seccomp does, with only the instructions libseccomp
// and prefix emit, and returns the filter's answer.
func run(tb testing.TB, t target, program []byte, arch uint32, nr int32, args ...uint64) uint32 {
	tb.Helper()
	var data [64]byte // struct seccomp_data
	t.order.PutUint32(data[0:], uint32(nr))
	t.order.PutUint32(data[4:], arch)
	for i, a := range args {
		t.order.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(program)/8; pc++ {
		b := program[8*pc : 8*pc+8]
		code, jt, jf, k := t.order.Uint16(b[0:2]), b[2], b[3], t.order.Uint32(b[4:8])
		jump := func(cond bool) {
			if cond {
				pc += int(jt)
			} else {
				pc += int(jf)
			}
		}
		switch code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = t.order.Uint32(data[k:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= k
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(k)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			jump(acc == k)
		case unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K:
			jump(acc > k)
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			jump(acc >= k)
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			jump(acc&k != 0)
		case unix.BPF_RET | unix.BPF_K:
			return k
		default:
			tb.Fatalf("instruction %d: opcode %#x not interpreted", pc, code)
		}
	}
	tb.Fatal("the program ran off its end")
	return 0
}

// The programs for each architecture, cross-compiled or not, answer as
// the definition says: each call by its number on that architecture, and
// every other architecture (AArch32, i386, x32) killed.
func TestProgramsPerArch(t *testing.T) {
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		kill   = unix.SECCOMP_RET_KILL_PROCESS
		notify = unix.SECCOMP_RET_USER_NOTIF
		eacces = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	other := map[string][]uint32{
		"amd64": {unix.AUDIT_ARCH_I386},
		"arm64": {unix.AUDIT_ARCH_ARM},
	}
	for _, tg := range targets {
		t.Run(tg.goarch, func(t *testing.T) {
			nr := func(name string) int32 {
				n, err := seccomp.GetSyscallFromNameByArch(name, tg.arch)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return int32(n)
			}
			for _, c := range []struct {
				k    key.Key
				call string
				nr   int32 // when call is ""
				args []uint64
				want uint32
			}{
				{key.Key{Profile: Landlock}, "getpid", 0, nil, allow},
				{key.Key{Profile: Landlock}, "socket", 0, []uint64{unix.AF_INET, unix.SOCK_STREAM}, eacces},
				{key.Key{Profile: Landlock}, "socket", 0, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, eacces},
				{key.Key{Profile: Landlock, UnixSockets: true}, "socket", 0, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, allow},
				{key.Key{Profile: Landlock, TCPPorts: true}, "socket", 0, []uint64{unix.AF_INET, unix.SOCK_STREAM}, allow},
				{key.Key{Profile: Landlock, TCPPorts: true}, "socket", 0, []uint64{unix.AF_INET, unix.SOCK_DGRAM}, eacces},
				{key.Key{Profile: Landlock, AllowNetwork: true}, "socket", 0, []uint64{unix.AF_INET, unix.SOCK_DGRAM}, allow},
				{key.Key{Profile: Landlock}, "fchmodat", 0, []uint64{0, 0, 0o644}, notify},
				{key.Key{Profile: Landlock}, "fchownat", 0, nil, notify},
				{key.Key{Profile: Landlock}, "", sysFchmodat2, nil, notify},
				{key.Key{Profile: Landlock}, "", sysSetxattrat, nil, enosys},
				{key.Key{Profile: Landlock}, "", sysRemovexattrat, nil, enosys},
				{key.Key{Profile: Landlock}, "openat", 0, []uint64{0, 0, unix.O_CREAT, 0o4755}, eperm},
				{key.Key{Profile: Landlock}, "openat", 0, []uint64{0, 0, unix.O_CREAT, 0o755}, allow},
				{key.Key{Profile: Landlock}, "ioctl", 0, []uint64{0, unix.TIOCSTI}, eperm},
				{key.Key{Profile: Landlock}, "unshare", 0, []uint64{unix.CLONE_NEWUSER}, eperm},
				{key.Key{Profile: Landlock}, "clone3", 0, nil, enosys},
				{key.Key{Profile: Namespaces}, "socket", 0, []uint64{unix.AF_INET, unix.SOCK_DGRAM}, allow},
				{key.Key{Profile: Namespaces}, "socket", 0, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, eacces},
				{key.Key{Profile: Namespaces}, "", sysSetxattrat, nil, allow},
				{key.Key{Profile: Namespaces}, "", sysFchmodat2, []uint64{0, 0, 0o4755}, eperm},
				{key.Key{Profile: Namespaces}, "fchmodat", 0, []uint64{0, 0, 0o2755}, eperm},
				{key.Key{Profile: Namespaces}, "mount", 0, nil, eperm},
				{key.Key{Profile: Namespaces}, "prlimit64", 0, []uint64{1}, eperm},
				{key.Key{Profile: Namespaces}, "prlimit64", 0, []uint64{0}, allow},
			} {
				program, err := compile(c.k, tg)
				if err != nil {
					t.Fatal(err)
				}
				n := c.nr
				if c.call != "" {
					n = nr(c.call)
				}
				if got := run(t, tg, program, tg.audit, n, c.args...); got != c.want {
					t.Errorf("%+v: %s (%d) %v: %#x, want %#x", c.k, c.call, n, c.args, got, c.want)
				}
				for _, a := range other[tg.goarch] {
					if got := run(t, tg, program, a, n, c.args...); got != kill {
						t.Errorf("%+v: %s from arch %#x: %#x, want kill", c.k, c.call, a, got)
					}
				}
				if tg.goarch == "amd64" {
					if got := run(t, tg, program, tg.audit, n|0x40000000, c.args...); got != kill {
						t.Errorf("%+v: %s through x32: %#x, want kill", c.k, c.call, got)
					}
				}
			}
		})
	}
}
