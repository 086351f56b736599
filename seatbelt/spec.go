package seatbelt

import (
	"fmt"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// Spec is what one confined command may do, in the terms of this runner.
// The sandbox package maps its Policy onto it. Every path is absolute; Build
// canonicalises them (symlinks, /tmp and /var under /private, on-disk
// letter case), so callers pass them as the user named them.
type Spec struct {
	// WritableRoots are the directories the command may write under, the
	// workspace first. Empty in read-only mode.
	WritableRoots []string
	// ReadOnlySubpaths stay read-only even under a writable root (and the
	// temporary directory): git's hooks and config, an agent's own config,
	// and so on, already expanded by the caller to absolute paths under
	// each root, existing or not. A path that is a symlink is protected as
	// the entry it is and as the object it reaches. Neither it nor any of
	// its parents can be renamed or removed, so it cannot be carried out
	// from under its rule.
	ReadOnlySubpaths []string
	// DenyRead are paths the command may not read (~/.ssh, ~/.aws, a
	// workspace .env). Like ReadOnlySubpaths, they and their parents cannot
	// be renamed or removed.
	DenyRead []string
	// TempDir is the private per-command temporary directory: writable, and
	// the only place UNIX sockets may be bound and connected to. Empty for
	// none (then nothing is writable in read-only mode but devices).
	TempDir string
	// AllowNetwork opens IP networking (and DNS through mDNSResponder).
	// UNIX sockets of the host's daemons stay closed either way, but for
	// UnixSockets.
	AllowNetwork bool
	// UnixSockets are pathname UNIX sockets of the host the command may
	// connect to (an ssh-agent, a database), in either network mode.
	UnixSockets []string
	// LoopbackPorts are TCP ports on localhost the command may connect to
	// with the network closed: the domain proxy's, allowed local ports.
	// SBPL's ip filter takes only localhost or * as its host, so the rule
	// holds for loopback alone.
	LoopbackPorts []int
	// TrustServices lets the command reach the system's certificate trust
	// services (trustd, the security server) with the network closed,
	// which TLS clients need to verify a server reached through the
	// domain proxy.
	TrustServices bool
}

// resolvedSpec is a Spec after canonicalisation: what the profile is
// written from.
type resolvedSpec struct {
	writable []string      // writable roots, canonical
	tempDir  string        // canonical, or ""
	readOnly []protectedAs // one per ReadOnlySubpaths entry, in order
	denyRead []protectedAs // one per DenyRead entry, in order
	guards   []string      // parents and symlinks, inside a writable path, that must not be renamed
	network  bool
	sockets  []string // allowed UNIX sockets, canonical
	ports    []int    // loopback TCP ports, with the network closed
	trust    bool     // trust services, with the network closed
}

// protectedAs is one protected path in its two canonical spellings.
type protectedAs struct {
	named    string // the entry itself: parents resolved, final component kept
	resolved string // the object it reaches: the final symlink resolved too
	// variants are the spellings that do not exist yet: on a
	// case-insensitive volume the command could create them in another
	// letter case, so the profile also matches them case-insensitively.
	variants []caseVariant
}

// caseVariant is a protected spelling that does not exist yet, split where
// it stops existing.
type caseVariant struct {
	suffix   string   // of the parameter name: "_EXISTING" (named) or "_RESOLVED_EXISTING"
	path     string   // the spelling
	existing string   // its deepest existing ancestor, canonical
	missing  []string // the components below existing
}

// resolveSpec canonicalises every path of s through r.
func resolveSpec(r *resolver, s Spec) (resolvedSpec, error) {
	rs := resolvedSpec{network: s.AllowNetwork}
	if !s.AllowNetwork {
		for _, port := range s.LoopbackPorts {
			if port < 1 || port > 65535 {
				return rs, fmt.Errorf("seatbelt: loopback port %d: %w", port, ErrInvalidPort)
			}
		}
		rs.ports, rs.trust = s.LoopbackPorts, s.TrustServices
	}
	var guards []string
	seen := map[string]bool{}
	guard := func(p string) {
		if p != "/" && !seen[p] {
			seen[p] = true
			guards = append(guards, p)
		}
	}
	full := func(field, p string) (string, error) {
		res, err := r.resolve(p, true)
		if err != nil {
			return "", fmt.Errorf("seatbelt: %s %q: %w", field, p, err)
		}
		return res.path, nil
	}
	protect := func(field, p string) (protectedAs, error) {
		named, err := r.resolve(p, false)
		if err != nil {
			return protectedAs{}, fmt.Errorf("seatbelt: %s %q: %w", field, p, err)
		}
		resolved, err := r.resolve(p, true)
		if err != nil {
			return protectedAs{}, fmt.Errorf("seatbelt: %s %q: %w", field, p, err)
		}
		for _, q := range []string{named.path, resolved.path} {
			for _, a := range ancestors(q) {
				guard(a)
			}
		}
		for _, l := range append(named.links, resolved.links...) {
			guard(l)
			for _, a := range ancestors(l) {
				guard(a)
			}
		}
		pa := protectedAs{named: named.path, resolved: resolved.path}
		if named.missing != nil {
			pa.variants = append(pa.variants, caseVariant{"_EXISTING", named.path, named.existing, named.missing})
		}
		if resolved.missing != nil && resolved.path != named.path {
			pa.variants = append(pa.variants, caseVariant{"_RESOLVED_EXISTING", resolved.path, resolved.existing, resolved.missing})
		}
		return pa, nil
	}

	for _, p := range s.WritableRoots {
		c, err := full("writable root", p)
		if err != nil {
			return resolvedSpec{}, err
		}
		rs.writable = append(rs.writable, c)
	}
	if s.TempDir != "" {
		c, err := full("temporary directory", s.TempDir)
		if err != nil {
			return resolvedSpec{}, err
		}
		rs.tempDir = c
	}
	for _, p := range s.ReadOnlySubpaths {
		pa, err := protect("read-only subpath", p)
		if err != nil {
			return resolvedSpec{}, err
		}
		rs.readOnly = append(rs.readOnly, pa)
	}
	for _, p := range s.DenyRead {
		pa, err := protect("deny-read path", p)
		if err != nil {
			return resolvedSpec{}, err
		}
		rs.denyRead = append(rs.denyRead, pa)
	}
	for _, p := range s.UnixSockets {
		c, err := full("UNIX socket", p)
		if err != nil {
			return resolvedSpec{}, err
		}
		rs.sockets = append(rs.sockets, c)
	}
	rs.guards = keepGuards(guards, rs)
	return rs, nil
}

// keepGuards keeps the guards that need a rule: those inside a writable
// root or the temporary directory (anywhere else nothing can be renamed
// anyway) that are not protected paths themselves (already denied).
func keepGuards(guards []string, rs resolvedSpec) []string {
	areas := append([]string{}, rs.writable...)
	if rs.tempDir != "" {
		areas = append(areas, rs.tempDir)
	}
	protected := map[string]bool{}
	for _, p := range append(append([]protectedAs{}, rs.readOnly...), rs.denyRead...) {
		protected[p.named] = true
		protected[p.resolved] = true
	}
	var out []string
	for _, g := range guards {
		if !protected[g] && vocab.WithinAny(g, areas) {
			out = append(out, g)
		}
	}
	return out
}
