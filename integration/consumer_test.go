//go:build linux

package integration

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKillNineOfTheConsumer: the agent that wrapped a command dies by
// SIGKILL while the command runs. The command goes on as an orphan, as
// any child would, and stays exactly as confined: what it writes after
// its consumer is gone lands inside the workspace and nowhere else.
func TestKillNineOfTheConsumer(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		after := filepath.Join(s.ws, "after-consumer")
		escape := filepath.Join(s.base, "escape")
		done := filepath.Join(s.ws, "done")
		script := "sleep 1; echo x > '" + after + "'; echo y > '" + escape + "'; echo z > '" + done + "'"
		consumer := exec.Command(self(t), toolArg, "consume", s.runner, s.ws, "/bin/sh", "-c", script)
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
		consumer.Process.Kill()
		consumer.Wait()

		waitForFile(t, done, "the orphaned command never finished")
		wantContent(t, after, "x\n")
		wantAbsent(t, escape)
	})
}

// TestLeftBehindProcessesStayConfined: under landlock a double-forked
// process outlives the command (no pid namespace to end it; namespaces
// ends it, see TestBackgroundProcessesDieWithTheSandbox) and keeps the
// Landlock domain and the seccomp filter: after the command is gone, its
// writes land inside the workspace only.
func TestLeftBehindProcessesStayConfined(t *testing.T) {
	for _, runner := range only("landlock") {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			after := filepath.Join(s.ws, "after-exit")
			escape := filepath.Join(s.base, "escape")
			done := filepath.Join(s.ws, "done")
			inner := "sleep 1; echo x > '" + after + "'; echo y > '" + escape + "'; echo z > '" + done + "'"
			r := s.run(s.policy(), "/bin/sh", "-c", `(setsid /bin/sh -c "`+inner+`" >/dev/null 2>&1 &); exit 0`)
			if r.code != 0 {
				t.Fatalf("command: exit %d stderr %q", r.code, r.stderr)
			}
			if _, err := os.Stat(done); err == nil {
				t.Fatal("the left-behind process finished before the command exited: the test proves nothing")
			}
			waitForFile(t, done, "the left-behind process never finished")
			wantContent(t, after, "x\n")
			wantAbsent(t, escape)
		})
	}
}

// waitForFile waits up to 20 seconds for p to exist, failing with why.
func waitForFile(t *testing.T, p, why string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(p); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
