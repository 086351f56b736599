//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReportDir walks report directories through the kinds of link a
// path can hold: those outside the writable root are followed (absolute,
// relative, with ".."), those inside it refused, and a loop ends.
func TestReportDir(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	for _, d := range []string{"ws/out", "other/deep"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"abs":        ws,
		"rel":        "other/../ws",
		"up":         "other/deep/../../ws/out",
		"ws/planted": filepath.Join(base, "other"),
		"via":        "ws/planted",
		"loop":       "loop",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(base, name)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		dir, want, err string // want: the directory reached; err: part of the error
	}{
		{"ws/out", "ws/out", ""},
		{"abs/out", "ws/out", ""},
		{"rel/out", "ws/out", ""},
		{"up", "ws/out", ""},
		{"ws/out/../out", "ws/out", ""},
		{"ws/planted", "", "symbolic link inside the writable root"},
		{"ws/planted/deep", "", "symbolic link inside the writable root"},
		{"abs/planted", "", "symbolic link inside the writable root"},
		{"via", "", "symbolic link inside the writable root"},
		{"loop", "", "too many levels"},
		{"missing/x", "", "no such file"},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			fd, err := reportDir(filepath.Join(base, c.dir), []string{ws})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					unix.Close(fd)
					t.Fatalf("err = %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			var got, want unix.Stat_t
			unix.Fstat(fd, &got)
			unix.Stat(filepath.Join(base, c.want), &want)
			if got.Ino != want.Ino || got.Dev != want.Dev {
				t.Errorf("reached inode %d, want %s's %d", got.Ino, c.want, want.Ino)
			}
		})
	}
}
