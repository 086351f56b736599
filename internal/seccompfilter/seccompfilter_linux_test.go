package seccompfilter

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/seccompfilter/key"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// BPF returns the generated program of the spec's key, whatever else the
// spec holds; every key has its own program; and key.Of gives only the
// keys programs were generated for.
func TestBPFPerKey(t *testing.T) {
	seen := map[string]Key{}
	for _, profile := range []Profile{Landlock, Namespaces} {
		for _, net := range []vocab.NetMode{vocab.NetworkDeny, vocab.NetworkAllow} {
			allow := net == vocab.NetworkAllow
			for _, socks := range [][]string{nil, {"/run/a.sock"}} {
				for _, ports := range [][]int{nil, {8080}} {
					first, err := BPF(vocab.Spec{Network: net, UnixSockets: socks, Ports: ports, Writable: []string{"/a"}}, profile)
					if err != nil {
						t.Fatal(err)
					}
					other := append([]string(nil), socks...)
					if len(other) > 0 {
						other[0] = "/run/b.sock"
					}
					var otherPorts []int
					if len(ports) > 0 {
						otherPorts = []int{1, 2}
					}
					again, err := BPF(vocab.Spec{Network: net, UnixSockets: other, Ports: otherPorts, DenyRead: []string{"/b"}}, profile)
					if err != nil {
						t.Fatal(err)
					}
					k := key.Of(vocab.Spec{Network: net, UnixSockets: socks, Ports: ports}, profile)
					if !slices.Contains(key.All(), k) {
						t.Fatalf("key.Of gives %+v, not among key.All", k)
					}
					if first != again || first != generated(k) {
						t.Errorf("%+v: BPF differs from the generated program", k)
					}
					if prev, ok := seen[first]; ok && prev != k && !(allow && prev.AllowNetwork) {
						// Under network allow nothing socket-related is in the
						// filter, so the UNIX-socket part may not matter there.
						t.Errorf("%+v and %+v have the same program", prev, k)
					}
					seen[first] = k
				}
			}
		}
	}
	if len(programs) != len(key.All()) {
		t.Errorf("%d programs generated, key.All has %d keys", len(programs), len(key.All()))
	}
}

// A binary for an architecture without generated programs has none to
// give: BPF fails, and Available (which both Linux runners' readiness
// checks) says why.
func TestNoProgramsForTheArchitecture(t *testing.T) {
	saved := programs
	programs = nil
	defer func() { programs = saved }()
	err := Available()
	if err == nil || !strings.Contains(err.Error(), "holds no seccomp programs") || !strings.Contains(err.Error(), "linux/amd64, linux/arm64") {
		t.Errorf("Available: %v", err)
	}
	if p, err := BPF(vocab.Spec{}, Landlock); err == nil || p != "" {
		t.Errorf("BPF without programs: %q, %v", p, err)
	}
}

// Every program starts by checking the architecture: this binary's, and
// any other kills the process (the first check answers for it or goes on
// to one that does).
func TestProgramsCheckArch(t *testing.T) {
	audit := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	for _, p := range programs {
		k := p.key
		code, err := hex.DecodeString(p.hex)
		if err != nil {
			t.Fatalf("%+v: %v", k, err)
		}
		at := func(i int) unix.SockFilter {
			b := code[8*i : 8*i+8]
			return unix.SockFilter{Code: binary.NativeEndian.Uint16(b[0:2]), Jt: b[2], Jf: b[3], K: binary.NativeEndian.Uint32(b[4:8])}
		}
		pc := 0
		for {
			ld, jeq := at(pc), at(pc+1)
			if ld != (unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4}) ||
				jeq.Code != unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K || jeq.K != audit || jeq.Jt != 0 {
				t.Fatalf("%+v: instructions %d-%d are not the check for AUDIT_ARCH %#x: %+v %+v", k, pc, pc+1, audit, ld, jeq)
			}
			pc += 2 + int(jeq.Jf)
			if next := at(pc); next.Code == unix.BPF_RET|unix.BPF_K {
				if next.K != unix.SECCOMP_RET_KILL_PROCESS {
					t.Errorf("%+v: another architecture gets %#x, want SECCOMP_RET_KILL_PROCESS", k, next.K)
				}
				break
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

// setxattrat and removexattrat (463 and 466 on amd64 and arm64), which
// the landlock program answers ahead of libseccomp's part (gen's
// byNumber), answer ENOSYS under the loaded program.
func TestNewerXattrCallsRefused(t *testing.T) {
	prog, err := BPF(vocab.Spec{}, Landlock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := Install(prog); err != nil {
			done <- err
			return
		}
		for _, nr := range []uintptr{463, 466} {
			if _, _, errno := unix.Syscall6(nr, ^uintptr(0), 0, 0, 0, 0, 0); errno != unix.ENOSYS {
				done <- fmt.Errorf("system call %d: %v, want ENOSYS", nr, errno)
				return
			}
		}
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestInstallRefusesPartialInstructions(t *testing.T) {
	for _, p := range []string{"", "00", "zz00000000000000", "0000000000000000ff"} {
		if err := Install(p); err == nil {
			t.Errorf("Install(%q) succeeded", p)
		}
	}
}

// Guarded names, and read-only subpaths and deny-read paths inside a
// writable root or the temp dir, each turn the guard's rules on under the
// namespaces profile only: its program changes, the landlock profile's
// does not. Outside them the host's tree is read-only already: no guard.
func TestGuardInKey(t *testing.T) {
	for _, c := range []struct {
		spec  vocab.Spec
		guard bool
	}{
		{vocab.Spec{Guarded: []string{"/ws/.git/commondir"}}, true},
		{vocab.Spec{Writable: []string{"/ws"}, ReadOnly: []string{"/ws/.git/config"}}, true},
		{vocab.Spec{Writable: []string{"/ws"}, DenyRead: []string{"/ws/.env"}}, true},
		{vocab.Spec{TempDir: "/t", DenyRead: []string{"/t/x"}}, true},
		{vocab.Spec{Writable: []string{"/ws"}, TempDir: "/t", ReadOnly: []string{"/etc/x"}, DenyRead: []string{"/home/u/.ssh", "/wsx"}}, false},
	} {
		if got := key.Guards(c.spec); got != c.guard {
			t.Errorf("key.Guards(%+v) = %v, want %v", c.spec, got, c.guard)
		}
		for _, profile := range []Profile{Namespaces, Landlock} {
			with, err := BPF(c.spec, profile)
			if err != nil {
				t.Fatal(err)
			}
			without, err := BPF(vocab.Spec{}, profile)
			if err != nil {
				t.Fatal(err)
			}
			if want := c.guard && profile == Namespaces; (with != without) != want {
				t.Errorf("%+v, profile %d: the program changes: %v, want %v", c.spec, profile, with != without, want)
			}
		}
	}
}
