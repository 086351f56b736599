//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// forwardedSignals are the signals the CLI catches; passOn says which of
// them go on to the command.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2}

// passOn reports whether a signal the CLI received is sent on to the
// command. SIGTERM, SIGUSR1 and SIGUSR2 always are: only a process sends
// them, and it meant the CLI. SIGINT, SIGQUIT and SIGHUP also come from the
// terminal, which sends them to its whole foreground process group, the
// command included (it is in the CLI's group): those are not passed on, or
// the command would get them twice. Which one it was is not known here (Go
// gives no si_code), so the CLI's situation decides: when one of its stdin,
// stdout and stderr is its controlling terminal and the CLI's process
// group is that terminal's foreground group, the terminal may have sent
// it, and it is not passed on; a SIGHUP while one of them is a terminal
// that hung up (the kernel sent it to the foreground group then) neither.
// Otherwise (no terminal, or the CLI runs in the background) a process
// sent it, and it is passed on.
func passOn(s os.Signal) bool {
	switch s {
	case syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP:
		return !terminalSent(s == syscall.SIGHUP)
	}
	return true
}

// terminalSent reports whether the terminal may have sent the signal the
// CLI just received to the CLI's process group (see passOn).
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

// dieOf ends the CLI by sig, the signal the command died of, as a real
// death by that signal: the default action restored, no core dump (the
// command's was its own), then raised. Should the CLI survive it, it exits
// 128+N.
func dieOf(sig syscall.Signal) {
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0})
	noCoreDump()
	defaultAction(sig)
	raise(sig)
	// A signal that dumps core (SIGQUIT, SIGSEGV) is acted on by the thread
	// that takes it, not at once for the whole process: give it that time.
	time.Sleep(time.Second)
	os.Exit(128 + int(sig))
}
