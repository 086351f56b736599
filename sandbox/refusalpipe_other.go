//go:build !linux

package sandbox

import "os/exec"

// recordPipe: only the Linux runners record refusals (vocab.RefusalsEnv).
type recordPipe struct{}

func (w *Wrapped) passRefusalsPipe(*exec.Cmd) {}

func (w *Wrapped) refusalRecords() []byte { return nil }

func (w *Wrapped) closeRefusalsPipes() {}
