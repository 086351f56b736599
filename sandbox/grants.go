package sandbox

import "github.com/bo-agent/sandbox-local/internal/vocab"

// grants maps a validated request onto the launcher spec: which roots are
// writable, what stays read-only beneath them, what may not be read, and the
// network. It is the one place where a Mode becomes rights; every runner
// enforces the same spec.
//
//   - read-only: nothing writable but the private temp dir (and the
//     /dev/null-like devices every launcher allows).
//   - workspace-write: the workspace and the writable roots too, minus the
//     protected subpaths (git's code-execution surface, the tool configs
//     that exist, and the caller's own).
//
// The tool configs that do not exist are listed apart (Spec.Guarded): the
// namespaces runner guards their creation; the other runners drop them.
//
// The gaps are what the expansion of the protected subpaths could not
// cover on any runner (see linkWalk).
func grants(fsys fileSystem, r *resolved, token string) (vocab.Spec, []Gap) {
	s := vocab.Spec{
		Token:       token,
		DenyRead:    append([]string(nil), r.denyRead...),
		UnixSockets: append([]string(nil), r.unixSockets...),
		Dir:         r.dir,
		RequireFull: r.requireFull,
		Argv:        append([]string(nil), r.argv...),
	}
	var gaps []Gap
	if r.mode == WorkspaceWrite {
		s.Writable = append([]string(nil), r.writableRoots...)
		s.ReadOnly, s.Guarded, gaps = protectedPaths(fsys, r.writableRoots, r.toolConfigs, r.extraRO)
	}
	return s, gaps
}
