package sandbox

import (
	"context"
	"os/exec"
	"sync"
)

// Enforcement says how complete a wrap's confinement is.
type Enforcement string

const (
	// Full: every part of the policy is enforced.
	Full Enforcement = "full"
	// Partial: some part is not; Gaps says which.
	Partial Enforcement = "partial"
)

// Gap names one part of the policy a runner does not enforce.
type Gap struct {
	// Area is "fs", "net", "ipc" or "proc".
	Area string `json:"area"`
	// Reason says what is not enforced and why.
	Reason string `json:"reason"`
}

// String returns "area: reason".
func (g Gap) String() string { return g.Area + ": " + g.Reason }

// Wrapped is one command, ready to spawn under its sandbox. Spawn Path with
// Args (Args[0] is the launcher name the re-executed binary dispatches on),
// Env and Dir, from any language; or call Command.
type Wrapped struct {
	// Path is the absolute path of the program to spawn.
	Path string `json:"path"`
	// Args is the full argv, Args[0] included.
	Args []string `json:"args"`
	// Env is the environment to spawn with (TMPDIR points at TempDir). It
	// is left out of JSON: it may hold the caller's secrets.
	Env []string `json:"-"`
	// LaunchEnv are the variables of Env the wrap itself sets (TMPDIR, and
	// the wrap's token, which the launcher reads and removes), for a
	// consumer that spawns Path and Args from the JSON with an environment
	// of its own. It holds the token: do not let the command read it.
	LaunchEnv []string `json:"launch_env,omitempty"`
	// Dir is the working directory to spawn in.
	Dir string `json:"dir"`
	// Runner is the runner that confines the command.
	Runner string `json:"runner"`
	// Enforcement is Full or Partial.
	Enforcement Enforcement `json:"enforcement"`
	// Gaps are the reasons for Partial.
	Gaps []Gap `json:"gaps,omitempty"`
	// DenialSignatures are stderr fragments that mean the sandbox likely
	// denied something.
	DenialSignatures []string `json:"denial_signatures"`
	// RunnerFailure is the rule that tells a launcher failure from a
	// command's own failure.
	RunnerFailure RunnerFailureRule `json:"runner_failure"`
	// TempDir is the wrap's private temp dir, removed by Cleanup.
	TempDir string `json:"temp_dir,omitempty"`

	cleanupOnce sync.Once
	cleanupErr  error
	cleanup     func() error
	tempVars    []string // temp variables besides TMPDIR the runner wants set (TMP, TEMP on Windows)
	fromCache   bool     // the runner was selected from the verdict cache, unprobed
}

// Command returns an *exec.Cmd that runs the wrapped command; ctx kills it.
func (w *Wrapped) Command(ctx context.Context) *exec.Cmd {
	cmd := exec.CommandContext(ctx, w.Path)
	cmd.Args = append([]string(nil), w.Args...)
	cmd.Env = append([]string(nil), w.Env...)
	cmd.Dir = w.Dir
	return cmd
}

// Cleanup removes what the wrap created (the private temp dir). Call it
// after the command and everything it started have exited. It is safe to
// call more than once.
func (w *Wrapped) Cleanup() error {
	w.cleanupOnce.Do(func() {
		if w.cleanup != nil {
			w.cleanupErr = w.cleanup()
		}
	})
	return w.cleanupErr
}
