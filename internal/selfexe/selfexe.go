// Package selfexe knows the two facts about the current binary that the
// provider needs before it can hand out a launcher argv: whether main called
// launcher.Init (without it, a re-executed binary would run the consumer's
// own main with launcher arguments), and the absolute path other processes
// can spawn.
package selfexe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

var initCalled atomic.Bool

// MarkInit records that launcher.Init ran in this process.
func MarkInit() { initCalled.Store(true) }

// InitCalled reports whether launcher.Init ran in this process.
func InitCalled() bool { return initCalled.Load() }

var (
	pathOnce sync.Once
	path     string
	pathErr  error
)

// Path returns the absolute, symlink-free path of the running executable.
func Path() (string, error) {
	pathOnce.Do(func() {
		p, err := os.Executable()
		if err != nil {
			pathErr = fmt.Errorf("locate own executable: %w", err)
			return
		}
		if strings.HasSuffix(p, " (deleted)") {
			pathErr = fmt.Errorf("own executable %s was deleted since this process started", p)
			return
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		path = p
	})
	return path, pathErr
}
