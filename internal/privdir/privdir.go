// Package privdir makes and checks per-user private directories on shared
// ground (/tmp, a cache directory a sandboxed command may be able to
// write): a real directory, owned by this user, with no access for others.
// A symlink or a directory planted by someone else is refused, never used.
package privdir

import (
	"fmt"
	"io/fs"
	"os"
)

// Ensure creates dir (mode 0700, parents as needed) if it is missing and
// checks that it is a private directory of this user.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 || fi.Mode().Perm()&0o077 != 0 || !ownedByMe(fi) {
		return fmt.Errorf("%s is not a private directory of this user (mode %v): refusing to use it", dir, fi.Mode())
	}
	return nil
}
