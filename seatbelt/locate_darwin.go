//go:build darwin

package seatbelt

import (
	"io/fs"
	"os"
)

// SystemLocator returns the machine's Locator: os.Stat.
func SystemLocator() Locator { return statLocator{} }

type statLocator struct{}

func (statLocator) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }
