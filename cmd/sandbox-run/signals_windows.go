package main

import (
	"os"
	"syscall"
)

// forwardedSignals are the signals the CLI catches; passOn says which of
// them go on to the command.
var forwardedSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// passOn reports whether a signal the CLI received is sent on to the
// command: Ctrl-C reaches the whole console group, the command included,
// so only SIGTERM is.
func passOn(s os.Signal) bool { return s == syscall.SIGTERM }

// dieOf never runs on Windows, where no process dies of a signal.
func dieOf(sig syscall.Signal) { os.Exit(128 + int(sig)) }
