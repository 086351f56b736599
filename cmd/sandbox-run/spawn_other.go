//go:build !linux

package main

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// spawn starts cmd's launcher with exec.Cmd.Start.
func spawn(cmd *exec.Cmd) (launched, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return execChild{cmd}, nil
}

// execChild is a launcher exec.Cmd started.
type execChild struct{ cmd *exec.Cmd }

func (c execChild) Signal(s os.Signal) error { return c.cmd.Process.Signal(s) }
func (c execChild) Kill() error              { return c.cmd.Process.Kill() }

// Wait is the child's exit status, and the signal that killed it (then
// the status is 128+N).
func (c execChild) Wait() (int, syscall.Signal) {
	c.cmd.Wait()
	if c.cmd.ProcessState == nil {
		return vocab.FatalExit, 0
	}
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal()
	}
	return c.cmd.ProcessState.ExitCode(), 0
}
