//go:build unix && !linux

package procsig

import (
	"os/signal"
	"syscall"
)

// defaultAction gives sig its default action, as far as the Go runtime
// lets it (a SIGQUIT still ends in its goroutine dump here).
func defaultAction(sig syscall.Signal) { signal.Reset(sig) }

// noCoreDump: RLIMIT_CORE, set by DieOf, is enough here.
func noCoreDump() {}

// raise sends sig to this process.
func raise(sig syscall.Signal) { syscall.Kill(syscall.Getpid(), sig) }
