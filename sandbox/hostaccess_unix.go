//go:build unix

package sandbox

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// hostPermits reports whether this process's user may read p (it must
// exist) or write it (it, or the nearest existing directory above it where
// it would be made), by the host's permissions alone: what the user could
// do unconfined.
func hostPermits(p string, write bool) bool {
	if !write {
		return unix.Faccessat(unix.AT_FDCWD, p, unix.R_OK, unix.AT_EACCESS) == nil
	}
	for q := p; ; q = filepath.Dir(q) {
		if _, err := os.Lstat(q); err == nil {
			mode := uint32(unix.W_OK)
			if q != p {
				mode |= unix.X_OK // making an entry in a directory
			}
			return unix.Faccessat(unix.AT_FDCWD, q, mode, unix.AT_EACCESS) == nil
		}
		if filepath.Dir(q) == q {
			return false
		}
	}
}
