// Package metarules is the one home of the facts the landlock runner's two
// metadata supervisors hold: the C one (launcher/landlock_metadata_linux.c, cgo
// builds) and the Go one (launcher/landlock_chain_metadata_linux.go, builds without
// cgo). Both answer the metadata calls the landlock seccomp profile hands
// them (internal/seccompfilter/gen's Notified and these ioctl requests)
// with the same limits and the same refusals; the C side reads them from
// launcher/landlock_metadata_rules_linux.h, which CHeader writes (go generate
// ./launcher), and a test in package launcher fails when it is stale.
package metarules

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The inode-flag ioctl requests the landlock profile hands to the
// supervisor, as the kernel reads them (the low 32 bits of the request).
const (
	IocSetflags   = 0x40086602 // FS_IOC_SETFLAGS (a long on 64-bit)
	Ioc32Setflags = 0x40046602 // FS_IOC32_SETFLAGS: the same call, 32-bit number
	IocFssetxattr = 0x401c5820 // FS_IOC_FSSETXATTR
)

// The limits of what a supervisor reads from the command's memory.
const (
	// PathMax is the most bytes of a path read, its NUL included: a longer
	// one is ENAMETOOLONG, as the kernel answers.
	PathMax = 4096
	// XattrNameMax is the most bytes of an xattr name read, its NUL
	// included: a longer one is ErrXattrName, as the kernel answers.
	XattrNameMax = 256
	// XattrSizeMax is the largest xattr value made: a larger one is
	// ErrXattrSize, as the kernel answers.
	XattrSizeMax = 65536
	// FsxattrSize is the size of FS_IOC_FSSETXATTR's struct fsxattr.
	FsxattrSize = 28
	// NotifRoom is the size of the buffers a notification and its answer
	// are read into and sent from: larger than the structs, which the
	// kernel may grow.
	NotifRoom = 1024
)

// The flags each *at call may carry; any other is ErrFlags.
const (
	FchmodatFlags  = unix.AT_SYMLINK_NOFOLLOW | unix.AT_EMPTY_PATH // fchmodat2
	FchownatFlags  = unix.AT_SYMLINK_NOFOLLOW | unix.AT_EMPTY_PATH
	UtimensatFlags = unix.AT_SYMLINK_NOFOLLOW | unix.AT_EMPTY_PATH
)

// SelfFDPrefixes are the paths through which a process names its own
// descriptor N, as PREFIX N alone or followed by more components (GNU tar
// and glibc's fchmodat with AT_SYMLINK_NOFOLLOW chmod /proc/self/fd/N on
// an O_PATH descriptor they hold). In the supervisor /proc/self is the
// supervisor, so it opens the command's descriptor through /proc/PID/fd/N
// instead, PID the calling thread; /proc/P/fd/N with P the caller's own
// pid or tid is read the same way (SelfFD). Every other path that crosses a
// /proc magic link is ErrMagicLink.
var SelfFDPrefixes = []string{"/proc/self/fd/", "/proc/thread-self/fd/", "/dev/fd/"}

// SelfFD reports whether path names one of the caller's own descriptors
// (SelfFDPrefixes, or /proc/P/fd/ where caller(P) holds), and which: the
// descriptor, and what follows its number ("" or a "/..." the supervisor
// opens beneath it). The number is read as /proc reads it: decimal, no
// sign, no leading zero, at most 2^31-1.
func SelfFD(path string, caller func(pid int) bool) (fd int, rest string, ok bool) {
	after := ""
	for _, p := range SelfFDPrefixes {
		if strings.HasPrefix(path, p) {
			after, ok = path[len(p):], true
			break
		}
	}
	if !ok {
		inProc, isProc := strings.CutPrefix(path, "/proc/")
		p, tail, found := strings.Cut(inProc, "/")
		if !isProc || !found || !strings.HasPrefix(tail, "fd/") {
			return 0, "", false
		}
		pid, isNum := decimal(p)
		if !isNum || pid == 0 || !caller(pid) {
			return 0, "", false
		}
		after = tail[len("fd/"):]
	}
	num, rest, more := strings.Cut(after, "/")
	n, isNum := decimal(num)
	if !isNum {
		return 0, "", false
	}
	if more {
		rest = "/" + rest
	}
	return n, rest, true
}

// decimal reads s as /proc reads a number in a name: digits only, no
// leading zero but "0" itself, at most 2^31-1.
func decimal(s string) (int, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return int(n), err == nil
}

// The answers a supervisor gives instead of making the call.
const (
	// ErrOutside: the object is not beneath a writable root or the temp
	// dir (or its path cannot be read back), as Landlock refuses a write.
	ErrOutside = unix.EACCES
	// ErrSetID: a mode with the setuid or setgid bit, as the namespaces
	// runner's filter refuses it.
	ErrSetID = unix.EPERM
	// ErrLinkMode: a symlink's own mode, as fchmodat2 answers. (Its own
	// times and owner are changed, as the kernel does.)
	ErrLinkMode = unix.EOPNOTSUPP
	// ErrLinkXattr: a symlink's own xattrs (user.* is refused on symlinks,
	// the rest needs capabilities).
	ErrLinkXattr = unix.EPERM
	// ErrXattrSize: a value larger than XattrSizeMax.
	ErrXattrSize = unix.E2BIG
	// ErrXattrName: a name longer than XattrNameMax.
	ErrXattrName = unix.ERANGE
	// ErrFlagsObject: inode flags on what is neither a file nor a
	// directory, and an ioctl request that is not one of the above.
	ErrFlagsObject = unix.ENOTTY
	// ErrNoDescriptor: the command has no such descriptor.
	ErrNoDescriptor = unix.EBADF
	// ErrPathDescriptor: a call on a descriptor (fchmod, fchown,
	// futimens, fsetxattr, fremovexattr, ioctl) given an O_PATH one, as
	// the kernel answers.
	ErrPathDescriptor = unix.EBADF
	// ErrFlags: a flag the call does not take.
	ErrFlags = unix.EINVAL
	// ErrGone: the command left the call before the answer (the
	// notification is no longer live); the answer goes nowhere.
	ErrGone = unix.ENOENT
	// ErrMagicLink: a path that crosses a /proc magic link other than the
	// caller's own descriptor (SelfFD): another process's descriptor, a
	// cwd or root link, or /proc/self reached through a symlink or a
	// directory descriptor. The supervisor would read it as itself, or
	// with more rights than the command has, so it refuses it, as
	// Landlock refuses the command's reach into other processes.
	ErrMagicLink = unix.EACCES
	// ErrUnknown: a call the supervisor does not make.
	ErrUnknown = unix.ENOSYS
)
