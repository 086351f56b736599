//go:build linux && !cgo

package integration

import (
	"context"
	"encoding/json"
	"unsafe"

	"github.com/bo-agent/sandbox-local/sandbox"
	"golang.org/x/sys/unix"
)

// diagnoseWithoutUserns refuses new user namespaces to this process and its
// children the way Docker's default seccomp profile does (unshare and clone
// with CLONE_NEWUSER fail with EPERM, clone3 with ENOSYS), then reports
// what a fresh provider selects, as JSON. Without cgo there is no
// libseccomp: the few instructions are written out (every thread, TSYNC).
// In such a build the namespaces runner is unavailable anyway (no ns-run):
// the test then reads that reason instead (usernsRefusal).
func diagnoseWithoutUserns() string {
	const (
		nrOff   = 0
		arg0Off = 16 // args[0], its low 32 bits on a little-endian machine
		allow   = unix.SECCOMP_RET_ALLOW
		eperm   = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys  = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	jeq := func(v uint32, t, f uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: v, Jt: t, Jf: f}
	}
	ret := func(v uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v} }
	prog := []unix.SockFilter{
		ld(nrOff),
		jeq(unix.SYS_CLONE3, 0, 1), ret(enosys),
		jeq(unix.SYS_UNSHARE, 1, 0),
		jeq(unix.SYS_CLONE, 0, 4),
		ld(arg0Off),
		{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: unix.CLONE_NEWUSER},
		jeq(unix.CLONE_NEWUSER, 0, 1), ret(eperm),
		ret(allow),
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return "error: " + err.Error()
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return "error: " + e.Error()
	}
	d := sandbox.New(sandbox.Config{}).Diagnose(context.Background())
	b, _ := json.Marshal(d)
	return string(b)
}

// usernsRefusal is what the namespaces candidate's reason names: in a
// build without cgo ns-run is not in the binary at all.
const usernsRefusal = "CGO_ENABLED=0"
