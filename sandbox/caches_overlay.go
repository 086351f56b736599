package sandbox

import (
	"path/filepath"

	"github.com/bo-agent/sandbox-local/internal/privdir"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// overlaySuffix names, beside a workspace's default cache dir, the
// directory that holds its Go module cache overlay's upper and work
// directories (<key>.gomod): in the caches root, which no command can
// write, so the overlay's own bookkeeping is out of the command's reach
// (only what it writes through the overlay lands there).
const overlaySuffix = ".gomod"

// overlayPart is what the caches step adds to a namespaces launch: the
// user's Go module cache shown at its own path as an overlay, with the
// command's writes going to the workspace's upper layer.
type overlayPart struct {
	lower string // the user's module cache, symlinks resolved: the mount point
	dir   string // <cache dir>.gomod, holding upper and work
	env   string // GOMODCACHE as the user's go spells it
}

// goModOverlay decides whether this wrap shows the user's Go module cache
// through an overlay, and makes the overlay's directories. Only a runner
// that mounts can (traits.overlays), only for the per-workspace default
// cache dir, where the cache dir's file system can hold an upper layer
// (overlayUpperFS), and only where the overlay hides nothing the policy placed:
// no writable root, temp dir, read-only, deny-read, guarded or socket
// path inside the module cache, and the module cache inside none of the
// writable roots or deny-read paths (goWarmUsable). Anything else keeps
// the module cache the workspace's own, warmed through GOPROXY.
//
// Why: the go command's action ID for a package outside GOROOT holds its
// directory, so only a module cache at the user's own path lets the
// user's build cache (read through GOCACHEPROG) serve the workspace's
// dependencies; and the modules the user has are there, extracted, with
// nothing to download or unpack again.
func goModOverlay(run runner, r *resolved, policy vocab.Spec, temp tempPart) overlayPart {
	c := r.caches
	if !run.traits().overlays || c == nil || c.off || c.skip["go"] || c.meta == "" || c.dir == "" || c.goMod == "" ||
		c.set["GOMODCACHE"] || c.set["GOPATH"] {
		return overlayPart{}
	}
	placed := append(append(append([]string{c.dir, temp.dir}, policy.Writable...), policy.DenyRead...), temp.denyRead...)
	lower, ok := goWarmUsable(c.goMod, placed, r.denyRead)
	if !ok {
		return overlayPart{}
	}
	for _, list := range [][]string{placed, policy.ReadOnly, policy.Guarded, policy.UnixSockets} {
		for _, p := range list {
			if p != "" && (underAny(p, []string{lower, c.goMod})) {
				return overlayPart{}
			}
		}
	}
	dir := c.dir + overlaySuffix
	for _, d := range []string{dir, filepath.Join(dir, "upper"), filepath.Join(dir, "work")} {
		if privdir.Ensure(d) != nil {
			return overlayPart{}
		}
	}
	if underAny(dir, policy.Writable) || !overlayUpperFS(filepath.Join(dir, "upper")) {
		return overlayPart{}
	}
	return overlayPart{lower: lower, dir: dir, env: c.goMod}
}
