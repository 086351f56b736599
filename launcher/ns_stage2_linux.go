package launcher

import (
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// nsRun is reached only if ns-run's C stages did not run: they start from
// a constructor before the Go runtime and never return into Go (stage 1
// waits in C, pid 1 is a C init, pid 2 execs the command from C). The
// binary was then not started by exec as "ns-run", or was built without
// cgo: refuse.
func nsRun([]string) {
	if !withCgo {
		fatal(vocab.NsRun, takeToken(), "%s", vocab.NoCgoReason)
	}
	fatal(vocab.NsRun, takeToken(), "stage 1 did not run (the launcher must be started as %q by exec, with cgo)", vocab.NsRun)
}
