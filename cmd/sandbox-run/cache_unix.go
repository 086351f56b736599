//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// readNoFollow reads a small regular file without following a final symlink.
func readNoFollow(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 4096))
}
