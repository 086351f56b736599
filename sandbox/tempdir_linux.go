package sandbox

import (
	"io/fs"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// makeRemovable gives the owner read, write and search rights on every
// directory beneath dir that lacks them (Go's module cache is read-only,
// and a command may chmod its own scratch directories 0500, or 0 to keep
// them from Cleanup), so that RemoveAll can empty them. Each directory is
// opened as O_PATH without following a final symlink (which needs no
// right on the directory itself) and changed through that descriptor: a
// link the command left behind is never followed out of dir.
func makeRemovable(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&0o700 != 0o700 {
			// fchmod refuses an O_PATH descriptor; its /proc link does not.
			unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), uint32(st.Mode)&0o7777|0o700)
		}
		return nil
	})
}
