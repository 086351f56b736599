package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// The functional probe both Linux runners use.

// launcherDir is where the Linux launchers start: a directory no command
// can write. They enter the command's own directory once confined, so
// nothing a command left in its working directory reaches the dynamic
// loader that starts the next launcher.
const launcherDir = "/"

// linuxHeldEnv is the HeldEnv of both Linux launchers (package vocab).
func linuxHeldEnv() *HeldEnv {
	return &HeldEnv{
		Prefix:       vocab.HeldEnvPrefix,
		Names:        append([]string(nil), vocab.HeldEnvNames...),
		NamePrefixes: append([]string(nil), vocab.HeldEnvNamePrefixes...),
	}
}

// probeTimeout bounds one functional probe.
const probeTimeout = 10 * time.Second

// probeLauncher runs launcher name in probe mode with one writable
// directory (and the read-only subpaths readOnly makes in it, if any), its
// spec completed with the runner's launcherPart (complete).
func probeLauncher(ctx context.Context, name string, readOnly func(allowed string) ([]string, error), complete func(vocab.Spec) (launcherPart, error)) error {
	exe, err := launcherPath()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "sandbox-local-probe-")
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		return errorf("probe dir", err)
	}
	defer os.RemoveAll(dir)
	allowed := filepath.Join(dir, "allowed")
	if err := os.Mkdir(allowed, 0o700); err != nil {
		return errorf("probe dir", err)
	}
	var ro []string
	if readOnly != nil {
		if ro, err = readOnly(allowed); err != nil {
			return errorf("probe dir", err)
		}
	}
	token, err := vocab.NewToken()
	if err != nil {
		return err
	}
	spec := vocab.Spec{Token: token, Writable: []string{allowed}, ReadOnly: ro, Dir: allowed, Probe: true}
	part, err := complete(spec)
	if err != nil {
		return err
	}
	spec = withLauncher(spec, part)
	args, err := vocab.Encode(name, spec)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Args = args
	cmd.Env = append(vocab.HoldEnv(dropVar(os.Environ(), vocab.TokenEnv)), vocab.TokenEnv+"="+token)
	cmd.Dir = launcherDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	want := vocab.ProbeOKLine(name, token)
	if runErr == nil && strings.TrimRight(stdout.String(), "\n") == want {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("probe did not finish: %w", ctx.Err())
	}
	if line := firstLine(stderr.String(), vocab.FatalPrefix(name, token)); line != "" {
		return fmt.Errorf("probe failed: %s", strings.TrimPrefix(line, vocab.FatalPrefix(name, token)))
	}
	return fmt.Errorf("the re-executed binary did not answer the probe (is launcher.Init() the first statement of main?): stdout %q; stderr %q: %w", clip(stdout.String()), clip(stderr.String()), runErr)
}

func firstLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
