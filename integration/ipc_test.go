//go:build linux

package integration

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
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
	// The command's controlling terminal: a pty whose slave is its stdin.
	onTerminal := func(t *testing.T) func(*exec.Cmd) {
		m, sl, err := newPty()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close(); sl.Close() })
		return func(c *exec.Cmd) {
			c.Stdin = sl
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		}
	}
	// Control: on this kernel the attack works when nothing stops it.
	ctl := exec.Command(self(t), toolArg, "tiocsti")
	onTerminal(t)(ctl)
	out, _ := ctl.Output()
	wantOK(t, "TIOCSTI unconfined", strings.TrimSpace(string(out)))
	forEachRunner(t, func(t *testing.T, s *sbx) {
		r := s.spawn(s.wrap(s.policy(), self(t), toolArg, "tiocsti"), onTerminal(t))
		wantDenied(t, "TIOCSTI in the sandbox", toolAnswer(t, r), "EPERM")
	})
}

// TestOtherTerminalsUnreachable: another terminal of the user (a tab with a
// sudo prompt) must be neither readable nor writable inside.
func TestOtherTerminalsUnreachable(t *testing.T) {
	m, sl, err := newPty()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	defer sl.Close()
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	other := "/dev/pts/" + strconv.Itoa(n)
	wantOK(t, "control: the terminal opens outside", hostTool(t, "append", other))
	forEachRunner(t, func(t *testing.T, s *sbx) {
		wantDenied(t, "write another terminal", s.tool(s.policy(), "append", other), "EACCES", "ENOENT", "EPERM", "EIO")
		wantDenied(t, "read another terminal", s.tool(s.policy(), "read", other), "EACCES", "ENOENT", "EPERM", "EIO")
	})
}

// TestCannotReachHostProcessesByPid: limits, priority and CPU affinity of a
// host process of the same user are out of reach (Landlock does not scope
// these calls).
func TestCannotReachHostProcessesByPid(t *testing.T) {
	victim := exec.Command("/bin/sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()
	pid := strconv.Itoa(victim.Process.Pid)
	for _, kind := range []string{"prlimit", "setpriority", "affinity"} {
		wantOK(t, "control: "+kind+" of a host process outside", hostTool(t, "reach-process", pid, kind))
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		for _, kind := range []string{"prlimit", "setpriority", "affinity"} {
			wantDenied(t, kind+" of a host process", s.tool(s.policy(), "reach-process", pid, kind), "EPERM", "ESRCH", "EACCES")
		}
		// Control: the same calls on itself work inside.
		wantOK(t, "prlimit of itself", s.tool(s.policy(), "reach-process", "0", "prlimit"))
	})
}
