package procsig

import (
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// defaultAction gives sig its default action in the kernel itself: the Go
// runtime's own handler would turn SIGQUIT (and SIGABRT, SIGSEGV, ...) into
// a goroutine dump and exit status 2 instead of a death by the signal.
// An all-zero sigaction is SIG_DFL with no flags and an empty mask, in
// every architecture's layout.
func defaultAction(sig syscall.Signal) {
	signal.Reset(sig)
	var act [8]uint64
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
}

// noCoreDump keeps a core_pattern that pipes to a program (which
// RLIMIT_CORE does not stop) from being handed the process's memory.
func noCoreDump() {
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// raise sends sig to this very thread, which takes it on its way back
// from the call.
func raise(sig syscall.Signal) {
	runtime.LockOSThread()
	unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
}
