package sandbox

import (
	"errors"
	"fmt"

	"github.com/bo-agent/sandbox-local/internal/selfexe"
)

// launcherPath checks what every re-executing runner needs: launcher.Init
// called first in main (without it the re-executed binary would run the
// consumer's own main with launcher arguments), and an executable path
// other processes can spawn.
func launcherPath() (string, error) {
	if !selfexe.InitCalled() {
		return "", errors.New("launcher.Init() was not called: make `if launcher.Init() { return }` the first statement of main (and of TestMain in tests), or the re-executed binary cannot act as the launcher")
	}
	p, err := selfexe.Path()
	if err != nil {
		return "", fmt.Errorf("launcher binary: %w", err)
	}
	return p, nil
}
