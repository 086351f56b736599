package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a writer that is no file: spawn feeds it through a pipe.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSpawnLikeExec: spawn gives the launcher what exec.Cmd.Start gave
// it, and reports its end as exec.Cmd's ProcessState did: exit status,
// death by a signal, files and writers as stdio, the extra files, the
// directory, the environment (the last of a name), SysProcAttr, and the
// pipes read after the exit for at most WaitDelay.
func TestSpawnLikeExec(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) *os.File {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	read := func(f *os.File) string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := []struct {
		name     string
		script   string
		setup    func(*exec.Cmd) func() string // what the command left, to compare with want
		wantCode int
		wantSig  syscall.Signal
		want     string
	}{
		{name: "exit status", script: "exit 7", wantCode: 7},
		{name: "death by a signal", script: "kill -TERM $$", wantCode: 143, wantSig: syscall.SIGTERM},
		{name: "stdin, stdout and stderr as files", script: "cat; echo err >&2", setup: func(c *exec.Cmd) func() string {
			c.Stdin, c.Stdout, c.Stderr = file("in", "in\n"), file("out", ""), file("err", "")
			return func() string { return read(c.Stdout.(*os.File)) + read(c.Stderr.(*os.File)) }
		}, want: "in\nerr\n"},
		{name: "nil stdio is the null device", script: "cat; echo gone; echo gone >&2", setup: func(c *exec.Cmd) func() string {
			c.Stdin, c.Stdout, c.Stderr = nil, nil, nil
			return func() string { return "" }
		}},
		{name: "one writer for stdout and stderr keeps their order", script: "echo a; echo b >&2; echo c", setup: func(c *exec.Cmd) func() string {
			w := &lockedBuffer{}
			c.Stdout, c.Stderr = w, w
			return w.String
		}, want: "a\nb\nc\n"},
		{name: "a writer for stderr only", script: "echo out; echo err >&2", setup: func(c *exec.Cmd) func() string {
			w := &lockedBuffer{}
			c.Stdout, c.Stderr = file("out2", ""), w
			return func() string { return read(c.Stdout.(*os.File)) + w.String() }
		}, want: "out\nerr\n"},
		{name: "extra files from 3 on", script: "echo x >&3; echo y >&4", setup: func(c *exec.Cmd) func() string {
			c.ExtraFiles = []*os.File{file("x", ""), file("y", "")}
			return func() string { return read(c.ExtraFiles[0]) + read(c.ExtraFiles[1]) }
		}, want: "x\ny\n"},
		{name: "directory and environment, the last of a name", script: "echo $PWD $FOO $BAR", setup: func(c *exec.Cmd) func() string {
			c.Dir = dir
			c.Env = []string{"FOO=1", "BAR=b", "FOO=2", "PWD=" + dir}
			c.Stdout = file("env", "")
			return func() string { return read(c.Stdout.(*os.File)) }
		}, want: dir + " 2 b\n"},
		{name: "SysProcAttr applies", script: `set -- $(cat /proc/$$/stat); echo $(( $5 == $$ ))`, setup: func(c *exec.Cmd) func() string {
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
			c.Stdout = file("pgid", "")
			return func() string { return read(c.Stdout.(*os.File)) }
		}, want: "1\n"},
		{name: "a process left holding the pipe holds Wait only WaitDelay", script: "echo bye >&2; sleep 30 >&2 & exit 3", setup: func(c *exec.Cmd) func() string {
			w := &lockedBuffer{}
			c.Stderr = w
			c.WaitDelay = 200 * time.Millisecond
			return w.String
		}, wantCode: 3, want: "bye\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("/bin/sh", "-c", tc.script)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
			left := func() string { return "" }
			if tc.setup != nil {
				left = tc.setup(cmd)
			}
			start := time.Now()
			c, err := spawn(cmd)
			if err != nil {
				t.Fatal(err)
			}
			code, sig := c.Wait()
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("Wait took %v", took)
			}
			if code != tc.wantCode || sig != tc.wantSig {
				t.Errorf("Wait = %d %v, want %d %v", code, sig, tc.wantCode, tc.wantSig)
			}
			if got := left(); got != tc.want {
				t.Errorf("the command left %q, want %q", got, tc.want)
			}
			if err := c.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
				t.Errorf("Signal after Wait: %v, want os.ErrProcessDone", err)
			}
		})
	}
}

// TestSpawnFailsAsExec: a launcher that cannot start fails as
// exec.Cmd.Start did, with the same words, and nothing is waited for.
func TestSpawnFailsAsExec(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "plain")
	if err := os.WriteFile(notExec, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, dir string
		is              error
	}{
		{"missing program", filepath.Join(dir, "missing"), "", fs.ErrNotExist},
		{"not executable", notExec, "", fs.ErrPermission},
		{"missing directory", "/bin/true", filepath.Join(dir, "nodir"), fs.ErrNotExist},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ref := exec.Command(tc.path)
			ref.Dir = tc.dir
			ref.SysProcAttr = &syscall.SysProcAttr{} // as the wrap's: no directory check before the fork
			refErr := ref.Start()
			cmd := exec.Command(tc.path)
			cmd.Dir = tc.dir
			cmd.SysProcAttr = &syscall.SysProcAttr{}
			c, err := spawn(cmd)
			if err == nil {
				c.Wait()
				t.Fatal("spawn started it")
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("spawn: %v, want %v", err, tc.is)
			}
			if refErr == nil || err.Error() != refErr.Error() {
				t.Errorf("spawn: %q, exec.Cmd.Start: %v", err, refErr)
			}
			var pe *os.PathError
			if !errors.As(err, &pe) || pe.Op != "fork/exec" || pe.Path != tc.path {
				t.Errorf("spawn: %#v, want *os.PathError fork/exec %s", err, tc.path)
			}
		})
	}
}

// TestSpawnSignal: a signal reaches the launcher while it runs.
func TestSpawnSignal(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "trap 'exit 42' USR1; echo ready; while :; do sleep 0.05; done")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd.Stdout = w
	c, err := spawn(cmd)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	if _, err := r.Read(b); err != nil || string(b) != "ready\n" {
		t.Fatalf("read %q %v", b, err)
	}
	if err := c.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if code, sig := c.Wait(); code != 42 || sig != 0 {
		t.Errorf("Wait = %d %v, want 42 after SIGUSR1", code, sig)
	}
}

// TestLastOfEachName is exec.Cmd's rule for a name given twice.
func TestLastOfEachName(t *testing.T) {
	cases := []struct{ env, want []string }{
		{nil, []string{}},
		{[]string{"A=1"}, []string{"A=1"}},
		{[]string{"A=1", "B=2", "A=3"}, []string{"B=2", "A=3"}},
		{[]string{"A=1", "A", "B=2"}, []string{"A", "B=2"}},
	}
	for _, tc := range cases {
		if got := lastOfEachName(tc.env); strings.Join(got, ",") != strings.Join(tc.want, ",") || len(got) != len(tc.want) {
			t.Errorf("lastOfEachName(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}
