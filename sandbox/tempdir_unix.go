//go:build unix

package sandbox

import (
	"errors"
	"syscall"
)

// processAlive reports whether pid exists (EPERM: it exists, not ours).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// oNoFollow makes an open fail on a final symlink.
const oNoFollow = syscall.O_NOFOLLOW

// oNoBlock opens a FIFO without waiting for a writer, and a terminal
// without making it the controlling one.
const oNoBlock = syscall.O_NONBLOCK | syscall.O_NOCTTY
