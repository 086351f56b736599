package sandbox

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestPrivateTempAndSweep(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir, err := newPrivateTemp()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("temp dir %s: %v %v", dir, fi, err)
	}
	parent := filepath.Dir(dir)

	// A dir of a process that is gone, and one of a live process.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(parent, "wrap-"+strconv.Itoa(dead.Process.Pid)+"-1")
	live := filepath.Join(parent, "wrap-1-2") // pid 1 always exists
	other := filepath.Join(parent, "not-ours")
	for _, d := range []string{stale, live, other} {
		os.MkdirAll(filepath.Join(d, "sub"), 0o700)
	}
	sweepStale(parent, math.MaxInt)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale dir survived: %v", err)
	}
	for _, d := range []string{live, other, dir} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

// TestTempParentRefusesForeignParent: a parent planted by someone else (a
// symlink to their directory, an open directory) is never used; the
// provider falls back to one of its own beside it, and finds it again.
func TestTempParentRefusesForeignParent(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	parent := filepath.Join(tmp, "sandbox-local-"+strconv.Itoa(os.Getuid()))
	target := filepath.Join(tmp, "attacker")
	os.Mkdir(target, 0o777)
	os.Symlink(target, parent)
	got, err := tempParent()
	if err != nil || got == parent || !strings.HasPrefix(got, parent+"-") {
		t.Fatalf("symlinked parent: %q %v, want a fallback %s-*", got, err, parent)
	}
	if again, _ := tempParent(); again != got {
		t.Errorf("the fallback was not found again: %q then %q", got, again)
	}
	os.Remove(parent)
	os.Mkdir(parent, 0o777)
	os.Chmod(parent, 0o777)
	if again, err := tempParent(); err != nil || again != got {
		t.Errorf("world-writable parent: %q %v, want the fallback %q", again, err, got)
	}
	os.Chmod(parent, 0o700)
	if p, err := tempParent(); err != nil || p != parent {
		t.Fatalf("control: %q %v", p, err)
	}
}

func TestWrapPID(t *testing.T) {
	for name, want := range map[string]int{"wrap-42-123": 42, "wrap-x-1": 0, "wrap-42": 0, "other-1-2": 0, "wrap--1": 0} {
		got, ok := wrapPID(name)
		if (want != 0) != ok || got != want && ok {
			t.Errorf("wrapPID(%q) = %d, %v", name, got, ok)
		}
	}
}
