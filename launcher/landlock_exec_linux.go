package launcher

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// execCommand replaces the process with argv and env, looking argv[0] up
// in PATH when it has no slash. It returns only when that failed, with the
// exit status to use after saying why on stderr.
func execCommand(name string, argv, env []string) int {
	name = programName(name)
	path, code := lookCommand(name, argv[0])
	if code != 0 {
		return code
	}
	err := syscall.Exec(path, argv, env)
	return reportExecError(name, argv[0], err)
}

// programName is the name the command's exec failures are told under: the
// running executable's, which is the consumer's (sandbox-run for the CLI),
// since the launcher is that binary re-executed; the launcher's internal
// name only when the executable cannot be read.
func programName(launcher string) string {
	exe, err := os.Executable()
	if err != nil {
		return launcher
	}
	if base := filepath.Base(exe); base != "/" && base != "." {
		return base
	}
	return launcher
}

func reportExecError(name, cmd string, err error) int {
	msg := unwrapPathError(err).Error()
	if len(msg) > 0 && 'a' <= msg[0] && msg[0] <= 'z' {
		msg = string(msg[0]-'a'+'A') + msg[1:] // strerror's words, as the C launchers print them
	}
	fmt.Fprintf(os.Stderr, "%s: %s: %s\n", name, cmd, msg)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return vocab.ExitNotFound
	}
	return vocab.ExitNotExecutable
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
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
		return "", vocab.ExitNotFound
	}
	return "", reportExecError(name, cmd, err)
}
