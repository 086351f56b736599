package sandbox

import (
	"context"
	"syscall"
	"testing"
)

// TestCommandDiesWithItsSpawner: the launcher Command spawns gets the
// parent-death signal at the fork (the integration suite kills consumers
// to see it work).
func TestCommandDiesWithItsSpawner(t *testing.T) {
	w := &Wrapped{Path: "/bin/true", Args: []string{"ns-run"}, Dir: "/"}
	cmd := w.Command(context.Background())
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Fatalf("SysProcAttr %+v, want Pdeathsig SIGKILL", cmd.SysProcAttr)
	}
}
