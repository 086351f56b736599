package seatbelt

import (
	"errors"
	"io/fs"
	"runtime"
	"testing"
)

type fakeLocator struct {
	fi   fs.FileInfo
	err  error
	seen string
}

func (l *fakeLocator) Stat(name string) (fs.FileInfo, error) {
	l.seen = name
	return l.fi, l.err
}

func TestLocate(t *testing.T) {
	cases := []struct {
		name string
		l    *fakeLocator
		ok   bool
	}{
		{"present", &fakeLocator{fi: fakeInfo{"sandbox-exec", 0o755}}, true},
		{"execute bit for others only", &fakeLocator{fi: fakeInfo{"sandbox-exec", 0o701}}, true},
		{"missing", &fakeLocator{err: fs.ErrNotExist}, false},
		{"not executable", &fakeLocator{fi: fakeInfo{"sandbox-exec", 0o644}}, false},
		{"a directory", &fakeLocator{fi: fakeInfo{"sandbox-exec", fs.ModeDir | 0o755}}, false},
	}
	for _, c := range cases {
		path, err := Locate(c.l)
		if c.l.seen != "/usr/bin/sandbox-exec" {
			t.Errorf("%s: looked at %q", c.name, c.l.seen)
		}
		if c.ok {
			if err != nil || path != ExecutablePath {
				t.Errorf("%s: Locate = %q, %v", c.name, path, err)
			}
			continue
		}
		if !errors.Is(err, ErrUnavailable) || path != "" {
			t.Errorf("%s: Locate = %q, %v; want ErrUnavailable", c.name, path, err)
		}
	}
	if _, err := Locate(&fakeLocator{err: fs.ErrNotExist}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the cause is not wrapped: %v", err)
	}
}

func TestSystemLocatorOffDarwin(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("on darwin the system locator is real")
	}
	if _, err := Locate(SystemLocator()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("off darwin: err = %v, want ErrUnavailable", err)
	}
}
