package sandbox

import (
	"context"
	"errors"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/seatbelt"
)

// seatbeltRunner confines with macOS Seatbelt through /usr/bin/sandbox-exec
// and a profile generated per call (package seatbelt). sandbox-exec runs the
// provider's own binary as the seatbelt-run step (launcher.Init), which
// reports the sandbox applied on a pipe and execs the command. The only
// platform call is locating sandbox-exec, behind seatbelt.Locator, so
// everything here is tested on Linux with a fake.
type seatbeltRunner struct {
	loc  seatbelt.Locator
	fsys seatbelt.FS
	exe  func() (string, error) // the provider's own binary, run as the seatbelt-run step (launcherPath; tests fake it)
}

func (seatbeltRunner) name() string { return RunnerSeatbelt }

func (s seatbeltRunner) ready() error {
	if _, err := s.exe(); err != nil {
		return err
	}
	_, err := seatbelt.Locate(s.loc)
	return err
}

// probe: seatbelt is the sole candidate of its platform, so it is selected
// unprobed; as one of several (a Config naming it twice) it is only
// located. Its profile is compiled by sandbox-exec on each run, and a
// profile it rejects is a runner failure, never an unconfined run.
func (s seatbeltRunner) probe(context.Context) error { return s.ready() }

// traits: the command shares the host's network, and the profile allows
// TCP connects to the ports on localhost only. The temp parent stays
// readable: a deny would close the wrap's own temp dir too.
func (seatbeltRunner) traits() traits { return traits{ports: portsHost} }

func (s seatbeltRunner) prepare(_ context.Context, spec vocab.Spec) (launch, error) {
	path, err := seatbelt.Locate(s.loc)
	if err != nil {
		return launch{}, unavailable(s.name(), "sandbox-exec is not usable", err)
	}
	ss := seatbelt.Spec{
		WritableRoots:    spec.Writable,
		ReadOnlySubpaths: spec.ReadOnly,
		DenyRead:         spec.DenyRead,
		TempDir:          spec.TempDir,
		AllowNetwork:     spec.Network == vocab.NetworkAllow,
		UnixSockets:      spec.UnixSockets,
		LoopbackPorts:    spec.Ports,
		TrustServices:    spec.Network == vocab.NetworkProxied,
	}
	self, err := s.exe()
	if err != nil {
		return launch{}, unavailable(s.name(), "launcher unusable", err)
	}
	if err := launcherOutsideWritable(self, spec.Writable, spec.TempDir); err != nil {
		return launch{}, err
	}
	out := launch{path: path}
	prof, err := seatbelt.Build(s.fsys, ss)
	if err == nil {
		out.args, err = prof.LaunchArgs(self, spec.Argv)
	}
	if err != nil {
		if errors.Is(err, seatbelt.ErrInvalidPath) || errors.Is(err, seatbelt.ErrNoCommand) || errors.Is(err, seatbelt.ErrInvalidPort) {
			return launch{}, &Error{Code: CodeInvalidPolicy, Runner: s.name(), Reason: "cannot express the policy as a Seatbelt profile", Err: err}
		}
		return launch{}, unavailable(s.name(), "cannot build the Seatbelt profile", err)
	}
	out.gaps = append(out.gaps, gapsOf(append(seatbelt.Gaps(ss), prof.Gaps()...))...)
	out.denials = seatbelt.DenialSignatures(ss)
	// Compilers' module caches live in the per-user cache directory the
	// profile keeps closed: point them into the wrap's temp dir.
	for _, v := range seatbelt.CacheVars() {
		out.cacheVars = append(out.cacheVars, cacheVar{name: v.Name, subdir: v.Subdir})
	}
	// sandbox-exec reserves no exit status: signature-only, on the first
	// line (it fails before it execs the seatbelt-run step, and the step
	// before it execs the command). The step reports on a pipe that the
	// sandbox is applied (Command passes it): with that report, no line is
	// a runner failure, so the command cannot forge one. sandbox-exec's
	// "execvp() of" is the step failing to start, a runner failure too;
	// the command not found is the step's "seatbelt-run: execvp() of",
	// the command's outcome.
	out.rule = RunnerFailureRule{
		Kind:          RuleSignature,
		Signatures:    []string{seatbelt.RunnerFailurePrefix, seatbelt.StepFailurePrefix},
		AppliedEnv:    vocab.AppliedEnv,
		AppliedMarker: vocab.AppliedMarker,
	}
	return out, nil
}
