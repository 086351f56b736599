package seatbelt

import (
	"errors"
	"fmt"
	"io/fs"
)

// ErrUnavailable: sandbox-exec cannot be used on this machine (not macOS,
// or the binary is missing or not executable). The provider reports it as
// SANDBOX_UNAVAILABLE and runs nothing.
var ErrUnavailable = errors.New("seatbelt: sandbox-exec unavailable")

// Locator is the platform part: it describes the file at a path, following
// symlinks. SystemLocator is the real one (darwin only; elsewhere it finds
// nothing); tests pass a fake.
type Locator interface {
	Stat(name string) (fs.FileInfo, error)
}

// Locate returns ExecutablePath when l shows an executable regular file
// there, and otherwise an error wrapping ErrUnavailable that says why.
func Locate(l Locator) (string, error) {
	fi, err := l.Stat(ExecutablePath)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrUnavailable, ExecutablePath, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file (mode %v)", ErrUnavailable, ExecutablePath, fi.Mode())
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s is not executable (mode %v)", ErrUnavailable, ExecutablePath, fi.Mode())
	}
	return ExecutablePath, nil
}
