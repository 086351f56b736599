//go:build linux && cgo && sandbox_ctest

package launcher

import (
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
