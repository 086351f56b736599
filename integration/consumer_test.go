//go:build linux

package integration

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillNineOfTheConsumer: the agent that wrapped a command dies by
// SIGKILL while the command runs. The command and everything it started
// die with it: a Go consumer's launcher through the parent-death signal
// Command sets, one spawned without it (as from another language) through
// the launcher's own.
func TestKillNineOfTheConsumer(t *testing.T) {
	controlOutlives(t, waitingScript, syscall.SIGKILL)
	for _, verb := range []string{"consume", "consume-bare"} {
		t.Run(verb, func(t *testing.T) {
			forEachRunner(t, func(t *testing.T, s *sbx) {
				marker := newMarker(t)
				consumer := exec.Command(self(t), toolArg, verb, s.runner, s.ws, "/bin/sh", "-c", markedScript(t, "SLEEPER & wait", marker))
				out, err := consumer.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := consumer.Start(); err != nil {
					t.Fatal(err)
				}
				line, _ := bufio.NewReader(out).ReadString('\n')
				if strings.TrimSpace(line) != "started" {
					consumer.Process.Kill()
					consumer.Wait()
					t.Fatalf("consumer said %q, want started", line)
				}
				stopAndWatch(t, consumer, marker, syscall.SIGKILL, 128+9)
			})
		})
	}
}

// TestLeftBehindProcessesDoNotRunOn: a double-forked process in a session
// of its own, which would write a file a second later, is ended with the
// command: the file never appears (unconfined, it does).
func TestLeftBehindProcessesDoNotRunOn(t *testing.T) {
	script := func(done string) string {
		return `(setsid /bin/sh -c "sleep 1; echo z > '` + done + `'" >/dev/null 2>&1 &); exit 0`
	}
	ctl := filepath.Join(t.TempDir(), "done")
	if err := exec.Command("/bin/sh", "-c", script(ctl)).Run(); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, ctl, "control: unconfined, the left-behind process never wrote its file")
	forEachRunner(t, func(t *testing.T, s *sbx) {
		done := filepath.Join(s.ws, "done")
		r := s.run(s.policy(), "/bin/sh", "-c", script(done))
		if r.code != 0 {
			t.Fatalf("command: exit %d stderr %q", r.code, r.stderr)
		}
		time.Sleep(1500 * time.Millisecond)
		if _, err := os.Stat(done); err == nil {
			t.Error("a process the command left behind ran on after it exited and wrote its file")
		}
	})
}

// waitForFile waits up to 20 seconds for p to exist, failing with why.
func waitForFile(t *testing.T, p, why string) {
	t.Helper()
	if !waitFor(p, 20*time.Second) {
		t.Fatal(why)
	}
}
