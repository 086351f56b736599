package seatbelt

import (
	"errors"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

func TestResolve(t *testing.T) {
	loops := macFS()
	loops.symlink("/Users/me/a", "b")
	loops.symlink("/Users/me/b", "a")

	folded := macFS()
	folded.foldCase = true

	absLink := macFS()
	absLink.symlink("/Users/me/cache", "/tmp/cache")
	absLink.symlink("/Users/me/data", "/System/Volumes/Data/Users/me/ws")
	absLink.symlink("/Users/me/ws/up", "..")

	cases := []struct {
		name        string
		fsys        *fakeFS
		in          string
		followFinal bool
		want        string
		wantLinks   []string
	}{
		{"tmp alias", macFS(), "/tmp/x", true, "/private/tmp/x", nil},
		{"var alias, existing", macFS(), "/var/folders/zz/xy/T/sbx-1", true, "/private/var/folders/zz/xy/T/sbx-1", nil},
		{"etc alias", macFS(), "/etc/hosts", true, "/private/etc/hosts", nil},
		{"alias applies only at the root", macFS(), "/Users/me/tmp/x", true, "/Users/me/tmp/x", nil},
		{"already canonical", macFS(), "/private/tmp/cache", true, "/private/tmp/cache", nil},
		{"clean: dots, slashes", macFS(), "//Users/./me//ws/", true, "/Users/me/ws", nil},
		{"dot-dot lexical in existing dirs", macFS(), "/Users/me/ws/src/../.git", true, "/Users/me/ws/.git", nil},
		{"dot-dot above root stays at root", macFS(), "/../../tmp", true, "/private/tmp", nil},
		{"relative symlink followed", macFS(), "/Users/me/link-ws/src", true, "/Users/me/ws/src", []string{"/Users/me/link-ws"}},
		{"final symlink followed", macFS(), "/Users/me/link-ws", true, "/Users/me/ws", []string{"/Users/me/link-ws"}},
		{"final symlink kept as named", macFS(), "/Users/me/link-ws", false, "/Users/me/link-ws", nil},
		{"intermediate symlink followed even when final is kept", macFS(), "/Users/me/link-ws/.git/hooks", false, "/Users/me/ws/.git/hooks", []string{"/Users/me/link-ws"}},
		{"symlink to a parent-relative dir", macFS(), "/Users/me/ws2/.git/hooks", true, "/Users/me/ws2/.githooks", []string{"/Users/me/ws2/.git/hooks"}},
		{"protected symlink kept as named", macFS(), "/Users/me/ws2/.git/hooks", false, "/Users/me/ws2/.git/hooks", nil},
		{"absolute target through an alias", absLink, "/Users/me/cache/go", true, "/private/tmp/cache/go", []string{"/Users/me/cache"}},
		{"data volume spelling", absLink, "/Users/me/data", true, "/Users/me/ws", []string{"/Users/me/data"}},
		{"data volume spelling in the input", macFS(), "/System/Volumes/Data/Users/me/ws", true, "/Users/me/ws", nil},
		{"data volume itself is kept", macFS(), "/System/Volumes/Data", true, "/System/Volumes/Data", nil},
		{"dot-dot after a symlink uses the target's parent", absLink, "/Users/me/cache/../x", true, "/private/tmp/x", []string{"/Users/me/cache"}},
		{"symlink to dot-dot", absLink, "/Users/me/ws/up/.ssh", true, "/Users/me/.ssh", []string{"/Users/me/ws/up"}},
		{"missing tail appended as spelled", macFS(), "/Users/me/ws/new/dir/../x", true, "/Users/me/ws/new/x", nil},
		{"file as a directory ends resolution", macFS(), "/Users/me/ws/src/main.go/x", true, "/Users/me/ws/src/main.go/x", nil},
		{"on-disk case on a case-insensitive volume", folded, "/users/ME/WS/.GIT/hooks", true, "/Users/me/ws/.git/hooks", nil},
		{"missing name keeps its spelling", folded, "/Users/me/ws/.GIT/Config.Worktree", true, "/Users/me/ws/.git/Config.Worktree", nil},
		{"exact case kept on a case-sensitive volume", macFS(), "/Users/me/WS", true, "/Users/me/WS", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := newResolver(c.fsys).resolve(c.in, c.followFinal)
			if err != nil {
				t.Fatalf("resolve(%q): %v", c.in, err)
			}
			if got.path != c.want {
				t.Errorf("resolve(%q, follow=%v) = %q, want %q", c.in, c.followFinal, got.path, c.want)
			}
			if !reflect.DeepEqual(got.links, c.wantLinks) {
				t.Errorf("resolve(%q) links = %q, want %q", c.in, got.links, c.wantLinks)
			}
		})
	}

	t.Run("loop", func(t *testing.T) {
		_, err := newResolver(loops).resolve("/Users/me/a/x", true)
		if !errors.Is(err, ErrSymlinkLoop) {
			t.Fatalf("err = %v, want ErrSymlinkLoop", err)
		}
	})
}

func TestResolveRejects(t *testing.T) {
	for _, p := range []string{"", "relative/path", "./x", "/a\x00b"} {
		if _, err := newResolver(macFS()).resolve(p, true); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("resolve(%q) err = %v, want ErrInvalidPath", p, err)
		}
	}
	f := macFS()
	f.lstatErr["/Users/me/ws"] = syscall.EACCES
	_, err := newResolver(f).resolve("/Users/me/ws/x", true)
	if !errors.Is(err, syscall.EACCES) || !strings.Contains(err.Error(), "/Users/me/ws") {
		t.Errorf("err = %v, want EACCES naming the path", err)
	}
	f = macFS()
	f.symlink("/Users/me/empty", "")
	if _, err := newResolver(f).resolve("/Users/me/empty/x", true); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("empty symlink target: err = %v, want ErrInvalidPath", err)
	}
}

func TestAncestors(t *testing.T) {
	got := ancestors("/Users/me/ws/.git/hooks")
	want := []string{"/Users/me/ws/.git", "/Users/me/ws", "/Users/me", "/Users"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ancestors = %q, want %q", got, want)
	}
	if got := ancestors("/x"); got != nil {
		t.Errorf("ancestors(/x) = %q, want none", got)
	}
}

func TestOSFS(t *testing.T) {
	dir := t.TempDir()
	fsys := OSFS()
	if err := os.Symlink(dir+"/target", dir+"/link"); err != nil {
		t.Skip("cannot make a symlink here:", err)
	}
	fi, err := fsys.Lstat(dir + "/link")
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("Lstat link: %v, %v", fi, err)
	}
	if got, err := fsys.Readlink(dir + "/link"); err != nil || got != dir+"/target" {
		t.Errorf("Readlink = %q, %v", got, err)
	}
	names, err := fsys.ReadDirNames(dir)
	if err != nil || !reflect.DeepEqual(names, []string{"link"}) {
		t.Errorf("ReadDirNames = %q, %v", names, err)
	}
	if _, err := fsys.ReadDirNames(dir + "/missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadDirNames(missing) err = %v", err)
	}
}

// TestResolveMissing: where a path stops existing, in the canonical
// spelling, and the names below it.
func TestResolveMissing(t *testing.T) {
	r := newResolver(macFS())
	for _, c := range []struct {
		in, existing, missing string
	}{
		{"/Users/me/ws/.git/config", "", ""},
		{"/Users/me/ws/.git/config.worktree", "/Users/me/ws/.git", "config.worktree"},
		{"/Users/me/fresh/.git/hooks", "/Users/me", "fresh|.git|hooks"},
		{"/tmp/nosuch/x", "/private/tmp", "nosuch|x"},
		{"/System/Volumes/Data/Users/nobody/.env", "/Users", "nobody|.env"},
		{"/Users/me/nosuch/../ws", "/Users/me", "ws"}, // not looked up after a missing name: counted missing
		{"/Users/me/ws/nosuch/..", "", ""},
		{"/Users/me/nosuch/../.env", "/Users/me", ".env"},
		{"/Users/me/link-ws/.git/info", "/Users/me/ws/.git", "info"},
	} {
		res, err := r.resolve(c.in, true)
		if err != nil {
			t.Fatal(err)
		}
		if res.existing != c.existing || strings.Join(res.missing, "|") != c.missing {
			t.Errorf("%s: existing %q missing %q, want %q %q", c.in, res.existing, res.missing, c.existing, c.missing)
		}
	}
}
