//go:build !cgo

package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// Built with CGO_ENABLED=0, neither Linux runner is in the binary: every
// Wrap, whichever runners are asked for, is SANDBOX_UNAVAILABLE with the
// reason naming the build, before anything is spawned; Diagnose (sandbox-run
// doctor) says the same for each runner.
func TestNoCgoRunnersUnavailable(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	req := Request{Argv: []string{"/bin/sh", "-c", "touch " + marker}, Dir: ws,
		Policy: Policy{Mode: WorkspaceWrite, Workspace: ws}}
	for _, runners := range [][]string{nil, {"namespaces"}, {"landlock"}} {
		p := New(Config{Runners: runners})
		w, err := p.Wrap(context.Background(), req)
		if w != nil || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("runners %v: Wrap gave %v, %v; want SANDBOX_UNAVAILABLE", runners, w, err)
		}
		if !strings.Contains(err.Error(), vocab.NoCgoReason) {
			t.Errorf("runners %v: the reason does not name the build: %v", runners, err)
		}
		d := p.Diagnose(context.Background())
		if d.Selected != "" || len(d.Candidates) == 0 {
			t.Errorf("runners %v: Diagnose selected %q of %v", runners, d.Selected, d.Candidates)
		}
		for _, c := range d.Candidates {
			if c.OK || !strings.Contains(c.Reason, "CGO_ENABLED=0") {
				t.Errorf("runners %v: Diagnose says %+v", runners, c)
			}
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran: %v", err)
	}
}
