package winacl

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Deletes are not confined (deleteGap): the command can delete a protected
// file, or rename its directory away, and create a new one through the
// parent's inherited write grant. Until a design that stops it is in place
// (docs/runners/winacl.md), Prepare records every protected path's identity
// and content and the session checks them once the command exited: what
// changed is reported (ErrProtectedChanged, Session.ProtectedChanges) and
// restored where that is safe. This is detection after the fact, not
// confinement: a hook or config the command planted and used within the
// same run has done its work by then. A change the user's own git made to
// a protected file while the command ran cannot be told from the
// command's: it is reverted too, and reported.

// Bounds of one session's snapshot: the protected paths are small (hooks,
// config, commondir), and a bound keeps a huge protected tree from making
// every wrap slow. Beyond them entries are still identified and hashed,
// but their content is not held, so they cannot be restored.
const (
	maxSnapshotEntries = 512     // objects recorded per session
	maxSnapshotFile    = 1 << 20 // bytes held per file for a restore
	maxSnapshotBytes   = 8 << 20 // bytes held per session
)

// ErrProtectedChanged means a protected path was deleted, replaced,
// modified or added to while the command ran (Session.ProtectedChanges
// says which, and what was restored).
var ErrProtectedChanged = errors.New("winacl: a protected path changed while the command ran")

// Change kinds of a ProtectedChange.
const (
	ChangeDeleted  = "deleted"  // the object is gone
	ChangeReplaced = "replaced" // another object has its name (deleted and created again, or renamed over)
	ChangeModified = "modified" // same object, other content
	ChangeAdded    = "added"    // a new entry in a protected directory
)

// ProtectedChange is one change to a protected path found after the command.
type ProtectedChange struct {
	// Path is the object that changed.
	Path string `json:"path"`
	// Change is one of the Change* kinds.
	Change string `json:"change"`
	// Restored reports that the recorded content was put back (and the
	// protection ACE re-applied where the protected object itself was new).
	Restored bool `json:"restored"`
	// Note says why it was not restored, or how a restore failed.
	Note string `json:"note,omitempty"`
}

// String is "path: change (restored)" or "path: change (not restored: note)".
func (c ProtectedChange) String() string {
	if c.Restored {
		return c.Path + ": " + c.Change + " (restored)"
	}
	return c.Path + ": " + c.Change + " (not restored: " + c.Note + ")"
}

// snapEntry is one recorded object beneath (or equal to) a protected path.
type snapEntry struct {
	path     string
	id       FileIdentity
	sum      [sha256.Size]byte // files
	content  []byte            // files, when held
	held     bool              // content is held: the file can be restored
	children []string          // directories: the names inside, sorted by Key
}

// snapRoot is one protected path's record.
type snapRoot struct {
	path    string
	ace     ACE // the protection ACE on path, re-applied when path itself is new
	entries []snapEntry
	partial bool // the bound was hit: entries past it are not recorded (nor checked)
}

type snapshot struct {
	roots []snapRoot
}

// takeSnapshot records every existing protected path of pl: identity, and
// for a file its hash and (within the bounds) content, for a directory its
// names, recursively. Missing protected paths are a gap already and are
// skipped. Any other read failure fails Prepare: a protection that cannot
// be checked must not be taken for one that can.
func (m *Manager) takeSnapshot(pl *Plan) (*snapshot, error) {
	snap := &snapshot{}
	budget := struct{ entries, bytes int }{maxSnapshotEntries, maxSnapshotBytes}
	for _, pa := range pl.Standing {
		if !pa.protects {
			continue
		}
		root := snapRoot{path: pa.Path, ace: pa.ACE}
		var walk func(p string) error
		walk = func(p string) error {
			if budget.entries == 0 {
				root.partial = true
				return nil
			}
			budget.entries--
			id, err := m.sys.Identify(p)
			if err != nil {
				return err
			}
			e := snapEntry{path: p, id: id}
			switch {
			case id.Reparse:
				// A link is recorded as itself; its target is not followed.
			case id.Dir:
				names, err := m.sys.ReadDir(p)
				if err != nil {
					return err
				}
				sortNames(names)
				e.children = names
				root.entries = append(root.entries, e)
				for _, n := range names {
					if err := walk(p + `\` + n); err != nil {
						return err
					}
				}
				return nil
			default:
				b, err := m.sys.ReadFile(p)
				if err != nil {
					return err
				}
				e.sum = sha256.Sum256(b)
				if len(b) <= maxSnapshotFile && len(b) <= budget.bytes {
					budget.bytes -= len(b)
					e.content, e.held = b, true
				}
			}
			root.entries = append(root.entries, e)
			return nil
		}
		if err := walk(pa.Path); err != nil {
			if errors.Is(err, fs.ErrNotExist) && len(root.entries) == 0 {
				continue // missing: reported as a gap
			}
			return nil, fmt.Errorf("winacl: record protected path %s: %w", pa.Path, err)
		}
		snap.roots = append(snap.roots, root)
	}
	return snap, nil
}

func sortNames(names []string) {
	sort.Slice(names, func(i, j int) bool { return Key(names[i]) < Key(names[j]) })
}

// check compares the protected paths with the snapshot, restores what is
// safe and returns every change. Restoring is safe for a file whose content
// is held when its name is now free or names a plain file (not a directory,
// not a link), and its directory exists; the protection ACE is re-applied
// on a protected path that is a new object. An entry added to a protected
// directory is removed only when that directory is itself a new object (the
// command replaced it: nothing in it is the user's); in the original
// directory it is reported and left alone. A deleted directory is not
// recreated (its ACL would not be the original's).
func (m *Manager) check(snap *snapshot) []ProtectedChange {
	if snap == nil {
		return nil
	}
	var out []ProtectedChange
	for _, root := range snap.roots {
		replacedDirs := map[string]bool{} // Keys of recorded dirs that are new objects
		for _, e := range root.entries {
			cur, err := m.sys.Identify(e.path)
			var change string
			switch {
			case errors.Is(err, fs.ErrNotExist):
				change = ChangeDeleted
			case err != nil:
				out = append(out, ProtectedChange{Path: e.path, Change: ChangeModified, Note: "cannot be checked: " + err.Error()})
				continue
			case cur.Volume != e.id.Volume || cur.Index != e.id.Index || cur.Dir != e.id.Dir || cur.Reparse != e.id.Reparse:
				change = ChangeReplaced
			}
			if e.id.Dir {
				if change == ChangeReplaced && cur.Dir && !cur.Reparse {
					replacedDirs[Key(e.path)] = true
					if Key(e.path) == Key(root.path) {
						if err := m.sys.AddACE(e.path, root.ace); err != nil {
							out = append(out, ProtectedChange{Path: e.path, Change: change, Note: "re-apply protection: " + err.Error()})
							continue
						}
					}
					out = append(out, ProtectedChange{Path: e.path, Change: change, Restored: true})
				} else if change != "" {
					out = append(out, ProtectedChange{Path: e.path, Change: change, Note: "a directory is not recreated"})
				}
				if change == "" || replacedDirs[Key(e.path)] {
					out = append(out, m.checkAdded(e, replacedDirs[Key(e.path)])...)
				}
				continue
			}
			if change == ChangeReplaced && m.equivalent(root, e, cur) {
				// Another object, but as protected as the recorded one:
				// the same content, the deny in place (another session's
				// restore, or the user's own git rewriting it unchanged).
				continue
			}
			if change == "" && !e.id.Reparse {
				b, err := m.sys.ReadFile(e.path)
				if err != nil {
					out = append(out, ProtectedChange{Path: e.path, Change: ChangeModified, Note: "cannot be checked: " + err.Error()})
					continue
				}
				if sha256.Sum256(b) == e.sum {
					continue
				}
				change = ChangeModified
			}
			if change == "" {
				continue
			}
			out = append(out, m.restoreFile(root, e, change, cur, err == nil))
		}
	}
	return out
}

// equivalent reports whether cur, a new object under e's name, is a plain
// file with e's content that carries the protection (the explicit deny on
// the protected path itself; beneath it, the protected directory's
// inherited one).
func (m *Manager) equivalent(root snapRoot, e snapEntry, cur FileIdentity) bool {
	if e.id.Dir || e.id.Reparse || cur.Dir || cur.Reparse {
		return false
	}
	b, err := m.sys.ReadFile(e.path)
	if err != nil || sha256.Sum256(b) != e.sum {
		return false
	}
	if Key(e.path) != Key(root.path) {
		return true
	}
	has, err := m.sys.HasACE(root.path, root.ace)
	return err == nil && has
}

// checkAdded reports the names in the directory e that were not there at
// Prepare, removing them when the directory is a new object.
func (m *Manager) checkAdded(e snapEntry, remove bool) []ProtectedChange {
	names, err := m.sys.ReadDir(e.path)
	if err != nil {
		return []ProtectedChange{{Path: e.path, Change: ChangeModified, Note: "cannot be listed: " + err.Error()}}
	}
	had := map[string]bool{}
	for _, n := range e.children {
		had[Key(n)] = true
	}
	sortNames(names)
	var out []ProtectedChange
	for _, n := range names {
		if had[Key(n)] {
			continue
		}
		p := e.path + `\` + n
		c := ProtectedChange{Path: p, Change: ChangeAdded}
		switch {
		case !remove:
			c.Note = "added to the original directory, which the user may have done: left for review"
		default:
			if err := m.sys.RemoveAll(p); err != nil {
				c.Note = "remove: " + err.Error()
			} else {
				c.Restored = true
			}
		}
		out = append(out, c)
	}
	return out
}

// restoreFile puts a changed file's recorded content back when that is safe.
func (m *Manager) restoreFile(root snapRoot, e snapEntry, change string, cur FileIdentity, exists bool) ProtectedChange {
	c := ProtectedChange{Path: e.path, Change: change}
	switch {
	case e.id.Reparse:
		c.Note = "a link is not recreated"
		return c
	case !e.held:
		c.Note = "its content was too large to record"
		return c
	case exists && (cur.Dir || cur.Reparse):
		c.Note = "a directory or link now has its name"
		return c
	}
	if err := m.sys.WriteFile(e.path, e.content); err != nil {
		c.Note = "restore: " + err.Error()
		return c
	}
	// WriteFile replaced the object, so a protected file is a new object
	// that lacks its explicit deny (a file inside a protected directory
	// inherits the directory's).
	if Key(e.path) == Key(root.path) {
		if err := m.sys.AddACE(e.path, root.ace); err != nil {
			c.Note = "restored, but re-applying the protection failed: " + err.Error()
			return c
		}
	}
	c.Restored = true
	return c
}

// changesError is the error Cleanup returns for changes.
func changesError(changes []ProtectedChange) error {
	if len(changes) == 0 {
		return nil
	}
	var b strings.Builder
	for i, c := range changes {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.String())
	}
	return fmt.Errorf("%w: %s", ErrProtectedChanged, b.String())
}
