package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// spawn starts cmd's launcher with syscall.ForkExec, not exec.Cmd.Start:
// os.StartProcess first forks a throwaway child to learn whether the
// kernel's pidfds work, once per process, which for sandbox-run is once
// per command. What exec.Cmd does that sandbox-run relies on is done
// here as well: stdin, stdout and stderr passed on as files, a writer
// that is no file fed through a pipe (one pipe when stdout and stderr are
// the same writer, so their order is kept), cmd.ExtraFiles as 3 and up,
// cmd.Dir, cmd.SysProcAttr (the launcher's death signal) and cmd.Env with
// the last of a name kept, a failed start as *os.PathError "fork/exec
// PATH", and cmd.WaitDelay as how long the pipes are read after the
// launcher exited. cmd's context is not watched: sandbox-run's is never
// done.
func spawn(cmd *exec.Cmd) (launched, error) {
	var opened, childEnds []*os.File // closed once the child has them
	closeAll := func() {
		for _, f := range append(opened, childEnds...) {
			f.Close()
		}
	}
	c := &forked{drain: cmd.WaitDelay, copied: make(chan struct{})}
	var copies sync.WaitGroup
	fds := make([]uintptr, 0, 3+len(cmd.ExtraFiles))
	var shared *os.File // the write end of stdout's pipe, for a stderr that is the same writer
	for i, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		switch v := s.(type) {
		case nil:
			flag := os.O_RDONLY
			if i > 0 {
				flag = os.O_WRONLY
			}
			f, err := os.OpenFile(os.DevNull, flag, 0)
			if err != nil {
				closeAll()
				return nil, err
			}
			opened = append(opened, f)
			fds = append(fds, f.Fd())
		case *os.File:
			fds = append(fds, v.Fd())
		case io.Writer:
			if i == 0 {
				closeAll()
				c.closeReadEnds()
				return nil, errors.New("sandbox-run: stdin is neither a file nor nil")
			}
			if i == 2 && shared != nil && sameWriter(s, cmd.Stdout) {
				fds = append(fds, shared.Fd())
				continue
			}
			r, w, err := os.Pipe()
			if err != nil {
				closeAll()
				return nil, err
			}
			childEnds = append(childEnds, w)
			c.readEnds = append(c.readEnds, r)
			if i == 1 {
				shared = w
			}
			copies.Add(1)
			go func() {
				defer copies.Done()
				io.Copy(v, r)
			}()
			fds = append(fds, w.Fd())
		default:
			closeAll()
			c.closeReadEnds()
			return nil, errors.New("sandbox-run: stdin is neither a file nor nil")
		}
	}
	for _, f := range cmd.ExtraFiles {
		fds = append(fds, f.Fd())
	}
	pid, err := syscall.ForkExec(cmd.Path, cmd.Args, &syscall.ProcAttr{
		Dir: cmd.Dir, Env: lastOfEachName(cmd.Env), Files: fds, Sys: cmd.SysProcAttr,
	})
	runtime.KeepAlive(cmd)
	closeAll()
	go func() {
		copies.Wait()
		close(c.copied)
	}()
	if err != nil {
		c.closeReadEnds()
		return nil, &os.PathError{Op: "fork/exec", Path: cmd.Path, Err: err}
	}
	c.pid = pid
	return c, nil
}

// sameWriter reports whether a and b are the same writer, false when
// their type cannot be compared (as exec.Cmd's check).
func sameWriter(a, b any) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// lastOfEachName is env with only the last variable of each name, where
// it stands, as exec.Cmd passes it.
func lastOfEachName(env []string) []string {
	seen := make(map[string]bool, len(env))
	out := make([]string, len(env))
	n := len(env)
	for i := len(env) - 1; i >= 0; i-- {
		name, _, _ := strings.Cut(env[i], "=")
		if seen[name] {
			continue
		}
		seen[name] = true
		n--
		out[n] = env[i]
	}
	return out[n:]
}

// forked is a launcher spawn started.
type forked struct {
	pid      int
	mu       sync.Mutex
	done     bool // waited for: its pid may belong to another process now
	drain    time.Duration
	readEnds []*os.File
	copied   chan struct{} // closed once the pipes are read to their end
}

// Signal sends sig to the launcher, unless it was waited for.
func (c *forked) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return errors.New("sandbox-run: not a signal of this system")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return os.ErrProcessDone
	}
	return unix.Kill(c.pid, s)
}

// Kill sends SIGKILL to the launcher, unless it was waited for.
func (c *forked) Kill() error { return c.Signal(syscall.SIGKILL) }

// Wait waits for the launcher to exit and returns its exit status, or the
// signal it died of (then the status is 128+N), once the pipes fed from
// it were read to their end, or drain after its exit (then they are
// closed, and what a process it left behind still writes is lost; with
// no drain, as exec.Cmd with no WaitDelay, they are read to their end).
func (c *forked) Wait() (int, syscall.Signal) {
	// Exited, not yet reaped: until it is, its pid is not reused, so a
	// Signal meanwhile cannot reach another process.
	var info unix.Siginfo
	for {
		if err := unix.Waitid(unix.P_PID, c.pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			break
		}
	}
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
	var ws unix.WaitStatus
	var err error
	for {
		if _, err = unix.Wait4(c.pid, &ws, 0, nil); err != unix.EINTR {
			break
		}
	}
	if c.readEnds != nil && c.drain > 0 {
		select {
		case <-c.copied:
		case <-time.After(c.drain):
			c.closeReadEnds()
		}
	}
	<-c.copied // at once when the ends were closed
	c.closeReadEnds()
	switch {
	case err != nil:
		return vocab.FatalExit, 0
	case ws.Signaled():
		return 128 + int(ws.Signal()), ws.Signal()
	}
	return ws.ExitStatus(), 0
}

func (c *forked) closeReadEnds() {
	for _, r := range c.readEnds {
		r.Close()
	}
}
