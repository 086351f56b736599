//go:build linux && cgo && sandbox_ctest

package launcher

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/seccompfilter/key"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// TestGuardEndsWithTheFilter: the guard serves while a process is under
// the command's filter (the positive control: it did not end within 200 ms
// of serving) and exits by itself once none is left, instead of reading a
// listener the kernel then answers at once with ENOENT, which would spin
// on a CPU until the pid namespace ends (taking it from pid 1 as it learns
// the command's exit).
func TestGuardEndsWithTheFilter(t *testing.T) {
	switch got := guardLifetime(); got {
	case 0:
	case 3:
		t.Fatal("the guard ended while a process was still under the filter")
	case 4:
		t.Fatal("the guard ended otherwise than by exiting 0")
	case 5:
		t.Fatal("the guard was still running 2 s after the filter's last process died")
	default:
		t.Fatalf("set-up failed: %d", got)
	}
}

// TestGuardsAgreesWithTheFilter: ns-run loads the filter with a listener
// and runs its guard exactly when the provider picked the program with the
// guard's rules (key.Guards): the filter's notifications with no listener
// would fail every creating or writing call with ENOSYS, and a guard with
// no rules would protect nothing.
func TestGuardsAgreesWithTheFilter(t *testing.T) {
	for _, s := range []vocab.Spec{
		{Writable: []string{"/ws"}, TempDir: "/t"},
		{Writable: []string{"/ws"}, TempDir: "/t", Guarded: []string{"/ws/.envrc"}},
		{Writable: []string{"/ws"}, TempDir: "/t", ReadOnly: []string{"/ws/.git/config"}},
		{Writable: []string{"/ws"}, TempDir: "/t", ReadOnly: []string{"/etc/x"}},
		{Writable: []string{"/ws"}, TempDir: "/t", DenyRead: []string{"/ws/.env"}},
		{Writable: []string{"/ws"}, TempDir: "/t", DenyRead: []string{"/home/u/.ssh", "/wsx"}},
		{TempDir: "/t", DenyRead: []string{"/t/x"}},
		{TempDir: "/t", DenyRead: []string{"/home/u/.ssh"}},
		{Writable: []string{"/"}, TempDir: "/t", DenyRead: []string{"/home/u/.ssh"}},
	} {
		s.Token, s.Argv = tok, []string{"true"}
		got, err := cGuards(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := key.Guards(s); got != want {
			t.Errorf("%+v: ns_guards %v, key.Guards %v", s, got, want)
		}
	}
}

// TestGuardKeptEntryOutlivesNoThread: the guard keeps each thread's /proc
// entry between its calls; when that thread is gone and a new one holds
// its number, the new one's create is made in its own working directory
// with its own umask, not the old one's. The first create is the positive
// control.
func TestGuardKeptEntryOutlivesNoThread(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a pid namespace of its own, whose next pid it sets")
	}
	a, b := t.TempDir(), t.TempDir()
	if got := guardTIDReuse(a, b); got != 0 {
		t.Fatalf("sbx_guard_tid_reuse: %d (20-22: the second process with pid 100 failed; else the set-up)", got)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{filepath.Join(a, "first"), 0o644}, {filepath.Join(b, "second"), 0o600}} {
		st, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, st.Mode().Perm(), c.mode)
		}
	}
	if _, err := os.Lstat(filepath.Join(a, "second")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("second, made by the new pid 100, is in the old one's directory: %v", err)
	}
}
