//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
)

// recordPipe: only the Linux runners record refusals (vocab.RefusalsEnv).
type recordPipe struct{}

func (w *Wrapped) passRefusalsPipe(*exec.Cmd) {}

func (w *Wrapped) refusalRecords() []byte { return nil }

func (w *Wrapped) closeRefusalsPipes() {}

// inodeOf: only the Linux runners name a pipe by its inode.
func inodeOf(*os.File) (uint64, error) { return 0, errors.New("no inode here") }
