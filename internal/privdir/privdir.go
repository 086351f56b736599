// Package privdir makes and checks per-user private directories on shared
// ground (/tmp, a cache directory a sandboxed command may be able to
// write): a real directory, owned by this user, with no access for others.
// A symlink or a directory planted by someone else is refused, never used.
package privdir

import (
	"errors"
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
	return check(dir, fi)
}

// ErrNotPrivate is wrapped by the errors of Ensure and Check for a path
// that exists but is not a private directory of this user.
var ErrNotPrivate = errors.New("not a private directory of this user")

// Check checks, without creating anything, that dir is a private directory
// of this user.
func Check(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	return check(dir, fi)
}

func check(dir string, fi fs.FileInfo) error {
	if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 || fi.Mode().Perm()&0o077 != 0 || !ownedByMe(fi) {
		owner := ""
		if uid, ok := ownerOf(fi); ok {
			owner = fmt.Sprintf(", owner uid %d", uid)
		}
		return fmt.Errorf("%s (mode %v%s): %w: refusing to use it", dir, fi.Mode(), owner, ErrNotPrivate)
	}
	return nil
}
