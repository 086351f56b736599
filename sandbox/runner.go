package sandbox

import (
	"context"
	"errors"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// runner is one confinement mechanism. Runners hold no policy and no state
// of a wrap: everything one wrap needs comes back from prepare as a value.
type runner interface {
	// name is the runner's name in Config.Runners, reports and errors.
	name() string
	// ready is the cheap check that the mechanism can work here at all
	// (no spawn); it is all a sole candidate gets.
	ready() error
	// probe really confines a launcher and checks that a denied write is
	// denied and an allowed one works.
	probe(ctx context.Context) error
	// traits are the static facts the provider needs before prepare.
	traits() traits
	// prepare turns spec into the launcher to spawn. The spec is complete:
	// its temp dir (unless traits.ownTemp), ports and bridge are set. On
	// an error it leaves nothing behind; on success, what it made is
	// undone by the launch's cleanup.
	prepare(ctx context.Context, spec vocab.Spec) (launch, error)
}

// traits are what the provider does around a runner's prepare. The zero
// value: the provider makes the private temp dir, leaves its parent
// readable, and refuses a policy that needs loopback ports.
type traits struct {
	// ownTemp: prepare makes the private temp dir itself and returns it
	// in launch.tempDir (winacl: a session dir with its own SID and ACE);
	// the provider makes none.
	ownTemp bool
	// deniesTempParent: the runner can deny reading the per-user parent
	// of the temp dirs while the wrap's own dir inside it stays writable
	// (a mount over the parent with the dir bound inside; Landlock rules,
	// which only add). Seatbelt's deny rules come after every allow, so a
	// deny of the parent would close the temp dir too: there the other
	// wraps' temp dirs stay readable (SECURITY.md).
	deniesTempParent bool
	// ports is how the runner holds a command to loopback TCP ports: the
	// proxied network and allowed local ports.
	ports portMode
	// limits are the resource limits its launcher can hold.
	limits limitTraits
	// recordsRefusals: its launcher records the refusals its guard or
	// supervisor makes on the descriptor vocab.RefusalsEnv names.
	recordsRefusals bool
	// overlays: its launcher mounts an overlay (vocab.Spec.Overlay), so
	// the user's Go module cache can be shown at its own path with the
	// command's writes kept apart (goModOverlay).
	overlays bool
}

// portMode is how a runner holds a command to loopback TCP ports.
type portMode int

const (
	// portsNone: it cannot; a policy that needs ports is
	// SANDBOX_UNAVAILABLE, never a wider network.
	portsNone portMode = iota
	// portsHost: the command shares the host's network, and the runner's
	// rules hold its connects to the ports on the host's loopback.
	portsHost
	// portsBridged: the sandbox has its own network; the launcher makes
	// its own loopback listeners and hands them to the provider's bridge.
	portsBridged
)

// launch is one wrap's launcher, as prepare made it: plain values the
// provider copies into Wrapped (adopt), and the cleanup of what prepare
// created.
type launch struct {
	path    string   // the program to spawn (Wrapped.Path)
	args    []string // its argv, Args[0] included
	dir     string   // where to spawn it; "" keeps the command's directory
	heldEnv *HeldEnv // the variables the launcher must not start with
	gaps    []Gap
	denials []string // stderr fragments of a likely denial
	rule    RunnerFailureRule
	// tempDir is the private temp dir prepare made (traits.ownTemp).
	tempDir string
	// tempVars are the variables besides TMPDIR set to the temp dir (TMP,
	// TEMP on Windows).
	tempVars []string
	// cacheVars are pointed below the temp dir, unless the command's
	// environment sets them (compiler caches under seatbelt).
	cacheVars []cacheVar
	// env are further variables the launch sets (winacl's soft offline
	// environment under a network deny).
	env []string
	// cleanup undoes what prepare made; nil when it made nothing.
	cleanup func() error
	// checkProtected, when set, checks and restores the read-only subpaths
	// once the command exited (winacl).
	checkProtected func() []ProtectedChange
}

// cacheVar is a variable a runner points at a directory below the wrap's
// temp dir, unless the command's environment already sets it.
type cacheVar struct{ name, subdir string }

// adopt copies l into w; w.cleanup, when set (the provider's temp dir),
// then runs after l's.
func (w *Wrapped) adopt(l launch) {
	w.Path, w.Args = l.path, l.args
	if l.dir != "" {
		w.Dir = l.dir
	}
	if l.tempDir != "" {
		w.TempDir = l.tempDir
	}
	w.HeldEnv = l.heldEnv
	w.Gaps = l.gaps
	w.DenialSignatures = l.denials
	w.RunnerFailure = l.rule
	w.checkProtected = l.checkProtected
	switch own, prev := l.cleanup, w.cleanup; {
	case own == nil:
	case prev == nil:
		w.cleanup = own
	default:
		w.cleanup = func() error { return errors.Join(own(), prev()) }
	}
}
