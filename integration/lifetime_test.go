//go:build linux

package integration

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Nothing outlives the sandbox: however the command is stopped,
// or when it exits on its own, no process it started is left. Every case
// has two controls: the sleeper it must end was seen alive before the
// stop, and the same script run unconfined and stopped the same way leaves
// it alive. The time from the stop to all gone is logged; the bound
// asserted here is generous (goneBound), the targets live in benchmarks.

// goneBound is how long a case waits for every process of the command to
// be gone after the stop.
const goneBound = 5 * time.Second

// waitGone waits for every process whose command line holds marker to be
// gone, and logs how long that took since the stop.
func waitGone(t *testing.T, marker string, stop time.Time) {
	t.Helper()
	for time.Since(stop) < goneBound {
		if len(markedAlive(marker)) == 0 {
			t.Logf("all gone %v after the stop", time.Since(stop).Round(time.Millisecond))
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Errorf("processes %v outlived the sandbox (%v after the stop)", markedAlive(marker), goneBound)
}

// gate is a shell loop that waits until the test creates the file p: a
// command that must not exit before its leftovers were seen alive.
func gate(p string) string {
	return "while [ ! -e '" + p + "' ]; do sleep 0.02; done"
}

// controlOutlives runs script unconfined, stops its shell with sig (0: it
// exits by itself once gate file exists), and fails unless the sleeper
// outlived the shell: the leftover the sandbox must end is real.
func controlOutlives(t *testing.T, script string, sig syscall.Signal) {
	t.Helper()
	marker := newMarker(t)
	open := filepath.Join(t.TempDir(), "go")
	cmd := exec.Command("/bin/sh", "-c", strings.ReplaceAll(markedScript(t, script, marker), "GATE", gate(open)))
	startReady(t, cmd)
	sleeperAlive(t, marker)
	if sig != 0 {
		cmd.Process.Signal(sig)
	}
	write(t, open, "")
	cmd.Wait()
	time.Sleep(100 * time.Millisecond)
	if !sleeperStillAlive(marker) {
		t.Fatalf("control: unconfined, the sleeper did not outlive its shell (stopped by %v): the case proves nothing", sig)
	}
	killMarked(marker)
}

// sleeperStillAlive reports whether the marked sleeper itself runs.
func sleeperStillAlive(marker string) bool {
	for _, pid := range markedAlive(marker) {
		if b, err := os.ReadFile("/proc/" + pid + "/cmdline"); err == nil && strings.Contains(string(b), "\x00sleep\x00"+marker) {
			return true
		}
	}
	return false
}

// startCLIMarked is startMarked through sandbox-run, with extra options.
func startCLIMarked(t *testing.T, s *sbx, script string, extra ...string) (*exec.Cmd, string, *bufio.Reader) {
	t.Helper()
	marker := newMarker(t)
	args := append(append([]string{"--runner", s.runner, "--workspace", s.ws}, extra...), "--", "/bin/sh", "-c", markedScript(t, script, marker))
	cmd := exec.Command(helperBinary(t, "sandbox-run"), args...)
	cmd.Dir, cmd.Stderr = s.ws, stderrFile(t)
	return cmd, marker, startReady(t, cmd)
}

// stopAndWatch signals proc, the process under test, once the marked
// sleeper was seen alive, reaps it, checks its status (want; -1: any) and
// waits for every marked process to be gone.
func stopAndWatch(t *testing.T, proc *exec.Cmd, marker string, sig syscall.Signal, want int) {
	t.Helper()
	sleeperAlive(t, marker)
	stop := time.Now()
	proc.Process.Signal(sig)
	err := proc.Wait()
	if code := exitCode(proc, err); want >= 0 && code != want {
		t.Errorf("stopped by %v: exit %d, want %d", sig, code, want)
	}
	waitGone(t, marker, stop)
}

// waitingScript starts a sleeper and waits for it.
const waitingScript = "SLEEPER & echo ready; wait"

// TestStoppingTheLauncherEndsTheCommand: the launcher a library consumer
// spawned is killed or terminated.
func TestStoppingTheLauncherEndsTheCommand(t *testing.T) {
	cases := []struct {
		name string
		sig  syscall.Signal
		want int
	}{
		{"SIGKILL", syscall.SIGKILL, 128 + 9},
		{"SIGTERM", syscall.SIGTERM, 128 + 15},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			controlOutlives(t, waitingScript, c.sig)
			forEachRunner(t, func(t *testing.T, s *sbx) {
				cmd, marker, _ := startMarked(t, s, waitingScript)
				stopAndWatch(t, cmd, marker, c.sig, c.want)
			})
		})
	}
}

// TestStoppingTheCLIEndsTheCommand: sandbox-run, with and without a
// report, is killed or terminated.
func TestStoppingTheCLIEndsTheCommand(t *testing.T) {
	cases := []struct {
		name   string
		sig    syscall.Signal
		report bool
		want   int
	}{
		{"SIGKILL", syscall.SIGKILL, false, 128 + 9},
		{"SIGKILL, --json-report", syscall.SIGKILL, true, 128 + 9},
		{"SIGTERM", syscall.SIGTERM, false, 128 + 15},
		{"SIGTERM, --json-report", syscall.SIGTERM, true, 128 + 15},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			controlOutlives(t, waitingScript, c.sig)
			forEachRunner(t, func(t *testing.T, s *sbx) {
				var extra []string
				if c.report {
					extra = []string{"--json-report", filepath.Join(s.base, "report.json")}
				}
				cli, marker, _ := startCLIMarked(t, s, waitingScript, extra...)
				stopAndWatch(t, cli, marker, c.sig, c.want)
			})
		})
	}
}

// TestInterruptOfTheCLIReachesTheCommand: a SIGINT sent to sandbox-run's
// pid (no terminal: a process sent it) reaches the command, which traps it
// and exits 3, and nothing of the command is left.
func TestInterruptOfTheCLIReachesTheCommand(t *testing.T) {
	script := "trap 'exit 3' INT; SLEEPER & echo ready; while :; do sleep 0.05; done"
	controlOutlives(t, script, syscall.SIGINT)
	forEachRunner(t, func(t *testing.T, s *sbx) {
		cli, marker, _ := startCLIMarked(t, s, script)
		stopAndWatch(t, cli, marker, syscall.SIGINT, 3)
	})
}

// TestTerminalInterruptReachesTheCommandOnce: the terminal's Ctrl-C goes to
// its whole foreground process group, sandbox-run and the command alike;
// sandbox-run, in the foreground of its terminal, does not pass it on, so
// the command traps it once, not twice.
func TestTerminalInterruptReachesTheCommandOnce(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		m, slave, err := newPty()
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		defer slave.Close()
		open := filepath.Join(s.ws, "go")
		cmd := exec.Command(helperBinary(t, "sandbox-run"), "--runner", s.runner, "--workspace", s.ws, "--",
			"/bin/sh", "-c", "trap 'echo trapped' INT; echo ready; "+gate(open)+"; echo done")
		cmd.Dir, cmd.Stdin = s.ws, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		out := startReady(t, cmd)
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		if _, err := m.Write([]byte{3}); err != nil { // ^C, as typed
			t.Fatal(err)
		}
		line, _ := out.ReadString('\n')
		if line != "trapped\n" {
			t.Fatalf("control: the terminal's ^C did not reach the command: %q", line)
		}
		time.Sleep(300 * time.Millisecond)
		write(t, open, "")
		rest, _ := io.ReadAll(out)
		if string(rest) != "done\n" {
			t.Errorf("after one ^C the command printed %q, want only done: the interrupt reached it twice", "trapped\n"+string(rest))
		}
	})
}

// TestLeftoversEndWithTheCommand: processes the command leaves running
// when it exits normally, in the background, double-forked, or in a
// session of their own, end with it.
func TestLeftoversEndWithTheCommand(t *testing.T) {
	cases := []struct{ name, leftover string }{
		{"background", "SLEEPER &"},
		{"double fork", "(SLEEPER &)"},
		{"setsid", "setsid SLEEPER &"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := c.leftover + "\necho ready; GATE"
			controlOutlives(t, script, 0)
			forEachRunner(t, func(t *testing.T, s *sbx) {
				open := filepath.Join(s.ws, "go")
				cmd, marker, _ := startMarked(t, s, strings.ReplaceAll(script, "GATE", gate(open)))
				sleeperAlive(t, marker)
				write(t, open, "")
				err := cmd.Wait()
				exited := time.Now()
				if code := exitCode(cmd, err); code != 0 {
					t.Errorf("command: exit %d, want 0", code)
				}
				waitGone(t, marker, exited)
			})
		})
	}
}

// TestReadingStdoutToEndOfFileFinishes: a harness reads the command's
// stdout to end of file; a setsid'd process the command left holds that
// stdout. The harness must not wait for it: the read ends once the
// command has exited.
func TestReadingStdoutToEndOfFileFinishes(t *testing.T) {
	holder := func(t *testing.T, marker string) string {
		return "setsid " + self(t) + " " + toolArg + " sleep " + marker + " 2>/dev/null &"
	}
	// Control: unconfined, the holder keeps the read open.
	marker := newMarker(t)
	open := filepath.Join(t.TempDir(), "go")
	ctl := exec.Command("/bin/sh", "-c", holder(t, marker)+" echo ready; "+gate(open))
	out := startReady(t, ctl)
	sleeperAlive(t, marker)
	write(t, open, "")
	if readsToEOF(out, 300*time.Millisecond) {
		t.Fatal("control: unconfined, the read ended although the holder runs: the case proves nothing")
	}
	killMarked(marker)
	ctl.Wait()

	forEachRunner(t, func(t *testing.T, s *sbx) {
		marker := newMarker(t)
		open := filepath.Join(s.ws, "go")
		w := s.wrap(s.policy(), "/bin/sh", "-c", holder(t, marker)+" echo ready; "+gate(open))
		cmd := w.Command(t.Context())
		out := startReady(t, cmd)
		sleeperAlive(t, marker)
		stop := time.Now()
		write(t, open, "")
		if !readsToEOF(out, goneBound) {
			t.Errorf("the read of the command's stdout did not end %v after the command exited: %v hold it", goneBound, markedAlive(marker))
		} else {
			t.Logf("end of file %v after the command was let go", time.Since(stop).Round(time.Millisecond))
		}
		killMarked(marker)
		cmd.Wait()
	})
}

// readsToEOF reports whether r reaches end of file within d.
func readsToEOF(r io.Reader, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, r)
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// stderrFile is a file for a CLI's stderr that is no terminal, whatever the
// test's own stderr is (a terminal whose foreground group the CLI shares
// would make it keep a SIGINT from the command, rightly); it is shown when
// the test fails.
func stderrFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, _ := os.ReadFile(f.Name()); t.Failed() && len(b) > 0 {
			t.Logf("the CLI's stderr:\n%s", b)
		}
		f.Close()
	})
	return f
}

// termGrace is the grace the SIGTERM escalation cases give: short, so the
// tests stay quick; the default (10 s) is docker stop's.
const termGrace = time.Second

// ignoringTERM traps SIGTERM and runs on, as does its sleeper.
const ignoringTERM = "trap 'echo trapped' TERM; SLEEPER & echo ready; while :; do sleep 0.05; done"

// controlIgnoresTERM runs ignoringTERM unconfined and fails unless its
// shell still runs a while after SIGTERM: the case needs a command that
// does not end on it.
func controlIgnoresTERM(t *testing.T) {
	t.Helper()
	marker := newMarker(t)
	cmd := exec.Command("/bin/sh", "-c", markedScript(t, ignoringTERM, marker))
	startReady(t, cmd)
	sleeperAlive(t, marker)
	cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(2 * termGrace)
	if cmd.ProcessState != nil || cmd.Process.Signal(syscall.Signal(0)) != nil {
		t.Fatal("control: unconfined, the shell trapping TERM ended on it: the case proves nothing")
	}
	cmd.Process.Kill()
	cmd.Wait()
	killMarked(marker)
}

// watchGrace checks proc, running ignoringTERM and sent SIGTERM at stop:
// the command says it trapped the signal, proc ends with the status want
// no sooner than termGrace after stop (and not much later), and every
// marked process is gone.
func watchGrace(t *testing.T, proc *exec.Cmd, out *bufio.Reader, marker string, stop time.Time, want int) {
	t.Helper()
	if line, _ := out.ReadString('\n'); line != "trapped\n" {
		t.Errorf("the command printed %q, want trapped: SIGTERM did not reach it first", line)
	}
	watchEnd(t, proc, marker, stop, want, termGrace)
}

// watchEnd waits for proc, sent SIGTERM at stop, and checks that it ended
// with the status want, no sooner than after (and at most goneBound
// later), and that every marked process is gone.
func watchEnd(t *testing.T, proc *exec.Cmd, marker string, stop time.Time, want int, after time.Duration) {
	t.Helper()
	err := proc.Wait()
	took := time.Since(stop)
	if code := exitCode(proc, err); code != want {
		t.Errorf("exit %d, want %d", code, want)
	}
	if took < after || took > after+goneBound {
		t.Errorf("ended %v after SIGTERM, want after %v (plus at most %v)", took, after, goneBound)
	}
	waitGone(t, marker, stop)
}

// TestCLIKillsWhatIgnoresTERM: sandbox-run passes SIGTERM on; a command
// that ignores it is killed --kill-after later, everything it started
// with it, and sandbox-run dies of SIGTERM (143), as docker stop expects.
// A command that ends on SIGTERM ends at once, long before the grace.
func TestCLIKillsWhatIgnoresTERM(t *testing.T) {
	controlIgnoresTERM(t)
	forEachRunner(t, func(t *testing.T, s *sbx) {
		t.Run("ignores", func(t *testing.T) {
			cli, marker, out := startCLIMarked(t, s, ignoringTERM, "--kill-after", termGrace.String())
			sleeperAlive(t, marker)
			stop := time.Now()
			cli.Process.Signal(syscall.SIGTERM)
			watchGrace(t, cli, out, marker, stop, 128+15)
		})
		t.Run("ends on TERM", func(t *testing.T) {
			cli, marker, _ := startCLIMarked(t, s, waitingScript, "--kill-after", "30s")
			sleeperAlive(t, marker)
			stop := time.Now()
			cli.Process.Signal(syscall.SIGTERM)
			watchEnd(t, cli, marker, stop, 128+15, 0)
		})
	})
}

// TestCancelledContextTermsThenKills: the end of the context of
// Wrapped.Command sends the launcher SIGTERM, which reaches the command
// (it traps it and says so), and kills the sandbox WaitDelay later if the
// command runs on; a command that ends on SIGTERM ends at once.
func TestCancelledContextTermsThenKills(t *testing.T) {
	controlIgnoresTERM(t)
	forEachRunner(t, func(t *testing.T, s *sbx) {
		t.Run("ignores", func(t *testing.T) {
			marker := newMarker(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			cmd := s.wrap(s.policy(), "/bin/sh", "-c", markedScript(t, ignoringTERM, marker)).Command(ctx)
			cmd.WaitDelay = termGrace
			out := startReady(t, cmd)
			sleeperAlive(t, marker)
			stop := time.Now()
			cancel()
			watchGrace(t, cmd, out, marker, stop, 128+9)
		})
		t.Run("ends on TERM", func(t *testing.T) {
			marker := newMarker(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			cmd := s.wrap(s.policy(), "/bin/sh", "-c", markedScript(t, waitingScript, marker)).Command(ctx)
			startReady(t, cmd)
			sleeperAlive(t, marker)
			stop := time.Now()
			cancel()
			watchEnd(t, cmd, marker, stop, 128+15, 0)
		})
	})
}
