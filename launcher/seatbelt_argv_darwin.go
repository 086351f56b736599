package launcher

import (
	"os"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// argvLauncher runs the seatbelt-run step when this process is one: sandbox-exec
// execs the provider's binary by its path, so the step is named by argv[1]
// (reexec dispatches on argv[0]). It does not return then.
func argvLauncher() bool {
	if len(os.Args) < 2 || os.Args[1] != vocab.SeatbeltRun {
		return false
	}
	os.Exit(osSeatbeltStep().run(os.Args[2:]))
	return true
}
