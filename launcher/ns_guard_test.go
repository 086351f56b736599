//go:build linux && cgo

package launcher

import "testing"

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
