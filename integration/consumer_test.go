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

		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, err := os.Stat(done); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the orphaned command never finished")
			}
			time.Sleep(20 * time.Millisecond)
		}
		wantContent(t, after, "x\n")
		wantAbsent(t, escape)
	})
}
