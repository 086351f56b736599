package launcher

import (
	"fmt"
	"os"
	"syscall"
)

// ExecInPlace runs a wrapped command in place of the calling program, for a
// CLI that wraps exactly one command: path is exec'd (both Linux
// launchers start in C, before the Go runtime: ns-run's first stage,
// landlock-run's supervisor). Pass the Wrapped's Path, Args, Env and Dir: Dir is where the
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
	return fmt.Errorf("launcher: exec %s: %w", path, syscall.Exec(path, args, env))
}
