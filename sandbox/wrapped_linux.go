package sandbox

import (
	"os/exec"
	"syscall"
	"time"
)

// dieWithSpawner makes the kernel SIGKILL the launcher when the thread
// that spawned it exits (see Wrapped.Command).
func dieWithSpawner(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// killAfter is how long Command's cmd waits, once its context ended, for
// the command to exit on the SIGTERM it was sent, before it kills the
// sandbox (cmd.WaitDelay), as docker stop does.
const killAfter = 10 * time.Second

// stopGracefully makes the end of cmd's context send the launcher SIGTERM,
// which the launchers pass on to the command, and lets exec kill the
// launcher, and with it the sandbox, killAfter later if it still runs.
func stopGracefully(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = killAfter
}
