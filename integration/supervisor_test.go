//go:build linux

package integration

import (
	"strings"
	"testing"
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
		if err := cmd.Wait(); err != nil {
			t.Errorf("command: %v (the supervisor was disarmed?)", err)
		}
		if s.runner == "landlock" {
			// EPERM, not ESRCH: the parent exists and Landlock refuses.
			wantDenied(t, "ptrace the supervisor", strings.TrimSpace(ptrace), "EPERM")
			wantDenied(t, "kill the supervisor", strings.TrimSpace(kill), "EPERM")
		}
		waitGone(t, marker)
	})
}
