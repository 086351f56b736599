//go:build unix

// Package procsig is how a process that stands for a sandboxed command
// (sandbox-run, the pure-Go landlock relay) treats signals: which ones it
// catches (Forwarded), which of those it passes on to the command
// (PassOn), and how it ends by the signal the command died of (DieOf).
package procsig

import (
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Forwarded are the signals a stand-in for the command catches; PassOn
// says which of them go on to the command.
var Forwarded = []os.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2}

// PassOn reports whether a signal the stand-in received is sent on to
// the command. SIGTERM, SIGUSR1 and SIGUSR2 always are: only a process
// sends them, and it meant the stand-in. SIGINT, SIGQUIT and SIGHUP also
// come from the terminal, which sends them to its whole foreground process
// group, the command included (it is in the stand-in's group): those are
// not passed on, or the command would get them twice. Which one it was is
// not known here (Go gives no si_code), so the stand-in's situation
// decides: when one of its stdin, stdout and stderr is its controlling
// terminal and its process group is that terminal's foreground group, the
// terminal may have sent it, and it is not passed on; a SIGHUP while one
// of them is a terminal that hung up (the kernel sent it to the foreground
// group then) neither. Otherwise (no terminal, or the stand-in runs in the
// background) a process sent it, and it is passed on.
func PassOn(s os.Signal) bool {
	switch s {
	case syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP:
		return !terminalSent(s == syscall.SIGHUP)
	}
	return true
}

// terminalSent reports whether the terminal may have sent the signal the
// stand-in just received to its process group (see PassOn).
func terminalSent(hangup bool) bool {
	own := unix.Getpgrp()
	for fd := 0; fd <= 2; fd++ {
		pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		if err == nil && pg == own || hangup && errors.Is(err, unix.EIO) {
			return true
		}
	}
	return false
}

// DieOf ends the stand-in by sig, the signal the command died of, as a real
// death by that signal: the default action restored, no core dump (the
// command's was its own), then raised. Should it survive it, it exits
// 128+N.
func DieOf(sig syscall.Signal) {
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0})
	noCoreDump()
	defaultAction(sig)
	raise(sig)
	// A signal that dumps core (SIGQUIT, SIGSEGV) is acted on by the thread
	// that takes it, not at once for the whole process: give it that time.
	time.Sleep(time.Second)
	os.Exit(128 + int(sig))
}
