package launcher

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/bo-agent/sandbox-local/internal/selfexe"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// inProcess are the launchers that can take over a running Go process.
var inProcess = map[string]bool{vocab.LandlockRun: true}

// ExecInPlace runs a wrapped command in place of the calling program, for a
// CLI that wraps exactly one command: when path is this executable and
// args[0] names a launcher that can run in-process (landlock-run), it runs
// in this process (no second Go start) and execs the command; otherwise
// path is exec'd (ns-run must be: its first stage runs before the Go
// runtime). Pass the Wrapped's Path, Args, Env and Dir: Dir is where the
// launcher starts ("/" for the Linux launchers, which enter the command's
// own directory once confined), and Env holds back what the launcher's
// dynamic loader and runtime must not see (Wrapped.HeldEnv), so an exec'd
// launcher never starts in the workspace or with a loader path into it.
// On success it does not return; a launcher failure exits 125
// with its fatal line, as a spawned launcher would. It returns an error
// only when nothing was started. Nothing cleans up after the wrap here: the provider removes
// a private temp dir whose process is gone on a later run.
func ExecInPlace(path string, args, env []string, dir string) error {
	if len(args) == 0 {
		return fmt.Errorf("launcher: empty argv")
	}
	if dir != "" {
		if err := os.Chdir(dir); err != nil {
			return fmt.Errorf("launcher: chdir %s: %w", dir, err)
		}
	}
	self, err := selfexe.Path()
	if fn, ok := launchers()[args[0]]; ok && inProcess[args[0]] && err == nil && path == self {
		os.Clearenv()
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
		os.Args = append([]string(nil), args...)
		fn()
		os.Exit(1) // unreachable: every launcher execs or exits
	}
	return fmt.Errorf("launcher: exec %s: %w", path, syscall.Exec(path, args, env))
}
