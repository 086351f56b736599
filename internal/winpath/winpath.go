// Package winpath answers, for canonical Windows paths, the questions both
// the Windows runner and the host-path helpers ask: the comparison key of
// a path, and whether one lies within another. It is pure string logic,
// so it builds and is tested on every platform.
package winpath

import (
	"strings"
	"unicode"
)

// Key returns the comparison key of a canonical path: NTFS compares names
// case-insensitively by simple upper-casing, and so does Key.
func Key(canonicalPath string) string {
	return strings.Map(unicode.ToUpper, canonicalPath)
}

// Within reports whether the canonical path p is root or lies beneath it,
// comparing case-insensitively and by whole components (C:\Tempest is not
// within C:\Temp). It is vocab.Within's question for Windows paths, which
// that one cannot answer: names compare case-insensitively (by Key),
// separators are backslashes, and a root (C:\, a share) ends in one.
func Within(p, root string) bool {
	kp, kr := Key(p), Key(root)
	if kp == kr {
		return true
	}
	if !strings.HasSuffix(kr, `\`) {
		kr += `\`
	}
	return strings.HasPrefix(kp, kr)
}
