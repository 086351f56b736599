package sandbox

import (
	"os"
)

// On Windows the winacl runner makes its own private temp dirs.

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// oNoFollow: Windows has no O_NOFOLLOW; the verdict cache is not used
// there (one candidate, never probed).
const oNoFollow = 0

// oNoBlock: no FIFO or terminal is opened by path on Windows.
const oNoBlock = 0

// makeRemovable: the winacl runner removes its own session dirs.
func makeRemovable(string) {}
