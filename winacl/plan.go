package winacl

import (
	"fmt"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// MaxWriteRoots is the most distinct write roots (the workspace included) a
// wrap may have, after nested roots are folded into the roots containing
// them. Each is one restricting SID; with the session SID, Everyone and the
// logon SID a token carries at most MaxWriteRoots+3 = 19 restricting SIDs.
// Windows documents no fixed maximum, but token creation fails once the
// token outgrows its size limit, and every access check walks each ACE
// against each restricting SID; 16 roots is far below the first and keeps
// the second cheap, while covering any sane policy. Beyond it Prepare and
// NewPlan fail with ErrTooManyWriteRoots (INVALID_POLICY).
const MaxWriteRoots = 16

// SessionDirName is the directory under the temp root that holds the
// private temp dirs, their owner markers and launcher status files. It is
// created private (protected DACL: the user and SYSTEM only), so a confined
// command can neither write there nor forge a marker or a status.
const SessionDirName = "sandbox-local"

// Request is what the provider maps its Policy onto.
type Request struct {
	// WriteRoots are the directories the command may write, workspace
	// first: in workspace-write mode the workspace and the writable roots,
	// empty in read-only mode. Absolute, existing directories with symlinks
	// and junctions already resolved by the caller.
	WriteRoots []string
	// ReadOnlySubpaths are kept read-only under the write roots: absolute
	// paths, or paths relative to each write root (".git/hooks"). Entries
	// outside every write root are read-only anyway and are skipped.
	ReadOnlySubpaths []string
	// DenyRead cannot be enforced by a write-restricted token; the paths
	// are reported as a gap.
	DenyRead []string
	// AllowNetwork says the policy allows network. When false, the network
	// deny it asks for is reported as a gap (it cannot be enforced).
	AllowNetwork bool
}

// WriteRoot is one canonical write root and its deterministic write SID.
type WriteRoot struct {
	// Path is the canonical root.
	Path string
	// SID is WriteSID(Path).
	SID SID
}

// PlannedACE is one standing ACE of a plan: the object and the entry.
type PlannedACE struct {
	// Path is the canonical object that carries the ACE.
	Path string
	// ACE is the entry.
	ACE ACE
	// Purpose says why, for messages.
	Purpose string
	// protects marks the deny ACE on a protected path itself, whose absence
	// (a missing path) is a gap; ancestors' ACEs are not reported.
	protects bool
}

// Plan is the validated, canonical form of a Request: what Prepare will
// check and add. Building it reads no ACL and changes nothing; only 8.3
// names are resolved.
type Plan struct {
	// TempRoot is the canonical platform temp root.
	TempRoot string
	// SessionRoot is TempRoot\SessionDirName.
	SessionRoot string
	// WriteRoots are the distinct top-level write roots, in request order.
	WriteRoots []WriteRoot
	// Protected are the canonical protected paths under the write roots.
	Protected []string
	// Standing are the standing ACEs: one inheritable grant per write root,
	// then the denies that keep the protected paths read-only. They are
	// never revoked (they are what makes the next run fast), and each is
	// added only when a read of the object's DACL shows it absent.
	Standing []PlannedACE
	// Gaps are the policy-specific gaps known before touching the disk.
	Gaps []vocab.Gap
	// AllowNetwork is the request's: when false the session gets the soft
	// offline environment (Session.OfflineEnv).
	AllowNetwork bool
}

// NewPlan validates and canonicalises req against the platform temp root
// tempRoot, resolving 8.3 names through r (nil: none). Every error it
// returns for bad input matches ErrInvalidPolicy; it changes nothing.
func NewPlan(req Request, tempRoot string, r PathResolver) (*Plan, error) {
	tr, err := canonical(tempRoot, rejectStreams, r)
	if err != nil {
		return nil, fmt.Errorf("winacl: temp root: %w", err)
	}
	sessRoot := winPath{root: tr.root, comps: append(append([]string(nil), tr.comps...), SessionDirName)}
	pl := &Plan{TempRoot: tr.String(), SessionRoot: sessRoot.String(), AllowNetwork: req.AllowNetwork}

	var roots []string
	for _, w := range req.WriteRoots {
		wp, err := canonical(w, rejectStreams, r)
		if err != nil {
			return nil, fmt.Errorf("winacl: write root: %w", err)
		}
		c := wp.String()
		switch {
		case Within(pl.TempRoot, c):
			return nil, fmt.Errorf("%w: %s contains the temp root %s", ErrContainsTempRoot, c, pl.TempRoot)
		case Within(c, pl.SessionRoot):
			return nil, fmt.Errorf("%w: %s is inside %s", ErrInsideSessionRoot, c, pl.SessionRoot)
		case wp.isRoot():
			return nil, fmt.Errorf("%w: %s", ErrVolumeRoot, c)
		}
		roots = append(roots, c)
	}
	top := foldNested(roots)
	if len(top) > MaxWriteRoots {
		return nil, fmt.Errorf("%w: %d distinct write roots, at most %d", ErrTooManyWriteRoots, len(top), MaxWriteRoots)
	}

	prot := &Protector{}
	for _, e := range req.ReadOnlySubpaths {
		if isAbsSpelling(e) {
			wp, err := canonical(e, stripStreams, r)
			if err != nil {
				return nil, fmt.Errorf("winacl: read-only subpath: %w", err)
			}
			prot.add(wp.String())
			continue
		}
		if e == "" || isDrive(e) || e[0] == '\\' || e[0] == '/' {
			return nil, fmt.Errorf("winacl: read-only subpath: %w", badPath(e, "neither absolute nor relative to a root"))
		}
		for _, root := range roots {
			jp, err := join(root, e, stripStreams)
			if err != nil {
				return nil, fmt.Errorf("winacl: read-only subpath: %w", err)
			}
			if !Within(jp.String(), root) || Key(jp.String()) == Key(root) {
				return nil, fmt.Errorf("winacl: read-only subpath: %w", badPath(e, "does not name a path beneath the root"))
			}
			wp, err := canonical(jp.String(), stripStreams, r)
			if err != nil {
				return nil, fmt.Errorf("winacl: read-only subpath: %w", err)
			}
			prot.add(wp.String())
		}
	}
	for _, root := range roots {
		if prot.Match(root) {
			return nil, fmt.Errorf("%w: %s", ErrRootProtected, root)
		}
	}

	for _, root := range top {
		sid := deriveSID(writeSIDDomain, root)
		pl.WriteRoots = append(pl.WriteRoots, WriteRoot{Path: root, SID: sid})
		pl.Standing = append(pl.Standing, PlannedACE{Path: root, ACE: ACE{SID: sid, Access: AccessModify, Inherit: true},
			Purpose: "grant write under " + root})
	}
	for _, p := range prot.paths {
		for _, wr := range pl.WriteRoots {
			if Within(p, wr.Path) {
				pl.Protected = append(pl.Protected, p)
				for _, pa := range protectionACEs(wr.Path, wr.SID, p) {
					pl.Standing = appendACE(pl.Standing, pa)
				}
				break
			}
		}
	}

	var deny []string
	for _, d := range req.DenyRead {
		wp, err := parsePath(d, stripStreams)
		if err != nil {
			return nil, fmt.Errorf("winacl: deny-read path: %w", err)
		}
		deny = append(deny, wp.String())
	}
	pl.Gaps = denyReadGap(deny)
	if !req.AllowNetwork {
		pl.Gaps = append(pl.Gaps, networkGap)
	}
	return pl, nil
}

// foldNested drops duplicates and roots beneath another root, keeping the
// order of first appearance: the outer root's inheritable ACE already covers
// them, and each dropped root is one restricting SID fewer.
func foldNested(roots []string) []string {
	var out []string
next:
	for i, r := range roots {
		for j, o := range roots {
			if i == j {
				continue
			}
			if Within(r, o) && (Key(r) != Key(o) || j < i) {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

// appendACE appends pa unless the same ACE on the same object is there.
func appendACE(list []PlannedACE, pa PlannedACE) []PlannedACE {
	for i, have := range list {
		if Key(have.Path) == Key(pa.Path) && have.ACE == pa.ACE {
			list[i].protects = have.protects || pa.protects
			return list
		}
	}
	return append(list, pa)
}
