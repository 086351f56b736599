//go:build !darwin

package seatbelt

import (
	"errors"
	"io/fs"
)

// errNotDarwin is what SystemLocator's Stat returns off macOS.
var errNotDarwin = errors.New("seatbelt runs only on darwin")

// SystemLocator returns the machine's Locator. Off macOS it finds nothing,
// whatever lies at ExecutablePath, so Locate reports ErrUnavailable.
func SystemLocator() Locator { return noLocator{} }

type noLocator struct{}

func (noLocator) Stat(name string) (fs.FileInfo, error) {
	return nil, &fs.PathError{Op: "stat", Path: name, Err: errNotDarwin}
}
