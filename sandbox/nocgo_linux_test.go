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

// Built with CGO_ENABLED=0, ns-run's C stages are not in the binary: a
// Wrap that asks for the namespaces runner is SANDBOX_UNAVAILABLE with the
// reason naming the build, before anything is spawned, and Diagnose
// (sandbox-run doctor) says the same. The landlock runner works in such a
// build: the integration suite runs against one (.ci/run).
func TestNoCgoNamespacesUnavailable(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	req := Request{Argv: []string{"/bin/sh", "-c", "touch " + marker}, Dir: ws,
		Policy: Policy{Mode: WorkspaceWrite, Workspace: ws}}
	p := New(Config{Runners: []string{"namespaces"}})
	w, err := p.Wrap(context.Background(), req)
	if w != nil || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Wrap gave %v, %v; want SANDBOX_UNAVAILABLE", w, err)
	}
	if !strings.Contains(err.Error(), vocab.NoCgoReason) {
		t.Errorf("the reason does not name the build: %v", err)
	}
	d := p.Diagnose(context.Background())
	if d.Selected != "" || len(d.Candidates) != 1 || d.Candidates[0].OK || !strings.Contains(d.Candidates[0].Reason, "CGO_ENABLED=0") {
		t.Errorf("Diagnose: selected %q, candidates %+v", d.Selected, d.Candidates)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran: %v", err)
	}
}
