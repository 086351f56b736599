package launcher

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// seatbeltStep is the seatbelt-run step, which sandbox-exec starts inside
// the applied sandbox ("SELF seatbelt-run -- CMD ARGS..."): it reports that
// the sandbox is applied on the descriptor vocab.AppliedEnv names (when
// set), closes it, and execs the command as execvp(3) would. What it needs
// from the system is in its fields, so it is tested on any platform.
type seatbeltStep struct {
	// env is the step's environment: the command's, plus AppliedEnv.
	env []string
	// report writes vocab.AppliedMarker to the descriptor fd and closes
	// it; it refuses a descriptor that is not a pipe.
	report func(fd int) error
	// isExec reports whether path is an executable regular file.
	isExec func(path string) bool
	// exec replaces the process with path; it returns only on failure.
	exec func(path string, argv, env []string) error
	// stderr is where the step's own lines go.
	stderr io.Writer
}

// defaultPath is execvp's search path on darwin when PATH is unset.
const defaultPath = "/usr/bin:/bin"

// run runs the step with its arguments (those after "seatbelt-run") and
// returns the exit status when it did not exec the command: 125 with one
// "seatbelt-run: fatal: " line when the command has not run and the
// sandbox was not reported applied (bad arguments, a report that could not
// be written); 127 or 126 with a "seatbelt-run: execvp() of" line when the
// command could not be executed, after the report: the command's outcome,
// like env(1)'s.
func (s seatbeltStep) run(args []string) int {
	if len(args) < 2 || args[0] != "--" || args[1] == "" {
		return s.fatal(fmt.Sprintf("want -- COMMAND [ARGS...], got %q", args))
	}
	argv := args[1:]
	env, fdText, had := takeVar(s.env, vocab.AppliedEnv)
	if had {
		fd, err := strconv.Atoi(fdText)
		if err != nil || fd < 3 {
			return s.fatal(fmt.Sprintf("%s=%q is not a descriptor above 2", vocab.AppliedEnv, fdText))
		}
		if err := s.report(fd); err != nil {
			return s.fatal(fmt.Sprintf("cannot report the sandbox applied on descriptor %d: %v", fd, err))
		}
	}
	path, err := lookPath(argv[0], pathOf(env), s.isExec)
	if err == nil {
		err = s.exec(path, argv, env)
		if errors.Is(err, syscall.ENOEXEC) {
			// execvp runs a file without a #! line with the shell.
			err = s.exec("/bin/sh", append([]string{"sh", path}, argv[1:]...), env)
		}
	}
	fmt.Fprintf(s.stderr, "%s: execvp() of '%s' failed: %v\n", vocab.SeatbeltRun, vocab.OneLine(argv[0]), err)
	if errors.Is(err, syscall.ENOENT) {
		return vocab.ExitNotFound
	}
	return vocab.ExitNotExecutable
}

func (s seatbeltStep) fatal(reason string) int {
	fmt.Fprintln(s.stderr, vocab.UnsignedFatalPrefix(vocab.SeatbeltRun)+vocab.OneLine(reason))
	return vocab.FatalExit
}

// takeVar returns env without any entry for name, and the value of the
// last one.
func takeVar(env []string, name string) (rest []string, value string, had bool) {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			value, had = v, true
			continue
		}
		rest = append(rest, kv)
	}
	return rest, value, had
}

func pathOf(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v
		}
	}
	return defaultPath
}

// lookPath finds file as execvp does: a name with a slash as it is,
// otherwise the first executable file of that name in the directories of
// path (an empty directory is the current one).
func lookPath(file, path string, isExec func(string) bool) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		if p := dir + "/" + file; isExec(p) {
			return p, nil
		}
	}
	return "", syscall.ENOENT
}
