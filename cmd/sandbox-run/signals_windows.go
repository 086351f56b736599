package main

import (
	"os"
	"syscall"
)

// terminalSignals reach the whole console group; passedSignals come from a
// process that meant the CLI (see runReported).
var (
	terminalSignals = []os.Signal{os.Interrupt}
	passedSignals   = []os.Signal{syscall.SIGTERM}
)
