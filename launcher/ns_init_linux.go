package launcher

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// tolerated are the signals pid 1 catches and drops: the terminal sends
// them to the whole process group, the command included, so pid 1 must
// neither die of them nor pass them on a second time. Signals a process
// sent to the launcher come through stage 1's pipe instead.
var tolerated = []os.Signal{unix.SIGINT, unix.SIGQUIT, unix.SIGHUP, unix.SIGTERM, unix.SIGUSR1, unix.SIGUSR2,
	unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU}

// runInit is stage 5: pid 1 of the sandbox. It starts the command as its
// child, passes on the signals stage 1 forwards through sigfd, reaps every
// process that is reparented to it, and returns the command's exit status
// (128+N for a death by signal N). When it returns, the pid namespace ends
// and the kernel kills whatever the command left behind.
func runInit(name string, argv []string, sigfd int) int {
	signal.Notify(make(chan os.Signal, 16), tolerated...)
	path, code := lookCommand(name, argv[0])
	if code != 0 {
		return code
	}
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   os.Environ(),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		return reportExecError(name, argv[0], err)
	}
	go forwardSignals(sigfd, proc.Pid)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: wait: %v\n", name, err)
			return exitNotExecutable
		}
		if pid != proc.Pid {
			continue // an orphan reparented to pid 1: reaped
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus()
		case ws.Signaled():
			return 128 + int(ws.Signal())
		}
	}
}

// forwardSignals passes each signal number stage 1 writes to the command.
// End of file means stage 1 is gone: so must the sandbox be.
func forwardSignals(sigfd, pid int) {
	var b [1]byte
	for {
		n, err := unix.Read(sigfd, b[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if n != 1 || err != nil {
			unix.Kill(pid, unix.SIGKILL)
			os.Exit(128 + int(unix.SIGKILL))
		}
		unix.Kill(pid, syscall.Signal(b[0]))
	}
}

// lookCommand finds argv[0] in PATH inside the sandbox: 127 when it is not
// there, 126 when it cannot be run, as env(1) does.
func lookCommand(name, cmd string) (string, int) {
	path, err := exec.LookPath(cmd)
	if err == nil || errors.Is(err, exec.ErrDot) {
		return path, 0
	}
	var ee *exec.Error
	if errors.As(err, &ee) && errors.Is(ee.Err, exec.ErrNotFound) {
		fmt.Fprintf(os.Stderr, "%s: %s: command not found\n", name, cmd)
		return "", exitNotFound
	}
	return "", reportExecError(name, cmd, err)
}
