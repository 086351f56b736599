//go:build unix && !linux

package sandbox

import (
	"io/fs"
	"path/filepath"
	"syscall"
)

// makeRemovable gives the owner read, write and search rights on every
// directory beneath dir that lacks them, so that RemoveAll can empty them
// (see the Linux version). Without O_PATH, a directory the owner cannot
// open (mode 0) stays as it is.
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
		if syscall.Fstat(fd, &st) == nil && st.Mode&0o700 != 0o700 {
			syscall.Fchmod(fd, uint32(st.Mode)&0o7777|0o700)
		}
		return nil
	})
}
