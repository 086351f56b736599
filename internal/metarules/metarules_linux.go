// Package metarules is the one home of the facts the landlock runner's two
// metadata supervisors hold: the C one (launcher/metadata_linux.c, cgo
// builds) and the Go one (launcher/metadata_chain_linux.go, builds without
// cgo). Both answer the metadata calls the landlock seccomp profile hands
// them (internal/seccompfilter/gen's Notified and these ioctl requests)
// with the same limits and the same refusals; the C side reads them from
// launcher/metadata_rules_linux.h, which CHeader writes (go generate
// ./launcher), and a test in package launcher fails when it is stale.
package metarules

import "golang.org/x/sys/unix"

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
	UtimensatFlags = unix.AT_SYMLINK_NOFOLLOW
)

// The answers a supervisor gives instead of making the call.
const (
	// ErrOutside: the object is not beneath a writable root or the temp
	// dir (or its path cannot be read back), as Landlock refuses a write.
	ErrOutside = unix.EACCES
	// ErrSetID: a mode with the setuid or setgid bit, as the namespaces
	// runner's filter refuses it.
	ErrSetID = unix.EPERM
	// ErrLinkModeTimes: a symlink's own mode or times, as fchmodat2
	// answers.
	ErrLinkModeTimes = unix.EOPNOTSUPP
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
	// ErrFlags: a flag the call does not take.
	ErrFlags = unix.EINVAL
	// ErrGone: the command left the call before the answer (the
	// notification is no longer live); the answer goes nowhere.
	ErrGone = unix.ENOENT
	// ErrUnknown: a call the supervisor does not make.
	ErrUnknown = unix.ENOSYS
)
