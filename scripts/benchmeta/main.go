//go:build linux

// Command benchmeta measures what the landlock runner's metadata
// supervisor costs per call (docs/performance.md, "File-heavy work"): the
// microseconds of each metadata call GNU tar and chmod -R make, bare, under
// a floor, and under the landlock runner, rounds interleaved, each in a
// fresh workspace.
//
//	go run ./scripts/benchmeta [-rounds 7] [-n 5000] [-dir /var/tmp]
//
// The command is this binary again. It times N calls of each form on one
// file: fchmodat(dirfd, name) (chmod -R), fchmod, fchown and futimens on a
// descriptor (tar's defaults), chmod of an absolute path. The floor is the
// trap with no work: the same binary with a seccomp filter of its own that
// hands fchmodat to a listener in the same process, which answers each
// notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE (the kernel then makes
// the call), its wake-ups synchronous as the supervisor's are; what the
// supervisor adds above it is its own work. Put -dir on
// a tmpfs to measure the supervisor rather than the disk.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/bo-agent/sandbox-local/launcher"
	"github.com/bo-agent/sandbox-local/sandbox"
	"golang.org/x/sys/unix"
)

// forms are the calls timed, in the order the command prints them.
var forms = []string{"fchmodat(dirfd, name)", "fchmod", "fchown", "futimens", "chmod(path)"}

func main() {
	if launcher.Init() {
		return
	}
	if len(os.Args) == 4 && (os.Args[1] == "calls" || os.Args[1] == "floor") {
		n, err := strconv.Atoi(os.Args[2])
		if err == nil {
			err = measure(os.Args[1] == "floor", n, os.Args[3])
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchmeta:", err)
			os.Exit(1)
		}
		return
	}
	rounds := flag.Int("rounds", 7, "rounds (each runs every variant once)")
	n := flag.Int("n", 5000, "calls of each form per run")
	dir := flag.String("dir", "/var/tmp", "where the workspaces are made (a tmpfs measures the supervisor, not the disk)")
	flag.Parse()
	if err := run(*rounds, *n, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "benchmeta:", err)
		os.Exit(1)
	}
}

// measure is the command: n calls of each form on a file in dir, one line
// of microseconds per call. floor: fchmodat alone, trapped by a listener
// that lets the kernel continue it.
func measure(floor bool, n int, dir string) error {
	runtime.LockOSThread() // the filter, and every call, on this thread
	name := "f"
	path := filepath.Join(dir, name)
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_RDONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	per := func(call func() error) (float64, error) {
		start := time.Now()
		for range n {
			if err := call(); err != nil {
				return 0, err
			}
		}
		return float64(time.Since(start).Nanoseconds()) / float64(n) / 1000, nil
	}
	chmodat := func() error { return unix.Fchmodat(d, name, 0o644, 0) }
	if floor {
		if err := continueListener(); err != nil {
			return err
		}
		us, err := per(chmodat)
		if err != nil {
			return err
		}
		fmt.Println(us)
		return nil
	}
	calls := []func() error{
		chmodat,
		func() error { return unix.Fchmod(fd, 0o644) },
		func() error { return unix.Fchown(fd, -1, -1) },
		func() error { return unix.Futimes(fd, nil) },
		func() error { return unix.Chmod(path, 0o644) },
	}
	var out []string
	for _, c := range calls {
		us, err := per(c)
		if err != nil {
			return err
		}
		out = append(out, strconv.FormatFloat(us, 'f', 2, 64))
	}
	fmt.Println(strings.Join(out, " "))
	return nil
}

// continueListener loads, on the calling thread alone, a seccomp filter
// that hands fchmodat to a listener, and answers every notification on
// another thread with SECCOMP_USER_NOTIF_FLAG_CONTINUE.
func continueListener() error {
	const (
		newListener = 1 << 3     // SECCOMP_FILTER_FLAG_NEW_LISTENER
		retNotify   = 0x7fc00000 // SECCOMP_RET_USER_NOTIF
		recv        = 0xc0502100 // SECCOMP_IOCTL_NOTIF_RECV
		send        = 0xc0182101 // SECCOMP_IOCTL_NOTIF_SEND
		flagCont    = 1          // SECCOMP_USER_NOTIF_FLAG_CONTINUE
		setFlags    = 0x40082104 // SECCOMP_IOCTL_NOTIF_SET_FLAGS
		syncWakeUp  = 1          // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
	)
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_FCHMODAT},
		{Code: unix.BPF_RET | unix.BPF_K, K: retNotify},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	l, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, newListener, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	// As the supervisor: both wake-ups on one CPU (Linux 6.6).
	unix.Syscall(unix.SYS_IOCTL, l, setFlags, syncWakeUp)
	go func() {
		runtime.LockOSThread() // a thread of its own, never the filtered one
		var req [1024]byte     // struct seccomp_notif, with room
		for {
			req = [1024]byte{} // the kernel takes only a zeroed one
			if _, _, e := unix.Syscall(unix.SYS_IOCTL, l, recv, uintptr(unsafe.Pointer(&req[0]))); e == unix.EINTR {
				continue
			} else if e != 0 {
				return // the process is ending
			}
			resp := struct {
				id    uint64
				val   int64
				error int32
				flags uint32
			}{id: *(*uint64)(unsafe.Pointer(&req[0])), flags: flagCont}
			unix.Syscall(unix.SYS_IOCTL, l, send, uintptr(unsafe.Pointer(&resp)))
		}
	}()
	return nil
}

func run(rounds, n int, dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	p := sandbox.New(sandbox.Config{Runners: []string{sandbox.RunnerLandlock}})
	variants := []string{"bare", "floor", "landlock"}
	times := map[string][][]float64{}
	for range rounds {
		for _, v := range variants {
			ws, err := os.MkdirTemp(dir, "benchmeta-")
			if err != nil {
				return err
			}
			out, err := runOne(p, v, self, n, ws)
			os.RemoveAll(ws)
			if err != nil {
				return fmt.Errorf("%s: %w", v, err)
			}
			var us []float64
			for _, f := range strings.Fields(out) {
				x, err := strconv.ParseFloat(f, 64)
				if err != nil {
					return fmt.Errorf("%s: output %q", v, out)
				}
				us = append(us, x)
			}
			for i, x := range us {
				for len(times[v]) <= i {
					times[v] = append(times[v], nil)
				}
				times[v][i] = append(times[v][i], x)
			}
		}
	}
	fmt.Printf("%d rounds, %d calls of each form, in %s; microseconds per call, median (p25-p75)\n", rounds, n, dir)
	for i, f := range forms {
		fmt.Printf("%-22s", f)
		for _, v := range variants {
			if i < len(times[v]) {
				xs := times[v][i]
				fmt.Printf("  %s %.1f (%.1f-%.1f)", v, q(xs, 0.5), q(xs, 0.25), q(xs, 0.75))
			}
		}
		fmt.Println()
	}
	return nil
}

// runOne runs the command once as variant v in ws, and returns its output.
func runOne(p *sandbox.Provider, v, self string, n int, ws string) (string, error) {
	mode := "calls"
	if v == "floor" {
		mode = "floor"
	}
	argv := []string{self, mode, strconv.Itoa(n), ws}
	var out bytes.Buffer
	if v != "landlock" {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		err := cmd.Run()
		return out.String(), err
	}
	pol := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws}
	w, err := p.Wrap(context.Background(), sandbox.Request{Argv: argv, Policy: pol})
	if err != nil {
		return "", err
	}
	defer w.Cleanup()
	cmd := w.Command(context.Background())
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	err = cmd.Run()
	return out.String(), err
}

// q is the quantile f of xs (nearest rank).
func q(xs []float64, f float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[int(f*float64(len(s)-1)+0.5)]
}
