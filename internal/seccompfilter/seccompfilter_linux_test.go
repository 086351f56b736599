package seccompfilter

import (
	"errors"
	"runtime"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// The cached program is the one a fresh compile gives, per key, whatever
// else the spec holds; and every part of the key changes the program.
func TestBPFCachedPerKey(t *testing.T) {
	seen := map[string]programKey{}
	for _, profile := range []Profile{Landlock, Namespaces} {
		for _, allow := range []bool{false, true} {
			for _, socks := range [][]string{nil, {"/run/a.sock"}} {
				first, err := BPF(vocab.Spec{AllowNetwork: allow, UnixSockets: socks, Writable: []string{"/a"}}, profile)
				if err != nil {
					t.Fatal(err)
				}
				other := append([]string(nil), socks...)
				if len(other) > 0 {
					other[0] = "/run/b.sock"
				}
				again, err := BPF(vocab.Spec{AllowNetwork: allow, UnixSockets: other, DenyRead: []string{"/b"}}, profile)
				if err != nil {
					t.Fatal(err)
				}
				k := programKey{profile: profile, allowNetwork: allow, unixSockets: len(socks) > 0}
				fresh, err := compile(k)
				if err != nil {
					t.Fatal(err)
				}
				if first != again || first != fresh {
					t.Errorf("%+v: cached program differs from a fresh compile", k)
				}
				if prev, ok := seen[first]; ok && !(allow && prev.allowNetwork) {
					// Under network allow nothing socket-related is in the
					// filter, so the UNIX-socket part may not matter there.
					t.Errorf("%+v and %+v compile to the same program", prev, k)
				}
				seen[first] = k
			}
		}
	}
}

// Install loads the program on the calling thread only: a socket is
// refused there, and still allowed on other threads.
func TestInstallOnThread(t *testing.T) {
	prog, err := BPF(vocab.Spec{}, Landlock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		// The thread is never unlocked: it exits with the goroutine, and
		// the filter with it.
		runtime.LockOSThread()
		if err := Install(prog); err != nil {
			done <- err
			return
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
			done <- errors.New("socket allowed under the filter")
			return
		}
		if !errors.Is(err, unix.EACCES) {
			done <- err
			return
		}
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("socket on another thread: %v", err)
	}
	unix.Close(fd)
}

func TestInstallRefusesPartialInstructions(t *testing.T) {
	for _, p := range []string{"", "00", "zz00000000000000", "0000000000000000ff"} {
		if err := Install(p); err == nil {
			t.Errorf("Install(%q) succeeded", p)
		}
	}
}

// Guarded names turn the guard's rules on under the namespaces profile
// only: its program changes, the landlock profile's does not.
func TestGuardInKey(t *testing.T) {
	guarded := vocab.Spec{Guarded: []string{"/ws/.git/commondir"}}
	for _, c := range []struct {
		profile Profile
		differ  bool
	}{{Namespaces, true}, {Landlock, false}} {
		with, err := BPF(guarded, c.profile)
		if err != nil {
			t.Fatal(err)
		}
		without, err := BPF(vocab.Spec{}, c.profile)
		if err != nil {
			t.Fatal(err)
		}
		if (with != without) != c.differ {
			t.Errorf("profile %d: guarded names change the program: %v, want %v", c.profile, with != without, c.differ)
		}
	}
}
