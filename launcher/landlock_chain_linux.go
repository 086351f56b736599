//go:build linux && !cgo

package launcher

// The landlock launcher in a binary without cgo (CGO_ENABLED=0), where no C
// constructor splits the process before the Go runtime starts
// (landlock_start_linux.c, landlock_supervise_linux.c). The same three roles, each
// a re-execution of the binary (/proc/self/exe, so the same file even if
// its name was replaced meanwhile):
//
//   - the relay is the process the consumer spawned as landlock-run. It dies
//     with its spawner (PR_SET_PDEATHSIG), is a subreaper, passes on the
//     signals a process sent it (procsig.PassOn: not the terminal's own,
//     which reached the command directly, in the same process group),
//     waits for the supervisor and ends the way it ended: exit N, or death
//     by signal N. If the supervisor itself was killed, it ends what the
//     supervisor left.
//   - the supervisor (vocab.LandlockSupervisor) runs in a process group of
//     its own, is the command's subreaper, and stays outside the command's
//     Landlock domain (with Landlock's signal scoping the command cannot
//     signal it; Landlock never lets a domain ptrace out of itself). It
//     answers the command's metadata calls (landlock_chain_metadata_linux.go) with
//     no capability. When the command ends it kills every process left;
//     when the relay dies (SIGKILL included: the relay's end of a pipe
//     closes) it kills the command and all it started.
//   - the launcher (vocab.LandlockConfine) is started in the consumer's
//     process group, dies with the supervisor, and is landlockRun: it
//     confines itself, hands the supervisor its seccomp listener, and execs
//     the command.

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/bo-agent/sandbox-local/internal/procsig"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// chainFD is the descriptor each later stage gets from the one before: the
// supervisor, the read end of the relay's pipe; the launcher, its end of
// the socket on which it hands the supervisor the seccomp listener.
const chainFD = 3

func landlockLaunchers() map[string]func() {
	return map[string]func(){
		vocab.LandlockRun:        func() { landlockRelay(os.Args[1:]) },
		vocab.LandlockSupervisor: func() { landlockSupervise(os.Args[1:]) },
		vocab.LandlockConfine:    func() { landlockConfine(os.Args[1:]) },
	}
}

// chainSupervised is set when this process is the chain's launcher and
// chainFD is the supervisor's socket.
var chainSupervised bool

// maxprocsAdded marks the GOMAXPROCS=1 the relay added for the later
// stages' Go runtimes (each starts no thread for a second P while it starts
// its goroutines): the launcher removes both before it execs the command,
// which gets the caller's environment. A caller's own GOMAXPROCS is left
// alone, for the stages and the command.
const maxprocsAdded = "SANDBOX_LOCAL_GOMAXPROCS_ADDED"

// stageEnv is the environment of the supervisor and the launcher.
func stageEnv() []string {
	env := os.Environ()
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		env = append(env, "GOMAXPROCS=1", maxprocsAdded+"=1")
	}
	return env
}

// undoStartEnv removes what stageEnv added.
func undoStartEnv() {
	if os.Getenv(maxprocsAdded) == "1" {
		os.Unsetenv("GOMAXPROCS")
	}
	os.Unsetenv(maxprocsAdded)
}

// supervised reports whether this launcher was started by the chain's
// supervisor.
func supervised() bool { return chainSupervised }

// supervisorSocket is the launcher's end of the socket to the supervisor,
// or -1.
func supervisorSocket() int {
	if chainSupervised {
		return chainFD
	}
	return -1
}

// startStage starts the next stage of the chain: this binary again, as
// argv[0] stage with the launcher's arguments, the same stdio (a closed one
// stays closed), files from descriptor 3 on.
func startStage(stage string, args []string, files []*os.File, attr *syscall.SysProcAttr) (*os.Process, error) {
	std := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for fd := range std {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			std[fd] = nil
		}
	}
	return os.StartProcess("/proc/self/exe", append([]string{stage}, args...), &os.ProcAttr{
		Env:   stageEnv(),
		Files: append(std, files...),
		Sys:   attr,
	})
}

// landlockRelay is the relay (see the top of this file).
func landlockRelay(args []string) {
	const name = vocab.LandlockRun
	token := peekToken()
	// The parent-death signal belongs to the thread that sets it: this
	// one, kept for the relay's whole life.
	runtime.LockOSThread()
	spawner := unix.Getppid()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		fatal(name, token, "prctl(PR_SET_PDEATHSIG): %v", err)
	}
	if unix.Getppid() != spawner {
		os.Exit(128 + int(unix.SIGKILL)) // the spawner died before the prctl took
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fatal(name, token, "prctl(PR_SET_CHILD_SUBREAPER): %v", err)
	}
	// Only the relay's death closes keep: the supervisor's sign to end it all.
	watch, keep, err := os.Pipe()
	if err != nil {
		fatal(name, token, "pipe: %v", err)
	}
	// The refusal record's descriptor goes to the supervisor alone, at
	// refusalsChainFD, and the variable with it.
	files := []*os.File{watch}
	rec, err := takeRefusalsFD()
	if err != nil {
		fatal(name, token, "%v", err)
	}
	if rec >= 0 {
		files = append(files, os.NewFile(uintptr(rec), "refusals"))
		os.Setenv(vocab.RefusalsEnv, refusalsValue(rec, refusalsChainFD))
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, procsig.Forwarded...)
	sup, err := startStage(vocab.LandlockSupervisor, args, files, &syscall.SysProcAttr{Setpgid: true})
	if err != nil {
		fatal(name, token, "start the supervisor: %v", err)
	}
	os.Unsetenv(vocab.RefusalsEnv)
	for _, f := range files {
		f.Close()
	}
	go func() {
		for s := range sigs {
			if procsig.PassOn(s) {
				sup.Signal(s)
			}
		}
	}()
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(sup.Pid, &ws, 0, nil)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			// The command may have run: never a signed line from here.
			fmt.Fprintf(os.Stderr, "%s: wait for the supervisor: %v\n", name, err)
			os.Exit(vocab.FatalExit)
		}
	}
	// A supervisor that was killed did not end what it supervised.
	endChildren()
	runtime.KeepAlive(keep)
	mirror(ws)
}

// landlockSupervise is the supervisor (see the top of this file).
func landlockSupervise(args []string) {
	const name = vocab.LandlockRun
	token := peekToken()
	relay := os.NewFile(chainFD, "relay")
	unix.CloseOnExec(chainFD)
	spec, err := vocab.Decode(args)
	if err != nil {
		fatal(name, token, "%v", err)
	}
	// The refusal record (taken out of the environment: the launcher
	// starts without it).
	recFD, err := takeRefusalsFD()
	if err != nil {
		fatal(name, token, "supervisor: %v", err)
	}
	refusals := &refusalLog{fd: recFD}
	roots := spec.Writable
	if spec.TempDir != "" {
		roots = append(roots[:len(roots):len(roots)], spec.TempDir)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fatal(name, token, "supervisor: prctl(PR_SET_CHILD_SUBREAPER): %v", err)
	}
	// Checked now: once the command may run, the supervisor never prints a
	// signed line, and without this list it could not end what is left.
	if _, err := os.ReadDir("/proc/self/task"); err != nil {
		fatal(name, token, "supervisor: cannot list its children (/proc/self/task): %v", err)
	}
	group, err := unix.Getpgid(unix.Getppid())
	if err != nil {
		fatal(name, token, "supervisor: the relay's process group: %v", err)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fatal(name, token, "supervisor: socketpair: %v", err)
	}
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs, append([]os.Signal{unix.SIGCHLD}, procsig.Forwarded...)...)
	// The launcher's parent-death signal belongs to the thread that starts
	// it: this one, kept.
	runtime.LockOSThread()
	launcherEnd := os.NewFile(uintptr(pair[1]), "supervisor")
	cmd, err := startStage(vocab.LandlockConfine, args, []*os.File{launcherEnd},
		&syscall.SysProcAttr{Setpgid: true, Pgid: group, Pdeathsig: unix.SIGKILL})
	if err != nil {
		fatal(name, token, "supervisor: start the launcher: %v", err)
	}
	launcherEnd.Close()
	// From here on the command may run. Warnings go to stderr whatever the
	// terminal's TOSTOP, and a closed stderr does not end the supervisor
	// (ignored only now: the launcher starts with the relay's dispositions).
	signal.Ignore(unix.SIGTTOU, unix.SIGPIPE)
	dropAllCapabilities()
	relayGone := make(chan struct{})
	go func() {
		var b [1]byte
		relay.Read(b[:]) // only the relay's death ends this read
		close(relayGone)
	}()
	go serveMetadata(pair[0], roots, refusals)
	var status unix.WaitStatus
	for done := false; !done; {
		select {
		case <-relayGone:
			// Nobody waits for the command any more.
			unix.Kill(cmd.Pid, unix.SIGKILL)
			endChildren()
			os.Exit(128 + int(unix.SIGKILL))
		case s := <-sigs:
			if s != unix.SIGCHLD {
				// From the relay: in a group of its own, the supervisor gets
				// nothing from the terminal.
				unix.Kill(cmd.Pid, s.(syscall.Signal))
				continue
			}
			for {
				var ws unix.WaitStatus
				p, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
				if p <= 0 || err != nil {
					break
				}
				if p == cmd.Pid {
					status, done = ws, true
				}
			}
		}
	}
	endChildren()
	refusals.end()
	mirror(status)
}

// landlockConfine is the chain's launcher: landlockRun, once chainFD is
// known to be the supervisor's socket (a launcher started any other way
// refuses to run the command).
func landlockConfine(args []string) {
	typ, err := unix.GetsockoptInt(chainFD, unix.SOL_SOCKET, unix.SO_TYPE)
	cred, err2 := unix.GetsockoptUcred(chainFD, unix.SOL_SOCKET, unix.SO_PEERCRED)
	chainSupervised = err == nil && err2 == nil && typ == unix.SOCK_SEQPACKET && int(cred.Pid) == unix.Getppid()
	landlockRun(args)
}

// mirror ends this process the way the waited-for one ended: its exit
// status, or death by the same signal.
func mirror(ws unix.WaitStatus) {
	switch {
	case ws.Exited():
		os.Exit(ws.ExitStatus())
	case ws.Signaled():
		procsig.DieOf(ws.Signal())
	}
	os.Exit(vocab.FatalExit)
}

// endChildren kills and reaps every child of this process until it has
// none: a subreaper's children are all that is left of what it started
// (each process killed hands its own children to the subreaper, and the
// next round kills those).
func endChildren() {
	for {
		for {
			p, err := unix.Wait4(-1, nil, unix.WNOHANG|unix.WALL, nil)
			if err == unix.ECHILD {
				return
			}
			if p <= 0 {
				break
			}
		}
		killChildren()
		_, err := unix.Wait4(-1, nil, unix.WALL, nil)
		if err == unix.ECHILD {
			return
		}
	}
}

// killChildren sends SIGKILL to every child of this process: the Go
// runtime has several threads, and each lists the children it forked, or
// that were handed to it, in its own task's children file.
func killChildren() {
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				unix.Kill(pid, unix.SIGKILL)
			}
		}
	}
}

// dropAllCapabilities empties every capability set of every thread where
// the Go runtime can (a binary without cgo): nothing the supervisor does
// for the command may use a capability a root caller had. The metadata
// thread drops its own in any case (serveMetadata).
func dropAllCapabilities() {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&none[0])), 0)
}
