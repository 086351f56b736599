//go:build linux && !cgo

package launcher

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// decodeLegacy decodes the path-only metadata calls amd64 keeps from
// before the *at calls (arm64 has none of them).
func (m *metaServer) decodeLegacy(nr int, a [6]uint64) (*metaCall, bool, unix.Errno) {
	c := &metaCall{fd: -1}
	var errno unix.Errno
	switch nr {
	case unix.SYS_CHMOD:
		c.op, c.mode = metaChmod, uint32(a[1])
		c.fd, errno = m.target(unix.AT_FDCWD, a[0], 0)
	case unix.SYS_CHOWN, unix.SYS_LCHOWN:
		c.op, c.uid, c.gid = metaChown, ids(a[1]), ids(a[2])
		c.fd, errno = m.target(unix.AT_FDCWD, a[0], nofollowIf(nr == unix.SYS_LCHOWN))
	case unix.SYS_UTIMES, unix.SYS_FUTIMESAT:
		at := 0
		dirfd := int32(unix.AT_FDCWD)
		if nr == unix.SYS_FUTIMESAT {
			at, dirfd = 1, int32(a[0])
		}
		c.op = metaUtimes
		if a[at+1] != 0 {
			b, e := m.readMem(a[at+1], int(unsafe.Sizeof([2]unix.Timeval{})))
			if e != 0 {
				return nil, true, e
			}
			tv := (*[2]unix.Timeval)(unsafe.Pointer(&b[0]))
			c.times = &[2]unix.Timespec{unix.NsecToTimespec(tv[0].Nano()), unix.NsecToTimespec(tv[1].Nano())}
		}
		c.fd, errno = m.target(dirfd, a[at], 0)
	case unix.SYS_UTIME:
		c.op = metaUtimes
		if a[1] != 0 {
			b, e := m.readMem(a[1], 16) // struct utimbuf: actime, modtime
			if e != 0 {
				return nil, true, e
			}
			ut := (*[2]int64)(unsafe.Pointer(&b[0]))
			c.times = &[2]unix.Timespec{{Sec: ut[0]}, {Sec: ut[1]}}
		}
		c.fd, errno = m.target(unix.AT_FDCWD, a[0], 0)
	default:
		return nil, false, 0
	}
	return c, true, errno
}
