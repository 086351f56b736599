//go:build linux && cgo

package launcher

import (
	"os"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// landlockLaunchers: with cgo, landlock-run is C from start to exec
// (landlock_start_linux.c: the supervisor, then landlock_run_linux.c), and
// the Go runtime never starts. landlockRun is reached only where the C
// constructor did not run (a libc other than glibc passes it no argv):
// there it refuses, as nothing would end what the command leaves behind.
func landlockLaunchers() map[string]func() {
	return map[string]func(){vocab.LandlockRun: func() { landlockRun(os.Args[1:]) }}
}

// undoStartEnv: nothing was added to the environment for the Go launcher.
func undoStartEnv() {}

// supervised: a Go landlock-run in a cgo build started without the C
// start, and so without its supervisor.
func supervised() bool { return false }

// supervisorSocket: there is none for the Go launcher in a cgo build.
func supervisorSocket() int { return -1 }
