package procsig

import (
	"os"
	"syscall"
)

// Forwarded are the signals a stand-in for the command catches; PassOn
// says which of them go on to the command.
var Forwarded = []os.Signal{os.Interrupt, syscall.SIGTERM}

// PassOn reports whether a signal the process received is sent on to the
// command: Ctrl-C reaches the whole console group, the command included,
// so only SIGTERM is.
func PassOn(s os.Signal) bool { return s == syscall.SIGTERM }

// DieOf never runs on Windows, where no process dies of a signal.
func DieOf(sig syscall.Signal) { os.Exit(128 + int(sig)) }
