package sandbox

import (
	"os/exec"
	"syscall"
)

// dieWithSpawner makes the kernel SIGKILL the launcher when the thread
// that spawned it exits (see Wrapped.Command).
func dieWithSpawner(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
