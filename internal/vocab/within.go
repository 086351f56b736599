package vocab

// Within reports whether the clean absolute slash path p is root or lies
// beneath it, by whole components: p == root counts, "/" holds every path,
// and /a/bc is not within /a/b.
//
// It is the one Go implementation of this question for slash paths: the
// launchers, the gap predictions and the seatbelt profile call it, and the
// provider's internal/nativepath.Within calls it for the host's paths off
// Windows. Its C twin, sbx_within in launcher/shared_linux.c, runs before
// the Go runtime and must agree with it. winacl.Within answers the same
// question for canonical Windows paths, which compare case-insensitively.
func Within(p, root string) bool {
	if root == "/" {
		return true
	}
	return p == root || len(p) > len(root) && p[:len(root)] == root && p[len(root)] == '/'
}

// WithinAny reports whether p is within (Within) one of roots.
func WithinAny(p string, roots []string) bool {
	for _, r := range roots {
		if Within(p, r) {
			return true
		}
	}
	return false
}
