package sandbox

import (
	"context"
	"errors"

	"github.com/bo-agent/sandbox-local/internal/hostinfo"
	"github.com/bo-agent/sandbox-local/internal/seccompfilter"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// landlockRunner confines with Landlock and seccomp in the re-executed
// binary (the landlock-run launcher in package launcher). It needs no
// namespaces, so it works in containers and on hardened hosts.
type landlockRunner struct {
	abi func() int // the kernel's Landlock ABI; tests may fake it
}

func (landlockRunner) name() string { return RunnerLandlock }

func (l landlockRunner) ready() error {
	if _, err := launcherPath(); err != nil {
		return err
	}
	if l.abi() < 1 {
		return errors.New("the kernel has no Landlock (not built in, or not enabled at boot with lsm=...,landlock)")
	}
	if !hostinfo.Seccomp() {
		return errors.New("the kernel has no seccomp filters")
	}
	return seccompfilter.Available()
}

// probe spawns the launcher in probe mode with a spec granting one
// directory: it must be able to write there and must be refused writing
// next to it. Anything else, including a consumer whose main does not
// start with launcher.Init, fails the probe.
func (l landlockRunner) probe(ctx context.Context) error {
	return probeLauncher(ctx, vocab.LandlockRun, nil, withSeccomp(seccompfilter.Landlock))
}

// deniesTempParent: the other wraps' temp dirs are out of reach.
func (landlockRunner) deniesTempParent() bool { return true }

// bridgesPorts: the command shares the host's network; Landlock's TCP
// rules hold its connects to the ports on the host's loopback (and, a
// gap, on every other address).
func (landlockRunner) bridgesPorts() bool { return false }

func (l landlockRunner) wrap(spec vocab.Spec, w *Wrapped) error {
	exe, err := launcherPath()
	if err != nil {
		return unavailable(l.name(), "launcher unusable", err)
	}
	if abi := l.abi(); len(spec.Ports) > 0 && abi < vocab.ABINetTCP {
		return unavailable(l.name(), "cannot confine the network to loopback ports", vocab.ErrPortsNeedTCPRules(abi))
	}
	spec, err = withSeccomp(seccompfilter.Landlock)(spec)
	if err != nil {
		return unavailable(l.name(), "no seccomp program", err)
	}
	spec.Guarded = nil // only the namespaces launcher guards absent names
	args, err := vocab.Encode(vocab.LandlockRun, spec)
	if err != nil {
		return &Error{Code: CodeInvalidPolicy, Runner: l.name(), Reason: "cannot encode the launcher arguments", Err: err}
	}
	abi := l.abi()
	w.Path, w.Args = exe, args
	w.Dir, w.HeldEnv = launcherDir, linuxHeldEnv()
	w.Gaps = vocab.LandlockGaps(abi, spec)
	w.DenialSignatures = linuxDenialSignatures
	w.RunnerFailure = RunnerFailureRule{
		Kind:        RuleExitAndLine,
		ExitCode:    vocab.FatalExit,
		FatalPrefix: vocab.FatalPrefix(vocab.LandlockRun, spec.Token),
	}
	if n := vocab.NoticeLine(vocab.LandlockRun, vocab.LandlockKernelGaps(abi, spec)); n != "" {
		w.RunnerFailure.IgnoreLines = []string{n}
	}
	return nil
}
