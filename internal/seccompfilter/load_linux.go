// Package seccompfilter holds the launchers' seccomp programs and loads
// them. The filters are defined once, in gen/filter_linux.go, with
// libseccomp; `go generate ./internal/seccompfilter` compiles every program
// a runner can ask for (every Key), for each supported architecture, into
// programs_linux_*.go. At run time the provider picks the program for its
// Key (BPF) and hands it to the launcher in its argv (vocab's -seccomp):
// the namespaces launcher's stage 2 is C and loads it with seccomp(2), and
// the landlock launcher loads it with InstallListener. Nothing here links
// libseccomp or needs cgo.
package seccompfilter

//go:generate go run ./gen

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/bo-agent/sandbox-local/internal/seccompfilter/key"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// Profile selects the runner's variant of the filter.
type Profile = key.Profile

// The profiles.
const (
	Landlock   = key.Landlock
	Namespaces = key.Namespaces
)

// Key names a program (see package key).
type Key = key.Key

// Available reports whether this binary holds the programs for its
// architecture: without them neither Linux runner can confine anything.
func Available() error {
	if len(programs) == 0 {
		return fmt.Errorf("this binary (linux/%s) holds no seccomp programs: they are generated for linux/%s only (internal/seccompfilter)",
			runtime.GOARCH, strings.Join(generatedArches, ", linux/"))
	}
	return nil
}

// program is one generated program: its Key and its code in hex.
type program struct {
	key Key
	hex string
}

// generated returns the program for k in hex, "" when none was generated.
func generated(k Key) string {
	for _, p := range programs {
		if p.key == k {
			return p.hex
		}
	}
	return ""
}

// BPF returns the program of the filter for s, in hex: what the launchers
// load (the namespaces launcher with seccomp(2), the landlock launcher
// with InstallListener). It is the generated program for s's Key and this
// binary's architecture; an architecture without programs is an error.
func BPF(s vocab.Spec, profile Profile) (string, error) {
	if err := Available(); err != nil {
		return "", err
	}
	p := generated(key.Of(s, profile))
	if p == "" {
		return "", fmt.Errorf("seccomp: no generated program for %+v (run go generate ./internal/seccompfilter)", key.Of(s, profile))
	}
	return p, nil
}

// Install loads program (hex, as BPF returns it and vocab.Decode checked
// it) on the calling thread, after setting no_new_privs, which seccomp
// requires of a process without CAP_SYS_ADMIN and which the launchers want
// anyway. The filter passes to the program the thread execs.
func Install(program string) error {
	_, err := install(program, 0)
	return err
}

// InstallListener is Install with SECCOMP_FILTER_FLAG_NEW_LISTENER: it
// returns the descriptor on which the calls the program hands to user
// space (gen's Notified) arrive, for the launcher to pass to its
// supervisor.
func InstallListener(program string) (int, error) {
	return install(program, seccompFlagNewListener)
}

// seccompFlagNewListener is SECCOMP_FILTER_FLAG_NEW_LISTENER.
const seccompFlagNewListener = 1 << 3

func install(program string, flags uintptr) (int, error) {
	code, err := hex.DecodeString(program)
	if err != nil || len(code) == 0 || len(code)%int(unsafe.Sizeof(unix.SockFilter{})) != 0 {
		return -1, errors.New("seccomp: the program is not whole BPF instructions")
	}
	n := len(code) / int(unsafe.Sizeof(unix.SockFilter{}))
	if n > bpfMaxInsns {
		return -1, fmt.Errorf("seccomp: the program has %d instructions, the kernel takes at most %d", n, bpfMaxInsns)
	}
	insns := make([]unix.SockFilter, n)
	for i := range insns {
		// struct sock_filter in the host's byte order, as the generator
		// wrote it for this architecture.
		b := code[8*i : 8*i+8]
		insns[i] = unix.SockFilter{
			Code: binary.NativeEndian.Uint16(b[0:2]),
			Jt:   b[2],
			Jf:   b[3],
			K:    binary.NativeEndian.Uint32(b[4:8]),
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	prog := unix.SockFprog{Len: uint16(n), Filter: &insns[0]}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return -1, fmt.Errorf("seccomp: load: %w", errno)
	}
	return int(fd), nil
}

// bpfMaxInsns is the kernel's BPF_MAXINSNS.
const bpfMaxInsns = 4096
