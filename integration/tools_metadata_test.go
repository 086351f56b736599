//go:build linux

package integration

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// atFDCWD is AT_FDCWD as a raw system call argument.
var atFDCWD = func() uintptr { fd := unix.AT_FDCWD; return uintptr(fd) }()

// metadataVerb is the tool's verbs that change a file's metadata or
// create it with a mode; ok is false for another verb. The mode is octal
// and may carry bits above the 16 the kernel reads (the raw system call
// gets all 64).
func metadataVerb(args []string) (out string, ok bool) {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	mode := func() uintptr {
		m, _ := strconv.ParseUint(arg(1), 8, 64)
		return uintptr(m)
	}
	path := func(i int) *byte {
		p, _ := unix.BytePtrFromString(arg(i))
		return p
	}
	raw := func(trap uintptr, a ...uintptr) string {
		a = append(a, 0, 0, 0, 0)
		if _, _, e := unix.Syscall6(trap, a[0], a[1], a[2], a[3], 0, 0); e != 0 {
			return unix.ErrnoName(e)
		}
		return "ok"
	}
	ptr := func(p *byte) uintptr { return uintptr(unsafe.Pointer(p)) }
	mode2 := func(s string) uint64 { m, _ := strconv.ParseUint(s, 8, 32); return m }
	switch args[0] {
	case "chmod": // chmod MODE PATH, by fchmodat
		return raw(unix.SYS_FCHMODAT, atFDCWD, ptr(path(2)), mode()), true
	case "chmod2": // fchmodat2(2)
		return raw(452, atFDCWD, ptr(path(2)), mode(), 0), true
	case "fchmod":
		fd, err := unix.Open(arg(2), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(fd)
		return raw(unix.SYS_FCHMOD, uintptr(fd), mode()), true
	case "create": // create MODE PATH, by openat(O_CREAT)
		fd, _, e := unix.Syscall6(unix.SYS_OPENAT, atFDCWD, ptr(path(2)),
			unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, mode(), 0, 0)
		if e != 0 {
			return unix.ErrnoName(e), true
		}
		unix.Close(int(fd))
		return "ok", true
	case "open-plain": // open-plain MODE PATH: openat(O_RDONLY) with a mode the kernel ignores
		fd, _, e := unix.Syscall6(unix.SYS_OPENAT, atFDCWD, ptr(path(2)), unix.O_RDONLY|unix.O_CLOEXEC, mode(), 0, 0)
		if e != 0 {
			return unix.ErrnoName(e), true
		}
		unix.Close(int(fd))
		return "ok", true
	case "creat":
		return raw(sysCreat, ptr(path(2)), mode()), true
	case "create2": // openat2(O_CREAT) with the mode in its struct
		fd, err := unix.Openat2(unix.AT_FDCWD, arg(2), &unix.OpenHow{Flags: unix.O_CREAT | unix.O_EXCL | unix.O_WRONLY | unix.O_CLOEXEC, Mode: uint64(mode())})
		if err == nil {
			unix.Close(fd)
		}
		return result(err), true
	case "mknod-reg":
		return raw(unix.SYS_MKNODAT, atFDCWD, ptr(path(2)), unix.S_IFREG|mode(), 0), true
	case "mkdir-mode":
		return raw(unix.SYS_MKDIRAT, atFDCWD, ptr(path(2)), mode()), true
	case "utimes": // utimes PATH: set both times to the epoch
		return result(unix.UtimesNano(arg(1), []unix.Timespec{{}, {}})), true
	case "setcap": // setcap PATH: a version 2 security.capability granting CAP_SETUID
		v := make([]byte, 20)
		v[3] = 0x02                       // VFS_CAP_REVISION_2
		v[0] = 1                          // VFS_CAP_FLAGS_EFFECTIVE
		v[4] = byte(1 << unix.CAP_SETUID) // permitted, low word
		return result(unix.Setxattr(arg(1), "security.capability", v, 0)), true
	case "chgrp": // chgrp PATH: the file's group set to this process's own (fchownat)
		return result(unix.Fchownat(unix.AT_FDCWD, arg(1), -1, os.Getgid(), 0)), true
	case "fchown-group": // fchown-group PATH: the same through a descriptor
		fd, err := unix.Open(arg(1), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(fd)
		return result(unix.Fchown(fd, -1, os.Getgid())), true
	case "acl-other-read": // acl-other-read PATH: a POSIX ACL granting others read
		// struct posix_acl_xattr: version 2, then USER_OBJ rw, GROUP_OBJ r,
		// OTHER r, each {tag u16, perm u16, id u32}.
		acl := []byte{2, 0, 0, 0, 1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff, 4, 0, 4, 0, 0xff, 0xff, 0xff, 0xff, 0x20, 0, 4, 0, 0xff, 0xff, 0xff, 0xff}
		return result(unix.Setxattr(arg(1), "system.posix_acl_access", acl, 0)), true
	case "nodump": // nodump PATH: the inode flag FS_NODUMP_FL, which needs no capability
		fd, err := unix.Open(arg(1), unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(fd)
		flags, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS)
		if err == nil {
			err = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, flags|0x40) // FS_NODUMP_FL
		}
		return result(err), true
	case "setxattr-user":
		return result(unix.Setxattr(arg(1), "user.sandbox-test", []byte("x"), 0)), true
	case "inotify-events": // inotify-events DIR MS: events seen in DIR within MS ms, or the errno
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(fd)
		if _, err := unix.InotifyAddWatch(fd, arg(1), unix.IN_ALL_EVENTS); err != nil {
			return result(err), true
		}
		fmt.Println("watching")
		ms, _ := strconv.Atoi(arg(2))
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, _ := unix.Poll(pfd, ms); n > 0 {
			return "events", true
		}
		return "none", true
	case "stat-size": // stat-size PATH: the size lstat reports
		var st unix.Stat_t
		if err := unix.Lstat(arg(1), &st); err != nil {
			return result(err), true
		}
		return strconv.FormatInt(st.Size, 10), true
	case "find-cmdline": // find-cmdline MARKER: is a process with MARKER in its argv visible (other than this one and its launchers)?
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), arg(1)) && !strings.Contains(string(b), "find-cmdline") {
				return "found", true
			}
		}
		return "none", true
	case "fdpath": // fdpath OP FORM MODE PATH [REST]: OP through a path naming a descriptor on PATH
		return ownDescriptorVerb(args[1:]), true
	case "emptypath": // emptypath OP MODE PATH: OP on a descriptor by AT_EMPTY_PATH
		fd, err := unix.Open(arg(3), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(fd)
		empty, _ := unix.BytePtrFromString("")
		switch arg(1) {
		case "chmod": // fchmodat2(fd, "", MODE, AT_EMPTY_PATH)
			return raw(452, uintptr(fd), ptr(empty), uintptr(mode2(arg(2))), unix.AT_EMPTY_PATH), true
		case "chown":
			return result(unix.Fchownat(fd, "", -1, os.Getgid(), unix.AT_EMPTY_PATH)), true
		case "utimes":
			return result(unix.UtimesNanoAt(fd, "", []unix.Timespec{{}, {}}, unix.AT_EMPTY_PATH)), true
		}
	case "opath-fchmod": // opath-fchmod MODE PATH: fchmod of an O_PATH descriptor, which the kernel refuses (EBADF)
		fd, err := unix.Open(arg(2), unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(fd)
		return raw(unix.SYS_FCHMOD, uintptr(fd), mode()), true
	case "thread-fchmod": // thread-fchmod MODE PATH: fchmod of a descriptor on PATH, from a thread other than the leader
		fd, err := unix.Open(arg(2), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(fd)
		return offLeader(func() string { return raw(unix.SYS_FCHMOD, uintptr(fd), mode()) }), true
	case "magic-link": // magic-link MODE TARGET LINK: chmod LINK, a symlink made to /proc/self/fd/N, N a descriptor on TARGET
		fd, err := unix.Open(arg(2), unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(fd)
		if err := os.Symlink("/proc/self/fd/"+strconv.Itoa(fd), arg(3)); err != nil {
			return result(err), true
		}
		return result(unix.Fchmodat(unix.AT_FDCWD, arg(3), uint32(mode2(arg(1))), 0)), true
	case "mode": // mode PATH: the file's mode bits, octal
		var st unix.Stat_t
		if err := unix.Lstat(arg(1), &st); err != nil {
			return result(err), true
		}
		return strconv.FormatUint(uint64(st.Mode&0o7777), 8), true
	}
	return "", false
}

// ownDescriptorVerb is the fdpath verb: OP (chmod MODE, chown to its own
// group, utimes to the epoch) made through a path that names a descriptor
// this process holds on PATH (O_PATH, symlinks not followed, as GNU tar
// holds one), by FORM: self (/proc/self/fd/N), thread-self, devfd
// (/dev/fd/N), pid (/proc/PID/fd/N) or tid (/proc/TID/fd/N), then REST.
func ownDescriptorVerb(args []string) string {
	if len(args) < 4 {
		return "error: fdpath OP FORM MODE PATH [REST]"
	}
	fd, err := unix.Open(args[3], unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return result(err)
	}
	defer unix.Close(fd)
	n := strconv.Itoa(fd)
	p := map[string]string{
		"self":        "/proc/self/fd/" + n,
		"thread-self": "/proc/thread-self/fd/" + n,
		"devfd":       "/dev/fd/" + n,
		"pid":         "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + n,
		"tid":         "/proc/" + strconv.Itoa(unix.Gettid()) + "/fd/" + n,
	}[args[1]]
	if p == "" {
		return "error: unknown form " + args[1]
	}
	if len(args) > 4 {
		p += args[4]
	}
	switch args[0] {
	case "chmod": // fchmodat, which chmod(2) is on every architecture glibc serves
		m, _ := strconv.ParseUint(args[2], 8, 32)
		return result(unix.Fchmodat(unix.AT_FDCWD, p, uint32(m), 0))
	case "chown":
		return result(unix.Fchownat(unix.AT_FDCWD, p, -1, os.Getgid(), 0))
	case "utimes":
		return result(unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{{}, {}}, 0))
	}
	return "error: unknown op " + args[0]
}

// offLeader runs f on a thread other than the process's first (its tid
// not its pid), and returns what f returns: each try holds its thread, so
// the next one cannot land on the leader.
func offLeader(f func() string) string {
	release := make(chan struct{})
	defer close(release)
	for {
		got := make(chan string)
		go func() {
			runtime.LockOSThread() // kept: the thread dies with the goroutine, never the leader's
			if unix.Gettid() == unix.Getpid() {
				got <- ""
				<-release // holds the leader, so the next try runs elsewhere
				return
			}
			got <- f()
		}()
		if out := <-got; out != "" {
			return out
		}
	}
}
