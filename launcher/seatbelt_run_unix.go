//go:build unix

package launcher

import (
	"fmt"
	"os"
	"syscall"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// osSeatbeltStep is the seatbelt-run step on the real system.
func osSeatbeltStep() seatbeltStep {
	return seatbeltStep{
		env:    os.Environ(),
		report: reportApplied,
		isExec: func(p string) bool {
			fi, err := os.Stat(p)
			return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
		},
		exec:   syscall.Exec,
		stderr: os.Stderr,
	}
}

// reportApplied writes vocab.AppliedMarker to fd, which must be a pipe,
// and closes it, so the command the step execs does not inherit it.
func reportApplied(fd int) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return fmt.Errorf("descriptor %d is not a pipe", fd)
	}
	f := os.NewFile(uintptr(fd), vocab.AppliedEnv)
	_, err := f.WriteString(vocab.AppliedMarker)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
