//go:build !cgo

package sandbox

import (
	"errors"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// cgoLaunchers: this binary was built with CGO_ENABLED=0, so ns-run's C
// stages are not in it and the namespaces runner is unavailable; the
// landlock runner's launcher is then the Go chain.
func cgoLaunchers() error { return errors.New(vocab.NoCgoReason) }
