//go:build linux

package integration

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestCannotSignalHostProcesses(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		victim := exec.Command("/bin/sleep", "60")
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { victim.Process.Kill(); victim.Wait() }()
		pid := victim.Process.Pid

		wantDenied(t, "kill a host process", s.tool(s.policy(), "kill", strconv.Itoa(pid)), "EPERM", "ESRCH")
		if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
			t.Fatalf("the host process is gone: %v", err)
		}
		// Control: the command can still signal its own children.
		wantOK(t, "kill its own child", s.tool(s.policy(), "kill-own"))
	})
}

func TestTerminalInjectionDenied(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); err == nil && strings.TrimSpace(string(b)) == "0" {
		t.Skip("kernel has TIOCSTI disabled (dev.tty.legacy_tiocsti=0): nothing to deny")
	}
	// Control: on this kernel the attack works when nothing stops it.
	wantOK(t, "TIOCSTI unconfined", hostTool(t, "tiocsti"))
	forEachRunner(t, func(t *testing.T, s *sbx) {
		wantDenied(t, "TIOCSTI in the sandbox", s.tool(s.policy(), "tiocsti"), "EPERM")
	})
}
