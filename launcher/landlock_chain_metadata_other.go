//go:build linux && !amd64 && !cgo

package launcher

import "golang.org/x/sys/unix"

// decodeLegacy: no architecture but amd64 has the path-only metadata calls.
func (m *metaServer) decodeLegacy(nr int, a [6]uint64) (*metaCall, bool, unix.Errno) {
	return nil, false, 0
}
