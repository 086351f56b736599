//go:build unix

package vocab

import (
	"io/fs"
	"syscall"
)

// LinkCount returns how many hard links name the file fi describes (1 when
// fi does not say).
func LinkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
