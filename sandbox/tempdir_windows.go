package sandbox

import (
	"io/fs"
	"os"
)

// On Windows the winacl runner makes its own private temp dirs; these are
// only used by the shared code path.
func ownedByMe(fs.FileInfo) bool { return true }

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
