//go:build linux

package launcher

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenStrictAndItsFallback: both ways of opening a path without
// symlinks open the same object, and refuse a symlink anywhere on the path.
func TestOpenStrictAndItsFallback(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real", "sub")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	var want unix.Stat_t
	if err := unix.Stat(real, &want); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func(string, int) (int, error){"openat2": openStrict, "by components": openByComponents} {
		fd, err := open(real, unix.O_DIRECTORY)
		if err != nil {
			t.Fatalf("%s: %s: %v", name, real, err)
		}
		var got unix.Stat_t
		unix.Fstat(fd, &got)
		unix.Close(fd)
		if got.Dev != want.Dev || got.Ino != want.Ino {
			t.Errorf("%s: %s opened another object", name, real)
		}
		for _, p := range []string{filepath.Join(base, "link"), filepath.Join(base, "link", "sub")} {
			if fd, err := open(p, 0); !errors.Is(err, unix.ELOOP) {
				unix.Close(fd)
				t.Errorf("%s: %s: %v, want ELOOP", name, p, err)
			}
		}
		if fd, err := open("/", unix.O_DIRECTORY); err != nil {
			t.Errorf("%s: /: %v", name, err)
		} else {
			unix.Close(fd)
		}
	}
}
