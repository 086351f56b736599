//go:build linux

package integration

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/bo-agent/sandbox-local/sandbox"
	"golang.org/x/sys/unix"
)

// toolArg makes the test binary act as a tool: BINARY tool VERB ARGS...
// Each verb prints exactly one line: "ok", or the errno name of the failure
// (EACCES, EROFS, EPERM, ...), or "error: ..." for anything else; it exits 0
// on "ok" and 1 otherwise.
const toolArg = "tool"

func runTool(args []string) int {
	out := toolVerb(args)
	fmt.Println(out)
	if out == "ok" {
		return 0
	}
	return 1
}

func result(err error) string {
	if err == nil {
		return "ok"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return "error: " + err.Error()
}

func toolVerb(args []string) string {
	if len(args) == 0 {
		return "error: no verb"
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch args[0] {
	case "write-in-env-dir":
		return result(os.WriteFile(filepath.Join(os.Getenv(arg(1)), arg(2)), []byte("x"), 0o644))
	case "write":
		return result(os.WriteFile(arg(1), []byte("written by the sandbox\n"), 0o644))
	case "append":
		f, err := os.OpenFile(arg(1), os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.WriteString("appended\n")
			f.Close()
		}
		return result(err)
	case "truncate":
		return result(unix.Truncate(arg(1), 0))
	case "file-setattr":
		// file_setattr(2) (Linux 6.17) with FS_XFLAG_NODUMP: what chattr +d
		// does through an ioctl.
		return result(fileSetattr(arg(1), 0x80))
	case "mq-open":
		return result(mqOpen(arg(1)))
	case "read":
		f, err := os.Open(arg(1))
		if err == nil {
			_, err = f.Read(make([]byte, 64))
			if errors.Is(err, io.EOF) {
				err = nil
			}
			f.Close()
		}
		return result(err)
	case "read-secret":
		// read-secret PATH SECRET: ok only if PATH reads and holds SECRET
		// (an empty stand-in, as a deny-read mount shows, is "hidden").
		b, err := os.ReadFile(arg(1))
		if err != nil {
			return result(err)
		}
		if !strings.Contains(string(b), arg(2)) {
			return "hidden"
		}
		return "ok"
	case "open":
		// open PATH: open read-only (the access check of /proc/PID/mem
		// happens here; reading needs a mapped offset).
		f, err := os.Open(arg(1))
		if err == nil {
			f.Close()
		}
		return result(err)
	case "consume", "consume-bare":
		// consume RUNNER WS CMD...: a consumer of the library that wraps
		// CMD under workspace-write on WS, starts it, says "started", and
		// waits for it (to be killed while it waits). consume-bare spawns
		// without the parent-death signal Command sets, as a consumer in
		// another language would: only the launcher's own then ends it.
		w, err := sandbox.New(sandbox.Config{Runners: []string{arg(1)}}).Wrap(context.Background(),
			sandbox.Request{Argv: args[3:], Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: arg(2)}})
		if err != nil {
			return "error: " + err.Error()
		}
		c := w.Command(context.Background())
		if args[0] == "consume-bare" {
			c.SysProcAttr.Pdeathsig = 0
		}
		if err := c.Start(); err != nil {
			return "error: " + err.Error()
		}
		fmt.Println("started")
		return result(c.Wait())
	case "host-setting":
		// host-setting KIND: change a setting of the whole host to the
		// value it already has (so a control run as root changes nothing):
		// the hostname, the clock, or unload a module that is not there
		// (ENOENT means the call got past the privilege check).
		switch arg(1) {
		case "hostname":
			var u unix.Utsname
			if err := unix.Uname(&u); err != nil {
				return result(err)
			}
			return result(unix.Sethostname(u.Nodename[:clen(u.Nodename[:])]))
		case "clock":
			var now unix.Timespec
			if err := unix.ClockGettime(unix.CLOCK_REALTIME, &now); err != nil {
				return result(err)
			}
			return result(unix.ClockSettime(unix.CLOCK_REALTIME, &now))
		case "module":
			return result(unix.DeleteModule("sbx_no_such_module", unix.O_NONBLOCK))
		}
		return "error: kind"
	case "sysv-make":
		// sysv-make shm|sem|msg KEY: make a System V object of that kind
		// with KEY and leave it (a 1 MiB segment).
		key, err := strconv.Atoi(arg(2))
		if err != nil {
			return "error: key"
		}
		return result(sysvMake(arg(1), key))
	case "sysv-attach":
		// sysv-attach ID: attach the shared memory segment ID, by its id
		// alone, without shmget.
		id, err := strconv.Atoi(arg(1))
		if err != nil {
			return "error: id"
		}
		b, err := unix.SysvShmAttach(id, 0, unix.SHM_RDONLY)
		if err == nil {
			unix.SysvShmDetach(b)
		}
		return result(err)
	case "sysv-read":
		// sysv-read KEY SECRET: ok only if the System V shared memory
		// segment KEY attaches and holds SECRET.
		key, err := strconv.Atoi(arg(1))
		if err != nil {
			return "error: key"
		}
		id, err := unix.SysvShmGet(key, 0, 0)
		if err != nil {
			return result(err)
		}
		b, err := unix.SysvShmAttach(id, 0, unix.SHM_RDONLY)
		if err != nil {
			return result(err)
		}
		defer unix.SysvShmDetach(b)
		if !strings.HasPrefix(string(b), arg(2)) {
			return "hidden"
		}
		return "ok"
	case "readdir":
		_, err := os.ReadDir(arg(1))
		return result(err)
	case "mkdir":
		return result(unix.Mkdir(arg(1), 0o755))
	case "rename":
		return result(unix.Rename(arg(1), arg(2)))
	case "link":
		return result(unix.Link(arg(1), arg(2)))
	case "symlink":
		return result(unix.Symlink(arg(1), arg(2)))
	case "remove":
		return result(unix.Unlink(arg(1)))
	case "connect-tcp":
		c, err := net.DialTimeout("tcp", arg(1), 2*time.Second)
		if err == nil {
			c.Write([]byte("ping"))
			c.Close()
		}
		return result(err)
	case "send-udp":
		c, err := net.Dial("udp", arg(1))
		if err == nil {
			_, err = c.Write([]byte("ping"))
			c.Close()
		}
		return result(err)
	case "listen-tcp":
		// An unbound TCP socket's listen autobinds a port on every address.
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err == nil {
			err = unix.Listen(fd, 1)
			unix.Close(fd)
		}
		return result(err)
	case "fastopen":
		// fastopen IP PORT: a TCP connect made by sendto(MSG_FASTOPEN).
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err == nil {
			port, _ := strconv.Atoi(arg(2))
			sa := &unix.SockaddrInet4{Port: port}
			copy(sa.Addr[:], net.ParseIP(arg(1)).To4())
			err = unix.Sendto(fd, []byte("ping"), unix.MSG_FASTOPEN, sa)
			unix.Close(fd)
		}
		return result(err)
	case "connect-tcp6":
		c, err := net.DialTimeout("tcp6", arg(1), 2*time.Second)
		if err == nil {
			c.Close()
		}
		return result(err)
	case "socket":
		// socket FAMILY TYPE: raw, packet, netlink and the rest.
		fam, _ := strconv.Atoi(arg(1))
		typ, _ := strconv.Atoi(arg(2))
		proto, _ := strconv.Atoi(arg(3))
		fd, err := unix.Socket(fam, typ, proto)
		if err == nil {
			unix.Close(fd)
		}
		return result(err)
	case "io_uring":
		// io_uring_setup with a zeroed params struct: its socket and
		// connect operations never pass through socket(2).
		var params [120]byte
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafePointer(&params[0])), 0)
		if e != 0 {
			return result(e)
		}
		unix.Close(int(fd))
		return "ok"
	case "caps":
		// The capability sets, as /proc/self/status shows them:
		// inheritable, permitted, effective, ambient.
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return result(err)
		}
		var sets []string
		for _, l := range strings.Split(string(b), "\n") {
			for _, k := range []string{"CapInh:", "CapPrm:", "CapEff:", "CapAmb:"} {
				if v, ok := strings.CutPrefix(l, k); ok {
					sets = append(sets, strings.TrimSpace(v))
				}
			}
		}
		return strings.Join(sets, "/")
	case "exec-with":
		// exec-with STATE PATH ARGV0 ARGS...: spawn a wrap from a consumer
		// in an odd state: SIGCHLD ignored, or signals blocked and ignored.
		switch arg(1) {
		case "sigchld-ignored":
			signal.Ignore(syscall.SIGCHLD)
		case "signals-blocked":
			signal.Ignore(syscall.SIGUSR1)
			var set unix.Sigset_t
			set.Val[0] = 1<<(uint(syscall.SIGTERM)-1) | 1<<(uint(syscall.SIGINT)-1)
			unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil)
		case "duplicate-env":
			// A name given twice, as only a hand-built execve gives it
			// (os/exec keeps one of each).
			return result(syscall.Exec(arg(2), args[3:], append(os.Environ(), "SBX_DUP=first", "SBX_DUP=second")))
		}
		return result(syscall.Exec(arg(2), args[3:], os.Environ()))
	case "sigstate":
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return result(err)
		}
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			for _, k := range []string{"SigBlk:", "SigIgn:"} {
				if v, ok := strings.CutPrefix(l, k); ok {
					out = append(out, strings.TrimSpace(v))
				}
			}
		}
		return strings.Join(out, "/")
	case "exec-without-setpcap":
		// Drop CAP_SETPCAP from the bounding set (a caller that cannot
		// empty a child's bounding set), then exec PATH ARGV0 ARGS... with
		// this environment.
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, unix.CAP_SETPCAP, 0, 0, 0); err != nil {
			return result(err)
		}
		return result(syscall.Exec(arg(1), args[2:], os.Environ()))
	case "socket-raw64":
		// socket-raw64 FAMILY64 TYPE: socket(2) with the family as a full
		// 64-bit register value (high bits set), straight to the kernel.
		fam, err := strconv.ParseUint(arg(1), 0, 64)
		if err != nil {
			return "error: family"
		}
		typ, err := strconv.Atoi(arg(2))
		if err != nil {
			return "error: type"
		}
		fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(fam), uintptr(typ), 0)
		if e != 0 {
			return result(e)
		}
		unix.Close(int(fd))
		return "ok"
	case "flip":
		// flip A B MILLIS: exchange A and B (renameat2 RENAME_EXCHANGE) in a
		// loop for MILLIS ms: a sandboxed attacker on a shared workspace.
		// ok if at least one exchange succeeded.
		ms, err := strconv.Atoi(arg(3))
		if err != nil {
			return "error: millis"
		}
		end := time.Now().Add(time.Duration(ms) * time.Millisecond)
		last := error(unix.EINVAL)
		for time.Now().Before(end) {
			if err := unix.Renameat2(unix.AT_FDCWD, arg(1), unix.AT_FDCWD, arg(2), unix.RENAME_EXCHANGE); err == nil {
				last = nil
			} else if last != nil {
				last = err
			}
		}
		return result(last)
	case "socket-unix":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return result(err)
	case "connect-unix":
		// connect-unix PATH MSG: connect to a pathname stream socket and
		// send MSG.
		return result(sendUnix(unix.SOCK_STREAM, arg(1), arg(2)))
	case "send-unix-dgram":
		// send-unix-dgram PATH MSG: send MSG as one datagram to PATH.
		return result(sendUnix(unix.SOCK_DGRAM, arg(1), arg(2)))
	case "socketpair":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return result(err)
	case "kill":
		pid, err := strconv.Atoi(arg(1))
		if err != nil {
			return "error: pid"
		}
		return result(unix.Kill(pid, unix.SIGKILL))
	case "kill-own":
		c := exec.Command("/bin/sleep", "30")
		if err := c.Start(); err != nil {
			return "error: " + err.Error()
		}
		err := unix.Kill(c.Process.Pid, unix.SIGKILL)
		c.Wait()
		return result(err)
	case "pty":
		return result(openPty())
	case "tiocsti":
		return result(tiocstiStdin())
	case "env":
		return os.Getenv(arg(1))
	case "mknod-block":
		return result(unix.Mknod(arg(1), unix.S_IFBLK|0o600, int(unix.Mkdev(8, 0))))
	case "write-value":
		f, err := os.OpenFile(arg(1), os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(arg(2))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		return result(err)
	case "fill":
		// fill PATH BYTES: writes BYTES zero bytes to a new file PATH.
		n, err := strconv.Atoi(arg(2))
		if err != nil {
			return "error: size"
		}
		return result(os.WriteFile(arg(1), make([]byte, n), 0o600))
	case "write-fd":
		fd, err := strconv.Atoi(arg(1))
		if err != nil {
			return "error: fd"
		}
		_, err = unix.Write(fd, []byte("leaked\n"))
		return result(err)
	case "interfaces":
		ifs, err := net.Interfaces()
		if err != nil {
			return result(err)
		}
		var names []string
		for _, i := range ifs {
			names = append(names, i.Name)
		}
		return strings.Join(names, ",")
	case "connect-abstract":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return result(err)
		}
		defer unix.Close(fd)
		return result(unix.Connect(fd, &unix.SockaddrUnix{Name: "@" + arg(1)}))
	case "ptrace":
		pid, err := strconv.Atoi(arg(1))
		if err != nil {
			return "error: pid"
		}
		return result(ptraceOnce(pid))
	case "ptrace-own":
		c := exec.Command("/bin/sleep", "30")
		if err := c.Start(); err != nil {
			return "error: " + err.Error()
		}
		defer func() { c.Process.Kill(); c.Wait() }()
		return result(ptraceOnce(c.Process.Pid))
	case "pids":
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return result(err)
		}
		var pids []string
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err == nil {
				pids = append(pids, e.Name())
			}
		}
		return strings.Join(pids, ",")
	case "keyctl":
		// Read the session keyring's description: any keyctl at all.
		_, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, unix.KEY_SPEC_USER_KEYRING)
		return result(err)
	case "unshare-user":
		// In a child, since the tool itself runs many threads.
		c := exec.Command("/bin/true")
		c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		err := c.Run()
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		var se *os.SyscallError
		if errors.As(err, &se) {
			err = se.Err
		}
		return result(err)
	case "reach-process":
		// reach-process PID KIND: change a property of another process to
		// the value it already has (harmless, but an attacker would pick
		// another): its limits, its priority or its CPU affinity.
		pid, err := strconv.Atoi(arg(1))
		if err != nil {
			return "error: pid"
		}
		switch arg(2) {
		case "prlimit":
			var cur unix.Rlimit
			if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &cur); err != nil {
				return result(err)
			}
			return result(unix.Prlimit(pid, unix.RLIMIT_NOFILE, &cur, nil))
		case "setpriority":
			prio, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
			if err != nil {
				return result(err)
			}
			return result(unix.Setpriority(unix.PRIO_PROCESS, pid, 20-prio))
		case "affinity":
			var set unix.CPUSet
			if err := unix.SchedGetaffinity(pid, &set); err != nil {
				return result(err)
			}
			return result(unix.SchedSetaffinity(pid, &set))
		}
		return "error: kind"
	case "sleep":
		// sleep MARKER...: a long-lived process whose command line carries
		// the markers, so tests can find it on the host.
		time.Sleep(300 * time.Second)
		return "ok"
	case "has-env":
		if _, ok := os.LookupEnv(arg(1)); ok {
			return "present"
		}
		return "absent"
	case "watch-tokens":
		// Read every process's cmdline and environ for MS milliseconds and
		// print every token-shaped string seen: the way a background
		// process left by one wrap would spy on the launchers of the next.
		ms, _ := strconv.Atoi(arg(1))
		return watchTokens(time.Duration(ms) * time.Millisecond)
	case "compat-socket":
		return compatSocket(arg(1))
	case "diagnose-without-userns":
		return diagnoseWithoutUserns()
	case "write-race": // write-race TARGET READY MS METHOD...
		ms, _ := strconv.Atoi(arg(3))
		return writeRace(arg(1), arg(2), ms, args[4:])
	}
	if out, ok := metadataVerb(args); ok {
		return out
	}
	if out, ok := guardVerb(args); ok {
		return out
	}
	if out, ok := guardCutsVerb(args); ok {
		return out
	}
	return "error: unknown verb " + args[0]
}

// ptraceOnce attaches to pid and detaches again.
// clen is the length of the NUL-terminated string in b.
func clen(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// sendUnix sends msg to the pathname UNIX socket path, connecting first
// for a stream socket, with sendto(2) for a datagram one.
func sendUnix(kind int, path, msg string) error {
	fd, err := unix.Socket(unix.AF_UNIX, kind|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	to := &unix.SockaddrUnix{Name: path}
	if kind == unix.SOCK_DGRAM {
		return unix.Sendto(fd, []byte(msg), 0, to)
	}
	if err := unix.Connect(fd, to); err != nil {
		return err
	}
	_, err = unix.Write(fd, []byte(msg))
	return err
}

func ptraceOnce(pid int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.PtraceAttach(pid); err != nil {
		return err
	}
	var ws unix.WaitStatus
	unix.Wait4(pid, &ws, 0, nil)
	return unix.PtraceDetach(pid)
}

// newPty opens a new pseudo-terminal pair, reaching the slave from the
// master (TIOCGPTPEER).
func newPty() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, err
	}
	const tiocgptpeer = 0x5441 // _IO('T', 0x41), Linux 4.13
	r, _, e := unix.Syscall(unix.SYS_IOCTL, m.Fd(), tiocgptpeer, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if e != 0 {
		m.Close()
		return nil, nil, e
	}
	fd := int(r)
	return m, os.NewFile(uintptr(fd), "pty-slave"), nil
}

// openPty opens a new pseudo-terminal pair and writes through it, as a
// terminal program (script, ssh, a REPL) would.
func openPty() error {
	m, s, err := newPty()
	if err != nil {
		return err
	}
	defer m.Close()
	defer s.Close()
	if _, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS); err != nil {
		return err
	}
	_, err = s.Write([]byte("hello\n"))
	return err
}

// tiocstiStdin pushes a character into the input queue of the terminal on
// standard input, the command's controlling terminal: the injection attack
// (on the agent's real terminal the pushed text runs after the sandbox
// exits).
func tiocstiStdin() error {
	c := byte('x')
	_, _, e := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafePointer(&c)))
	if e != 0 {
		return e
	}
	return nil
}

var tokenShape = regexp.MustCompile(`[0-9a-f]{32}`)

func watchTokens(d time.Duration) string {
	seen := map[string]bool{}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			for _, f := range []string{"cmdline", "environ"} {
				b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f))
				if err != nil {
					continue
				}
				for _, m := range tokenShape.FindAllString(string(b), -1) {
					seen[m] = true
				}
			}
		}
	}
	out := []string{"seen"}
	for t := range seen {
		out = append(out, t)
	}
	return strings.Join(out, ",")
}

// fileSetattr sets the extended inode flags of path with file_setattr(2):
// struct file_attr is fa_xflags (64 bits), then four 32-bit fields.
func fileSetattr(path string, xflags uint64) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	var attr [24]byte
	binary.LittleEndian.PutUint64(attr[:8], xflags)
	fdcwd := unix.AT_FDCWD
	if _, _, e := unix.Syscall6(469, uintptr(fdcwd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&attr[0])), uintptr(len(attr)), 0, 0); e != 0 {
		return e
	}
	return nil
}

// mqOpen creates the POSIX message queue name (mq_open with O_CREAT) and
// closes it. The system call takes the name without the C library's
// leading slash.
func mqOpen(name string) error {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), unix.O_RDWR|unix.O_CREAT, 0o600, 0, 0, 0)
	if e != 0 {
		return e
	}
	unix.Close(int(fd))
	return nil
}

// sysvMake makes a System V object of kind (shm, sem, msg) with key, only
// if none has it, and leaves it.
func sysvMake(kind string, key int) error {
	const flags = unix.IPC_CREAT | unix.IPC_EXCL | 0o600
	var e syscall.Errno
	switch kind {
	case "shm":
		_, err := unix.SysvShmGet(key, 1<<20, flags)
		return err
	case "sem":
		_, _, e = unix.Syscall(unix.SYS_SEMGET, uintptr(key), 1, flags)
	case "msg":
		_, _, e = unix.Syscall(unix.SYS_MSGGET, uintptr(key), flags, 0)
	default:
		return fmt.Errorf("kind %q", kind)
	}
	if e != 0 {
		return e
	}
	return nil
}
