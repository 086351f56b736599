// Package nativepath answers one question about paths in the host's own
// form (the provider's policy paths, the CLI's working directory): is p
// root or beneath it?
package nativepath

import (
	"path/filepath"
	"runtime"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/internal/winpath"
)

// Within reports whether the absolute path p is root or lies beneath it,
// by whole components (p == root counts); both are cleaned first. On
// Windows it is winpath.Within, since names there compare case-insensitively
// and roots are drives or shares; elsewhere it is vocab.Within, the one
// predicate for slash paths.
func Within(p, root string) bool {
	p, root = filepath.Clean(p), filepath.Clean(root)
	if runtime.GOOS == "windows" {
		return winpath.Within(p, root)
	}
	return vocab.Within(p, root)
}
