//go:build unix

package launcher

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// fakeExec records the exec the step asked for.
type fakeExec struct {
	path       string
	argv, env  []string
	calls      int
	err        error
	applyAtRun func() // checks made at the moment of exec
}

func (f *fakeExec) exec(path string, argv, env []string) error {
	f.calls++
	f.path, f.argv, f.env = path, argv, env
	if f.applyAtRun != nil {
		f.applyAtRun()
	}
	return f.err
}

func newStep(env []string, fx *fakeExec, stderr io.Writer) seatbeltStep {
	return seatbeltStep{
		env:    env,
		report: reportApplied,
		isExec: func(p string) bool { return p == "/usr/bin/git" || p == "/bin/sh" },
		exec:   fx.exec,
		stderr: stderr,
	}
}

// TestSeatbeltStepReportsThenExecs: with a pipe named by AppliedEnv, the
// step writes the marker and closes its end before it execs the command,
// which gets the environment without AppliedEnv.
func TestSeatbeltStepReportsThenExecs(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The step gets its own descriptor for the write end, as it would
	// inherit one; the test's copy is closed so EOF shows the step closed it.
	fd, err := syscall.Dup(int(w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	var stderr bytes.Buffer
	fx := &fakeExec{err: syscall.EPERM}
	fx.applyAtRun = func() {
		r.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(r) // EOF only if the step closed the descriptor
		if err != nil || string(got) != vocab.AppliedMarker {
			t.Errorf("at exec the pipe holds %q (%v), want %q then EOF", got, err, vocab.AppliedMarker)
		}
		if err := syscall.Fstat(fd, &syscall.Stat_t{}); err != syscall.EBADF {
			t.Errorf("the descriptor is still open at exec: %v", err)
		}
	}
	env := []string{"PATH=/nowhere:/usr/bin", vocab.AppliedEnv + "=" + strconv.Itoa(fd), "HOME=/Users/me"}
	code := newStep(env, fx, &stderr).run([]string{"--", "git", "status"})
	if fx.calls != 1 || fx.path != "/usr/bin/git" || strings.Join(fx.argv, " ") != "git status" {
		t.Fatalf("exec %d calls: %q %q", fx.calls, fx.path, fx.argv)
	}
	if strings.Join(fx.env, " ") != "PATH=/nowhere:/usr/bin HOME=/Users/me" {
		t.Errorf("the command's env %q", fx.env)
	}
	// The fake exec failed (EPERM): the command's outcome, after the report.
	if code != 126 || !strings.HasPrefix(stderr.String(), "seatbelt-run: execvp() of 'git' failed: ") {
		t.Errorf("code %d stderr %q", code, stderr.String())
	}
}

// TestSeatbeltStepWithoutReport: no AppliedEnv, no report; the command
// still runs (a spawner that does not read the pipe classifies as before).
func TestSeatbeltStepWithoutReport(t *testing.T) {
	fx := &fakeExec{err: syscall.ENOENT}
	s := newStep([]string{"PATH=/usr/bin"}, fx, io.Discard)
	s.report = func(int) error { t.Error("reported without AppliedEnv"); return nil }
	if code := s.run([]string{"--", "/usr/bin/git"}); code != 127 || fx.calls != 1 {
		t.Errorf("code %d, %d execs", code, fx.calls)
	}
	if code := s.run([]string{"--", "nosuch"}); code != 127 || fx.calls != 1 {
		t.Errorf("not found: code %d, %d execs", code, fx.calls)
	}
}

// TestSeatbeltStepFatal: the command never runs when the step cannot say
// the sandbox is applied although asked to, or its arguments are wrong:
// one unsigned fatal line, exit 125, and no report.
func TestSeatbeltStepFatal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "notapipe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"no --", nil, []string{"git"}},
		{"no command", nil, []string{"--"}},
		{"empty command", nil, []string{"--", ""}},
		{"fd not a number", []string{vocab.AppliedEnv + "=x"}, []string{"--", "git"}},
		{"fd below 3", []string{vocab.AppliedEnv + "=2"}, []string{"--", "git"}},
		{"fd closed", []string{vocab.AppliedEnv + "=987"}, []string{"--", "git"}},
		{"fd not a pipe", []string{vocab.AppliedEnv + "=" + strconv.Itoa(int(f.Fd()))}, []string{"--", "git"}},
	} {
		var stderr bytes.Buffer
		fx := &fakeExec{}
		code := newStep(append([]string{"PATH=/usr/bin"}, c.env...), fx, &stderr).run(c.args)
		if code != vocab.FatalExit || fx.calls != 0 || !strings.HasPrefix(stderr.String(), "seatbelt-run: fatal: ") || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%s: code %d, %d execs, stderr %q", c.name, code, fx.calls, stderr.String())
		}
	}
	if b, _ := os.ReadFile(f.Name()); len(b) != 0 {
		t.Errorf("the regular file got %q", b)
	}
}

// TestSeatbeltStepScriptWithoutShebang: like execvp, a file the kernel
// refuses as ENOEXEC runs with /bin/sh.
func TestSeatbeltStepScriptWithoutShebang(t *testing.T) {
	var calls []string
	s := newStep([]string{"PATH=/usr/bin"}, &fakeExec{}, io.Discard)
	s.exec = func(path string, argv, env []string) error {
		calls = append(calls, path+" "+strings.Join(argv, " "))
		if path == "/usr/bin/git" {
			return syscall.ENOEXEC
		}
		return syscall.EPERM
	}
	s.run([]string{"--", "git", "a"})
	if strings.Join(calls, "|") != "/usr/bin/git git a|/bin/sh sh /usr/bin/git a" {
		t.Errorf("execs %q", calls)
	}
}
