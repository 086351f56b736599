package sandbox

import "github.com/bo-agent/sandbox-local/internal/vocab"

// The launcher's Spec is assembled here and nowhere else: each step of a
// wrap returns its part as a value (grants the policy's, makeTemp the temp
// dir's, applyLimits the limits' (a vocab.Limits, copied whole), startNetwork the network's, a Linux
// runner its launcher's), and these functions put the parts together. A
// new field of the Spec is set in the part that knows it and copied here.

// tempPart is what the wrap's private temp dir adds to the Spec (makeTemp).
type tempPart struct {
	dir string
	// denyRead is the per-user parent of the temp dirs, when the runner
	// can deny it (traits.deniesTempParent).
	denyRead []string
}

// netPart is the network's part (startNetwork): the mode, the loopback
// ports (the proxy's first), and the bridge that takes their listeners.
type netPart struct {
	mode   vocab.NetMode
	ports  []int
	bridge string
}

// launcherPart is what a Linux runner adds for its launcher (complete):
// the names its guard refuses, the seccomp program, the Landlock ABI and
// notice.
type launcherPart struct {
	guarded []string
	// seccomp is the program generated for the spec (the filter is
	// defined once, in internal/seccompfilter/gen, and compiled at go
	// generate time); it travels in the same argv. Neither launcher
	// compiles a filter: the namespaces launcher's stages are C, and the
	// landlock launcher would pay for it on every start.
	seccomp string
	abi     int
	notice  string
}

// buildSpec is the provider's Spec for one wrap: the policy's part
// (grants) with the temp dir's, the limits' and the network's.
func buildSpec(policy vocab.Spec, temp tempPart, limits vocab.Limits, net netPart, ovl overlayPart) vocab.Spec {
	s := policy
	s.TempDir = temp.dir
	s.DenyRead = append(append([]string(nil), policy.DenyRead...), temp.denyRead...)
	s.Limits = limits
	s.Network, s.Ports, s.Bridge = net.mode, net.ports, net.bridge
	s.Overlay, s.OverlayDir = ovl.lower, ovl.dir
	return s
}

// withLauncher is spec as a runner's launcher takes it: with the runner's
// part, whose guarded names replace the spec's (only the namespaces
// launcher guards; the landlock launcher takes none).
func withLauncher(spec vocab.Spec, part launcherPart) vocab.Spec {
	spec.Guarded = part.guarded
	spec.Seccomp, spec.LandlockABI, spec.Notice = part.seccomp, part.abi, part.notice
	return spec
}
