//go:build !cgo

package sandbox

import (
	"errors"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// cgoLaunchers: this binary was built with CGO_ENABLED=0, so the Linux
// launchers' C parts (ns-run, the landlock supervisor, started from
// constructors) are not in it, and both runners are unavailable.
func cgoLaunchers() error { return errors.New(vocab.NoCgoReason) }
