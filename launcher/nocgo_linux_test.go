//go:build !cgo

package launcher

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/seccompfilter"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// This test binary is the launcher when the test starts it as one.
func TestMain(m *testing.M) {
	if Init() {
		return
	}
	os.Exit(m.Run())
}

// Built with CGO_ENABLED=0, ns-run refuses before anything else: the
// signed fatal line naming the build, exit 125, and the command never
// runs, even when started exactly as the provider would start it. (The
// landlock launcher is the Go chain there, held to the integration suite.)
func TestNoCgoNsRunRefuses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		profile seccompfilter.Profile
	}{{vocab.NsRun, seccompfilter.Namespaces}} {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			marker := filepath.Join(ws, "ran")
			token, err := vocab.NewToken()
			if err != nil {
				t.Fatal(err)
			}
			spec := vocab.Spec{Token: token, Writable: []string{ws}, Dir: ws, Argv: []string{"/bin/sh", "-c", "touch " + marker}}
			if spec.Seccomp, err = seccompfilter.BPF(spec, c.profile); err != nil {
				t.Fatal(err)
			}
			args, err := vocab.Encode(c.name, spec)
			if err != nil {
				t.Fatal(err)
			}
			cmd := &exec.Cmd{Path: exe, Args: args, Env: append(os.Environ(), vocab.TokenEnv+"="+token)}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err = cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != vocab.FatalExit {
				t.Fatalf("exit: %v, want %d; stderr: %s", err, vocab.FatalExit, stderr.String())
			}
			want := vocab.FatalLine(c.name, token, vocab.NoCgoReason)
			if got := strings.TrimSpace(stderr.String()); got != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the command ran: %v", err)
			}
		})
	}
}
