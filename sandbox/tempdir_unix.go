//go:build unix

package sandbox

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
)

// processAlive reports whether pid exists (EPERM: it exists, not ours).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// oNoFollow makes an open fail on a final symlink.
const oNoFollow = syscall.O_NOFOLLOW

// makeRemovable gives the owner write and search rights on every
// directory beneath dir that lacks them (Go's module cache is read-only,
// and a command may chmod its own scratch directories 0500), so that
// RemoveAll can empty them. Each directory is opened without following a
// final symlink and changed through that descriptor: a link the command
// left behind is never followed out of dir.
func makeRemovable(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil
		}
		defer syscall.Close(fd)
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) == nil && st.Mode&0o300 != 0o300 {
			syscall.Fchmod(fd, uint32(st.Mode)&0o7777|0o700)
		}
		return nil
	})
}
