//go:build unix

package main

import (
	"os"
	"syscall"
)

// terminalSignals reach the whole foreground process group; passedSignals
// come from a process that meant the CLI (see runReported).
var (
	terminalSignals = []os.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP}
	passedSignals   = []os.Signal{syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2}
)
