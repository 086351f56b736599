//go:build linux

package integration

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestCommandCannotDisarmItsSupervisor: the command's parent is what ends
// everything it leaves behind (under landlock the supervisor, outside the
// command's Landlock domain; under namespaces pid 1). The command kills and
// ptraces its parent, then leaves background processes behind and exits:
// the attacks fail and nothing outlives the sandbox.
func TestCommandCannotDisarmItsSupervisor(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		tool := self(t) + " " + toolArg
		cmd, marker, out := startMarked(t, s, "SLEEPER & (setsid SLEEPER &); echo ready; "+
			tool+" ptrace $PPID; "+tool+" kill $PPID; sleep 0.2")
		sleeperAlive(t, marker)
		ptrace, _ := out.ReadString('\n')
		kill, _ := out.ReadString('\n')
		err := cmd.Wait()
		exited := time.Now()
		if err != nil {
			t.Errorf("command: %v (the supervisor was disarmed?)", err)
		}
		if s.runner == "landlock" {
			// EPERM, not ESRCH: the parent exists and Landlock refuses.
			wantDenied(t, "ptrace the supervisor", strings.TrimSpace(ptrace), "EPERM")
			wantDenied(t, "kill the supervisor", strings.TrimSpace(kill), "EPERM")
		}
		waitGone(t, marker, exited)
	})
}

// TestCleanupEndsTheSandbox: Cleanup while the command still runs kills the
// launcher Command spawned, and with it everything the command started;
// the temp dir is gone too.
func TestCleanupEndsTheSandbox(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		marker := newMarker(t)
		w := s.wrap(s.policy(), "/bin/sh", "-c", markedScript(t, "SLEEPER & (setsid SLEEPER &); echo ready; exec sleep 100", marker))
		cmd := w.Command(t.Context())
		startReady(t, cmd)
		sleeperAlive(t, marker)
		start := time.Now()
		if err := w.Cleanup(); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
		cmd.Wait()
		waitGone(t, marker, start)
		if _, err := os.Stat(w.TempDir); !os.IsNotExist(err) {
			t.Errorf("temp dir %s after Cleanup: %v", w.TempDir, err)
		}
	})
}
