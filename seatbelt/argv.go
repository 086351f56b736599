package seatbelt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// ExecutablePath is the only sandbox-exec this package runs. It is never
// looked up in PATH: a sandbox-exec planted earlier in PATH would run the
// command unconfined. /usr/bin is on the sealed system volume.
const ExecutablePath = "/usr/bin/sandbox-exec"

// ExecutableName is Args[0] of the wrapped command.
const ExecutableName = "sandbox-exec"

// ErrNoCommand: Args was given an empty argv.
var ErrNoCommand = errors.New("seatbelt: no command to run")

// Args returns the argument vector that runs argv under the profile, for
// the program at ExecutablePath:
//
//	sandbox-exec -p TEXT -D NAME=VALUE ... -- argv...
//
// Args[0] is ExecutableName. "--" ends sandbox-exec's options, so a command
// whose name starts with "-" is still the command. A parameter name with
// "=" or a value or argument with a NUL byte cannot be passed and is an
// error.
func (p Profile) Args(argv []string) ([]string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, ErrNoCommand
	}
	args := make([]string, 0, 4+2*len(p.Params)+len(argv))
	args = append(args, ExecutableName, "-p", p.Text)
	for _, prm := range p.Params {
		if prm.Name == "" || strings.ContainsAny(prm.Name, "=\x00") {
			return nil, fmt.Errorf("seatbelt: parameter name %q cannot be passed with -D: %w", prm.Name, ErrInvalidPath)
		}
		if strings.IndexByte(prm.Value, 0) >= 0 {
			return nil, fmt.Errorf("seatbelt: parameter %s: value %q contains a NUL byte: %w", prm.Name, prm.Value, ErrInvalidPath)
		}
		args = append(args, "-D", prm.Name+"="+prm.Value)
	}
	args = append(args, "--")
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("seatbelt: argument %d %q contains a NUL byte: %w", i, a, ErrInvalidPath)
		}
	}
	return append(args, argv...), nil
}

// LaunchArgs returns the argument vector that runs argv under the profile
// through the seatbelt-run step of the provider's own binary self:
//
//	sandbox-exec -p TEXT -D NAME=VALUE ... -- SELF seatbelt-run -- argv...
//
// sandbox-exec applies the profile and execs self, which (launcher.Init)
// reports on the descriptor SANDBOX_LOCAL_APPLIED_FD names that the sandbox is
// applied, closes it and execs argv. A "sandbox-exec:" line is then a
// runner failure only when no report came: the command cannot forge one.
// self must be absolute and without a NUL byte.
func (p Profile) LaunchArgs(self string, argv []string) ([]string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, ErrNoCommand
	}
	if self == "" || self[0] != '/' || strings.IndexByte(self, 0) >= 0 {
		return nil, fmt.Errorf("seatbelt: launcher binary %q is not an absolute path: %w", self, ErrInvalidPath)
	}
	return p.Args(append([]string{self, vocab.SeatbeltRun, "--"}, argv...))
}
