package winacl

// Protected subpaths (.git/hooks, .git/config, ...) are kept read-only under
// a writable root by ACEs on the objects themselves, not by names:
//
//   - the protected path gets an inheritable deny ACE for the write SID of
//     the root above it (AccessDenyWrite). A restricted token's write check
//     runs over its restricting SIDs, so the deny hits every write the
//     confined command attempts through that root's grant, while the user's
//     own unrestricted token, which does not hold the write SID, is
//     untouched: git outside the sandbox works as before.
//   - each directory between the root and the protected path (the .git
//     holding hooks) gets a non-inheritable deny of DELETE, meant to keep
//     it from being renamed away and recreated without the protection.
//
// Neither the deny of DELETE nor the root grant's lack of FILE_DELETE_CHILD
// (see AccessModify) confines deletes: a write-restricted token checks its
// restricting SIDs for write rights only, and DELETE on the object or
// FILE_DELETE_CHILD on its parent is granted by the user's own ACEs (full
// control under the profile). So the command can probably delete a
// protected file, or rename its directory away, and create a fresh one
// through the parent's inherited write grant. This is reported as a gap
// (deleteGap); Prepare snapshots every protected file (snapshot.go) and
// Cleanup checks and restores them.
//
// Because the ACL belongs to the object, every name for it is covered alike:
// any case (.GiT\HOOKS), 8.3 names (GIT~1), \\?\ forms, and alternate data
// streams (config:evil, config::$DATA), which share the file's security
// descriptor; writing a named stream needs FILE_WRITE_DATA on the file or,
// for a directory, FILE_ADD_FILE, both denied. The matching below is what
// the plan uses to reason about names, with the same rules.

// Protector matches paths against a set of protected paths.
type Protector struct {
	paths []string // canonical, stream-free, deduplicated
}

// newProtector returns a Protector for the absolute paths protected. A
// stream suffix on an entry is dropped (the ACE covers the whole file); r,
// if not nil, resolves 8.3 names.
func newProtector(protected []string, r PathResolver) (*Protector, error) {
	p := &Protector{}
	for _, e := range protected {
		wp, err := canonical(e, stripStreams, r)
		if err != nil {
			return nil, err
		}
		p.add(wp.String())
	}
	return p, nil
}

func (p *Protector) add(c string) {
	for _, have := range p.paths {
		if Key(have) == Key(c) {
			return
		}
	}
	p.paths = append(p.paths, c)
}

// Match reports whether path names a protected path, an alternate data
// stream of one, or anything beneath one, compared case-insensitively after
// canonicalisation (separators, \\?\ forms, `.` and `..`, trailing dots and
// spaces, stream suffixes on any component). 8.3 names are not resolved
// here (pass a resolved path); the ACEs themselves do not depend on names.
// A path that does not parse matches nothing.
func (p *Protector) Match(path string) bool {
	wp, err := parsePath(path, stripStreams)
	if err != nil {
		return false
	}
	c := wp.String()
	for _, pp := range p.paths {
		if Within(c, pp) {
			return true
		}
	}
	return false
}

// isProtected reports whether path is covered by one of the absolute
// protected paths (see Protector.Match). Entries that do not parse are
// ignored.
func isProtected(path string, protected []string) bool {
	p := &Protector{}
	for _, e := range protected {
		if wp, err := parsePath(e, stripStreams); err == nil {
			p.add(wp.String())
		}
	}
	return p.Match(path)
}

// protectionACEs returns the standing ACEs that keep the canonical protected
// path p read-only for the write SID of the canonical root that contains it:
// the inheritable deny on p, then a non-inheritable deny of DELETE on each
// directory strictly between root and p, outermost first.
func protectionACEs(root string, sid SID, p string) []PlannedACE {
	rp, _ := parsePath(root, rejectStreams)
	pp, _ := parsePath(p, stripStreams)
	var out []PlannedACE
	for n := len(rp.comps) + 1; n < len(pp.comps); n++ {
		anc := winPath{root: pp.root, comps: pp.comps[:n]}
		out = append(out, PlannedACE{Path: anc.String(), ACE: ACE{SID: sid, Access: AccessDenyRename, Deny: true},
			Purpose: "keep " + p + " from being renamed away"})
	}
	return append(out, PlannedACE{Path: p, ACE: ACE{SID: sid, Access: AccessDenyWrite, Deny: true, Inherit: true},
		Purpose: "keep " + p + " read-only", protects: true})
}
