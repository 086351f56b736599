//go:build linux && !cgo

package launcher

// The metadata calls the chain's supervisor makes for the command: the Go
// form of landlock_metadata_linux.c, for a binary without cgo. The rule is the
// same, and so are the tests (integration's TestMetadataConfinedToTheWritableRoots):
//
//   - it opens the object the call names the way the kernel would for the
//     command (its working directory through /proc/PID/cwd, its
//     descriptors taken with pidfd_getfd, or through /proc/PID/fd where
//     that is refused, the path read from the command's memory into the
//     supervisor's own buffer, symlinks followed unless the call says
//     AT_SYMLINK_NOFOLLOW, /proc/self/fd/N and its kin read as the
//     command's descriptor N, every other /proc magic link refused), as a
//     descriptor of its own (O_PATH, or the command's open file itself);
//   - it checks that the notification is still live (the command is still
//     blocked in that call, so the pid was not reused meanwhile);
//   - it refuses any object not beneath a writable root or the temp dir
//     (EACCES), and the setuid and setgid bits (EPERM);
//   - it makes the change through that descriptor, on a thread with no
//     capability, so the kernel's own owner and permission checks are the
//     command's. A symlink's own mode and xattrs are refused;
//     its owner and times are changed.
//
// It never lets the kernel continue the command's own call.

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"github.com/bo-agent/sandbox-local/internal/metarules"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// The kernel's seccomp user-notification interface (linux/seccomp.h).
const (
	notifRecv    = 0xc0502100 // SECCOMP_IOCTL_NOTIF_RECV
	notifSend    = 0xc0182101 // SECCOMP_IOCTL_NOTIF_SEND
	notifIDValid = 0x40082102 // SECCOMP_IOCTL_NOTIF_ID_VALID
	// SECCOMP_IOCTL_NOTIF_SET_FLAGS and its SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP.
	notifSetFlags     = 0x40082104
	notifFdSyncWakeUp = 1
	sysFchmodat2      = 452
)

// seccompNotif is struct seccomp_notif; the buffer it is read into is
// larger, as the kernel may grow it.
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

type metaOp int

const (
	metaChmod metaOp = iota
	metaChown
	metaUtimes
	metaSetxattr
	metaRemovexattr
	metaFlags
	metaFsxattr
)

// metaCall is one metadata call, decoded.
type metaCall struct {
	op       metaOp
	fd       int // the object: opened here (O_PATH), or the command's descriptor taken
	mode     uint32
	uid, gid int
	times    *[2]unix.Timespec
	name     string
	value    uint64
	size     uint64
	xflags   int
	valueBuf []byte     // setxattr's value, read in decode
	valueErr unix.Errno // and the fault reading it, answered in perform
	ioctlArg []byte     // FS_IOC_SETFLAGS' int, FS_IOC_FSSETXATTR's struct fsxattr
}

// serveMetadata takes the seccomp listener the launcher sends on sock and
// answers every notification on it until no process of the filter is
// left. It runs on a thread of its own with no capability.
func serveMetadata(sock int, roots []string, refusals *refusalLog) {
	runtime.LockOSThread() // never unlocked: the thread dies with its capabilities dropped
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		unix.Close(sock)
		return // the command's metadata calls then fail (ENOSYS): closed, not open
	}
	listener := takeListener(sock)
	if listener < 0 {
		return
	}
	defer unix.Close(listener)
	// Linux 6.6: the command, blocked in its call, wakes the supervisor on
	// its own CPU, and the answer wakes it back there, instead of waking an
	// idle CPU each way: on a quiet machine that is half a call's cost.
	// Where the kernel lacks it, the calls are answered all the same.
	unix.Syscall(unix.SYS_IOCTL, uintptr(listener), notifSetFlags, notifFdSyncWakeUp)
	m := &metaServer{listener: listener, roots: roots, refusals: refusals, keptPidfd: -1}
	fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return // every process of the filter is gone
		}
		m.answer()
	}
}

// takeListener receives the listener the launcher sends on sock, and
// closes sock; -1 when none came.
func takeListener(sock int) int {
	defer unix.Close(sock)
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(sock, make([]byte, 1), oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1
	}
	return fds[0]
}

type metaServer struct {
	listener int
	pid      int
	roots    []string
	memFile  bool        // process_vm_readv refused here: read /proc/PID/mem
	refusals *refusalLog // where a refusal outside the roots is recorded
	// noGetfd: no pidfd_getfd here (before Linux 5.6, or refused by a
	// container's seccomp profile): descriptors are opened through /proc.
	noGetfd bool
	// noFchmodat2: no fchmodat2 here (before Linux 6.6, or refused by a
	// container's seccomp profile): chmod goes through /proc/self/fd/N.
	noFchmodat2 bool
	// keptPid, keptPidfd: the pidfd of the thread that made the last
	// call, kept (pidfdOf).
	keptPid, keptPidfd int
}

func (m *metaServer) answer() {
	var req struct {
		n    seccompNotif
		room [metarules.NotifRoom - unsafe.Sizeof(seccompNotif{})]byte
	}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(m.listener), notifRecv, uintptr(unsafe.Pointer(&req))); e != 0 {
		return // EINTR, or the command died before its call was read
	}
	errno := m.metaFor(&req.n)
	resp := struct {
		r    seccompNotifResp
		room [metarules.NotifRoom - unsafe.Sizeof(seccompNotifResp{})]byte
	}{r: seccompNotifResp{id: req.n.id, error: -int32(errno)}}
	unix.Syscall(unix.SYS_IOCTL, uintptr(m.listener), notifSend, uintptr(unsafe.Pointer(&resp)))
}

// metaFor makes one metadata call for the command: decoded, its object
// checked, then made; 0 or an errno.
func (m *metaServer) metaFor(req *seccompNotif) unix.Errno {
	m.pid = int(req.pid)
	c, errno := m.decode(req)
	if errno != 0 {
		return errno
	}
	defer unix.Close(c.fd)
	self := "/proc/self/fd/" + strconv.Itoa(c.fd)
	where, err := os.Readlink(self)
	id := req.id
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(m.listener), notifIDValid, uintptr(unsafe.Pointer(&id))); e != 0 {
		return metarules.ErrGone // the command is gone from the call: the answer goes nowhere
	}
	if err != nil || !strings.HasPrefix(where, "/") || strings.Contains(where, " (deleted)") {
		return metarules.ErrOutside
	}
	if !m.beneath(where) {
		m.refusals.refused(metaOpWords[c.op], vocab.RefusalRuleOutside, where)
		return metarules.ErrOutside
	}
	var st unix.Stat_t
	if err := unix.Fstat(c.fd, &st); err != nil {
		return errnoOf(err)
	}
	return m.perform(c, self, &st)
}

func (m *metaServer) beneath(path string) bool {
	for _, r := range m.roots {
		if vocab.Within(path, r) {
			return true
		}
	}
	return false
}

// errnoOf is err's errno (unwrapping os errors), 0 for nil, EIO for an
// error that carries none.
func errnoOf(err error) unix.Errno {
	if err == nil {
		return 0
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EIO
}

// peek copies len(buf) bytes at addr in the command's memory; how many, or
// an errno. process_vm_readv first; where a container's seccomp profile
// refuses it, /proc/PID/mem, which the kernel allows on the same ptrace
// check.
func (m *metaServer) peek(addr uint64, buf []byte) (int, unix.Errno) {
	if !m.memFile {
		local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
		n, err := unix.ProcessVMReadv(m.pid, local, remote, 0)
		if err == nil {
			return n, 0
		}
		if err != unix.EPERM && err != unix.ENOSYS {
			return 0, errnoOf(err)
		}
		m.memFile = true
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(m.pid)+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, errnoOf(err)
	}
	defer unix.Close(fd)
	n, err := unix.Pread(fd, buf, int64(addr))
	if err != nil {
		return 0, errnoOf(err)
	}
	return n, 0
}

// readString copies the NUL-terminated string at addr, at most max bytes,
// a page at a time (it may end just before an unmapped page).
func (m *metaServer) readString(addr uint64, max int) (string, unix.Errno) {
	buf := make([]byte, max)
	got := 0
	for got < max {
		want := min(4096-int((addr+uint64(got))&4095), max-got)
		n, errno := m.peek(addr+uint64(got), buf[got:got+want])
		if errno != 0 {
			return "", errno
		}
		if n <= 0 {
			return "", unix.EFAULT
		}
		if i := bytes.IndexByte(buf[got:got+n], 0); i >= 0 {
			return string(buf[:got+i]), 0
		}
		got += n
	}
	return "", unix.ENAMETOOLONG
}

func (m *metaServer) readMem(addr uint64, size int) ([]byte, unix.Errno) {
	buf := make([]byte, size)
	if size == 0 {
		return buf, 0
	}
	n, errno := m.peek(addr, buf)
	if errno != 0 {
		return nil, errno
	}
	if n != size {
		return nil, unix.EFAULT
	}
	return buf, 0
}

// target opens what a call of the command names by path, relative to its
// directory descriptor dirfd (or working directory), as O_PATH. A path
// naming the command's own descriptor (metarules.SelfFD) is that descriptor
// (commandFD), and what follows it beneath that.
func (m *metaServer) target(dirfd int32, pathAddr uint64, flags int) (int, unix.Errno) {
	path, errno := m.readString(pathAddr, metarules.PathMax)
	if errno != 0 {
		return -1, errno
	}
	base := unix.AT_FDCWD
	if own, rest, ok := metarules.SelfFD(path, m.isCaller); ok {
		b, _, err := m.commandFD(own, false)
		if err != nil {
			return -1, errnoOf(err) // ENOENT, as /proc answers for a closed one
		}
		if rest == "" {
			if flags&unix.AT_SYMLINK_NOFOLLOW == 0 {
				return b, 0
			}
			unix.Close(b) // the /proc link itself: not beneath any root
			return -1, metarules.ErrMagicLink
		}
		base, path = b, strings.TrimLeft(rest, "/")
		if path == "" {
			path = "."
		}
		defer unix.Close(b)
	} else if !strings.HasPrefix(path, "/") {
		var b int
		var err error
		if dirfd == unix.AT_FDCWD {
			b, err = unix.Open("/proc/"+strconv.Itoa(m.pid)+"/cwd", unix.O_PATH|unix.O_CLOEXEC, 0)
		} else {
			b, _, err = m.commandFD(int(dirfd), false)
		}
		if err != nil {
			if err == unix.ENOENT {
				return -1, metarules.ErrNoDescriptor
			}
			return -1, errnoOf(err)
		}
		base = b
		defer unix.Close(b)
	}
	if path == "" {
		if flags&unix.AT_EMPTY_PATH == 0 || base == unix.AT_FDCWD {
			return -1, unix.ENOENT
		}
		fd, err := unix.Dup(base)
		if err != nil {
			return -1, errnoOf(err)
		}
		unix.CloseOnExec(fd)
		return fd, 0
	}
	return openNoMagic(base, path, flags&unix.AT_SYMLINK_NOFOLLOW != 0)
}

// isCaller reports whether pid is the calling thread or its process.
func (m *metaServer) isCaller(pid int) bool {
	if pid == m.pid {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(m.pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			return strings.TrimSpace(v) == strconv.Itoa(pid)
		}
	}
	return false
}

// openNoMagic opens path beneath base as O_PATH without crossing a /proc
// magic link, which here would name the supervisor's own descriptors, or
// reach into processes the command cannot: metarules.ErrMagicLink for
// such a path. Where openat2 is refused (a container's seccomp profile), a
// plain open: the object is still checked.
func openNoMagic(base int, path string, nofollow bool) (int, unix.Errno) {
	flags := unix.O_PATH | unix.O_CLOEXEC
	if nofollow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Openat2(base, path, &unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_NO_MAGICLINKS})
	if err == nil || (err != unix.ELOOP && err != unix.ENOSYS && err != unix.EPERM) {
		return fd, errnoOf(err)
	}
	loop := err == unix.ELOOP
	fd, err = unix.Openat(base, path, flags, 0)
	if !loop { // openat2 refused here
		return fd, errnoOf(err)
	}
	// A loop of symlinks, or a magic link: the plain open tells them apart.
	if err == nil {
		unix.Close(fd)
	} else if err == unix.ELOOP {
		return -1, unix.ELOOP
	}
	return -1, metarules.ErrMagicLink
}

// procFD opens the command's descriptor n (fchmod, fchown, fsetxattr,
// utimensat with no path, ioctl). An O_PATH descriptor is
// metarules.ErrPathDescriptor, as these calls answer for one.
func (m *metaServer) procFD(n uint64) (int, unix.Errno) {
	fd, opath, err := m.commandFD(int(int32(n)), true)
	if err == unix.ENOENT {
		return -1, metarules.ErrNoDescriptor
	}
	if err != nil {
		return -1, errnoOf(err)
	}
	if opath {
		unix.Close(fd)
		return -1, metarules.ErrPathDescriptor
	}
	return fd, 0
}

// commandFD is the command's descriptor n (the calling thread's), in the
// supervisor: the same open file, taken with pidfd_getfd, which looks up
// no path; where that is not to be had (ptrace's rules, a thread on a
// kernel without PIDFD_THREAD), the object opened through /proc/PID/fd/N
// as O_PATH. Errors as /proc answers (ENOENT for a closed one). With
// flags, opath says whether the command opened it O_PATH.
func (m *metaServer) commandFD(n int, flags bool) (fd int, opath bool, err error) {
	if !m.noGetfd {
		fd, err := m.getfd(n)
		if err == nil {
			if !flags {
				return fd, false, nil
			}
			fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
			if err != nil {
				unix.Close(fd)
				return -1, false, err
			}
			return fd, fl&unix.O_PATH != 0, nil
		}
		if err == unix.EBADF {
			return -1, false, unix.ENOENT // no such descriptor, as /proc answers
		}
		if err == unix.ENOSYS {
			m.noGetfd = true // pidfd_getfd not in this kernel
		}
	}
	num := strconv.Itoa(n)
	fd, err = unix.Open("/proc/"+strconv.Itoa(m.pid)+"/fd/"+num, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil || !flags {
		return fd, false, err
	}
	return fd, m.pathOnly(num), nil
}

// pathOnly reports whether the command's descriptor num was opened O_PATH
// (its flags in /proc/PID/fdinfo/N).
func (m *metaServer) pathOnly(num string) bool {
	info, err := os.ReadFile("/proc/" + strconv.Itoa(m.pid) + "/fdinfo/" + num)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&unix.O_PATH != 0
		}
	}
	return false
}

// getfd takes the command's descriptor n with pidfd_getfd (EBADF: no such
// descriptor).
func (m *metaServer) getfd(n int) (int, error) {
	kept := m.keptPidfd >= 0 && m.keptPid == m.pid
	p, err := m.pidfdOf(false)
	if err == nil {
		fd, gerr := unix.PidfdGetfd(p, n, 0)
		if gerr == nil || !kept {
			return fd, gerr
		}
		// The kept pidfd may name a task since gone, whose number the
		// caller now has: a new one answers for the caller.
		if p, err = m.pidfdOf(true); err == nil {
			return unix.PidfdGetfd(p, n, 0)
		}
	}
	if err == unix.ENOSYS || err == unix.EPERM {
		m.noGetfd = true // pidfd_open not in this kernel, or refused by a seccomp profile
	}
	return -1, err
}

// pidfdOf is a pidfd of the calling thread, kept for the next call: most
// calls come from one thread, and a new pidfd per call (pidfd_open, close)
// costs several times the pidfd_getfd it serves. A pidfd names one task,
// whose number no other task takes while it lives, and pidfd_getfd refuses
// once it has died; so a kept pidfd that works for the caller's number is
// the caller's, as a new one would be. fresh: a new one whatever is kept.
func (m *metaServer) pidfdOf(fresh bool) (int, error) {
	if !fresh && m.keptPidfd >= 0 && m.keptPid == m.pid {
		return m.keptPidfd, nil
	}
	if m.keptPidfd >= 0 {
		unix.Close(m.keptPidfd)
	}
	// The thread itself (PIDFD_THREAD, Linux 6.9), which may be other than
	// the leader; before 6.9, the process, which works for the leader.
	p, err := unix.PidfdOpen(m.pid, unix.PIDFD_THREAD)
	if err == unix.EINVAL {
		p, err = unix.PidfdOpen(m.pid, 0)
	}
	if err != nil {
		p = -1
	}
	m.keptPid, m.keptPidfd = m.pid, p
	return p, err
}

func nofollowIf(l bool) int {
	if l {
		return unix.AT_SYMLINK_NOFOLLOW
	}
	return 0
}

// ids reads a chown argument as the kernel does: 32 bits, -1 for "keep".
func ids(v uint64) int { return int(int32(uint32(v))) }

// decode reads the call's arguments, and the strings and times they point
// to, and opens its object.
func (m *metaServer) decode(req *seccompNotif) (*metaCall, unix.Errno) {
	a := req.args
	c := &metaCall{fd: -1}
	var errno unix.Errno
	var nameAddr uint64
	switch nr := int(req.nr); nr {
	case unix.SYS_FCHMODAT:
		c.op, c.mode = metaChmod, uint32(a[2])
		c.fd, errno = m.target(int32(a[0]), a[1], 0)
	case sysFchmodat2:
		if a[3]&^uint64(metarules.FchmodatFlags) != 0 {
			return nil, metarules.ErrFlags
		}
		c.op, c.mode = metaChmod, uint32(a[2])
		c.fd, errno = m.target(int32(a[0]), a[1], int(a[3]))
	case unix.SYS_FCHMOD:
		c.op, c.mode = metaChmod, uint32(a[1])
		c.fd, errno = m.procFD(a[0])
	case unix.SYS_FCHOWN:
		c.op, c.uid, c.gid = metaChown, ids(a[1]), ids(a[2])
		c.fd, errno = m.procFD(a[0])
	case unix.SYS_FCHOWNAT:
		if a[4]&^uint64(metarules.FchownatFlags) != 0 {
			return nil, metarules.ErrFlags
		}
		c.op, c.uid, c.gid = metaChown, ids(a[2]), ids(a[3])
		c.fd, errno = m.target(int32(a[0]), a[1], int(a[4]))
	case unix.SYS_UTIMENSAT:
		if a[3]&^uint64(metarules.UtimensatFlags) != 0 {
			return nil, metarules.ErrFlags
		}
		c.op = metaUtimes
		if a[2] != 0 {
			b, e := m.readMem(a[2], int(unsafe.Sizeof([2]unix.Timespec{})))
			if e != 0 {
				return nil, e
			}
			c.times = (*[2]unix.Timespec)(unsafe.Pointer(&b[0]))
		}
		if a[1] == 0 {
			c.fd, errno = m.procFD(a[0])
		} else {
			c.fd, errno = m.target(int32(a[0]), a[1], int(a[3]))
		}
	case unix.SYS_SETXATTR, unix.SYS_LSETXATTR:
		c.op, nameAddr, c.value, c.size, c.xflags = metaSetxattr, a[1], a[2], a[3], int(a[4])
		c.fd, errno = m.target(unix.AT_FDCWD, a[0], nofollowIf(nr == unix.SYS_LSETXATTR))
	case unix.SYS_FSETXATTR:
		c.op, nameAddr, c.value, c.size, c.xflags = metaSetxattr, a[1], a[2], a[3], int(a[4])
		c.fd, errno = m.procFD(a[0])
	case unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR:
		c.op, nameAddr = metaRemovexattr, a[1]
		c.fd, errno = m.target(unix.AT_FDCWD, a[0], nofollowIf(nr == unix.SYS_LREMOVEXATTR))
	case unix.SYS_FREMOVEXATTR:
		c.op, nameAddr = metaRemovexattr, a[1]
		c.fd, errno = m.procFD(a[0])
	case unix.SYS_IOCTL:
		// Only the inode-flag requests reach here, compared on their low
		// 32 bits as the kernel reads them.
		size := 0
		switch uint32(a[1]) {
		case metarules.IocFssetxattr:
			c.op, size = metaFsxattr, metarules.FsxattrSize
		case metarules.IocSetflags, metarules.Ioc32Setflags:
			c.op, size = metaFlags, 4
		default:
			return nil, metarules.ErrFlagsObject
		}
		if c.ioctlArg, errno = m.readMem(a[2], size); errno != 0 {
			return nil, errno
		}
		c.fd, errno = m.procFD(a[0])
	default:
		var ok bool
		if c, ok, errno = m.decodeLegacy(nr, a); !ok {
			return nil, metarules.ErrUnknown
		}
	}
	if errno != 0 {
		return nil, errno
	}
	if c.op == metaSetxattr || c.op == metaRemovexattr {
		name, e := m.readString(nameAddr, metarules.XattrNameMax)
		if e != 0 {
			unix.Close(c.fd)
			if e == unix.ENAMETOOLONG {
				return nil, metarules.ErrXattrName
			}
			return nil, e
		}
		c.name = name
	}
	// The value too is read now, before the notification is checked live
	// (a read after that could reach another process with the same pid);
	// its fault is answered where the call would meet it (perform).
	if c.op == metaSetxattr && c.size <= metarules.XattrSizeMax {
		c.valueBuf, c.valueErr = m.readMem(c.value, int(c.size))
	}
	return c, 0
}

// chmodFD sets the mode of the object fd is (self: /proc/self/fd/N):
// fchmodat2 with AT_EMPTY_PATH, which looks up no second path; else
// through self, which follows the /proc link to the same object. (fchmod
// refuses an O_PATH descriptor.)
func (m *metaServer) chmodFD(fd int, self string, mode uint32) unix.Errno {
	if !m.noFchmodat2 {
		var empty byte
		_, _, e := unix.Syscall6(sysFchmodat2, uintptr(fd), uintptr(unsafe.Pointer(&empty)), uintptr(mode), unix.AT_EMPTY_PATH, 0, 0)
		if e == 0 || (e != unix.ENOSYS && e != unix.EINVAL && e != unix.EPERM) {
			return e
		}
		// ENOSYS: never again. EINVAL, EPERM: a kernel or a profile that
		// refuses the flag, or the command's own refusal, which the path
		// gives again.
		m.noFchmodat2 = e == unix.ENOSYS
	}
	return errnoOf(unix.Fchmodat(unix.AT_FDCWD, self, mode, 0))
}

// perform makes the call on the object c.fd is (self: /proc/self/fd/N).
func (m *metaServer) perform(c *metaCall, self string, st *unix.Stat_t) unix.Errno {
	isLink := st.Mode&unix.S_IFMT == unix.S_IFLNK
	switch c.op {
	case metaChmod:
		if c.mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
			return metarules.ErrSetID // as the namespaces runner's filter refuses them
		}
		if isLink {
			return metarules.ErrLinkMode
		}
		return m.chmodFD(c.fd, self, c.mode&07777)
	case metaChown:
		return errnoOf(unix.Fchownat(c.fd, "", c.uid, c.gid, unix.AT_EMPTY_PATH))
	case metaUtimes: // on the descriptor itself: a symlink's own times too, as cp -a and rsync -a set them
		var empty byte
		_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(c.fd), uintptr(unsafe.Pointer(&empty)), uintptr(unsafe.Pointer(c.times)), unix.AT_EMPTY_PATH, 0, 0)
		return e
	case metaSetxattr:
		if isLink {
			return metarules.ErrLinkXattr
		}
		if c.size > metarules.XattrSizeMax {
			return metarules.ErrXattrSize
		}
		if c.valueErr != 0 {
			return c.valueErr
		}
		return errnoOf(unix.Setxattr(self, c.name, c.valueBuf, c.xflags))
	case metaRemovexattr:
		if isLink {
			return metarules.ErrLinkXattr
		}
		return errnoOf(unix.Removexattr(self, c.name))
	case metaFlags, metaFsxattr:
		if mt := st.Mode & unix.S_IFMT; mt != unix.S_IFREG && mt != unix.S_IFDIR {
			return metarules.ErrFlagsObject
		}
		f, err := unix.Open(self, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			return errnoOf(err)
		}
		defer unix.Close(f)
		req := uintptr(metarules.IocSetflags)
		if c.op == metaFsxattr {
			req = metarules.IocFssetxattr
		}
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(f), req, uintptr(unsafe.Pointer(&c.ioctlArg[0])))
		return e
	}
	return metarules.ErrUnknown
}
