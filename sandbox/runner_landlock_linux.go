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
	return probeLauncher(ctx, vocab.LandlockRun, nil, l.complete)
}

// complete returns what the launcher takes from the provider besides the
// policy: the seccomp program, the Landlock ABI the spec was planned for
// (the launcher refuses a kernel that reports another), and the notice of
// that ABI's gaps, which the launcher prints as it is. It guards no names
// (only the namespaces launcher does).
func (l landlockRunner) complete(spec vocab.Spec) (launcherPart, error) {
	bpf, err := seccompfilter.BPF(spec, seccompfilter.Landlock)
	if err != nil {
		return launcherPart{}, err
	}
	abi := l.abi()
	return launcherPart{seccomp: bpf, abi: abi, notice: vocab.NoticeText(vocab.LandlockKernelGaps(abi, spec))}, nil
}

// traits: the other wraps' temp dirs are out of reach; the command shares
// the host's network, and Landlock's TCP rules hold its connects to the
// ports on the host's loopback (and, a gap, on every other address).
// It holds limits through cgroups and rlimits only.
func (landlockRunner) traits() traits {
	return traits{deniesTempParent: true, ports: portsHost, limits: limitTraits{launcher: true}, recordsRefusals: true}
}

func (l landlockRunner) prepare(_ context.Context, spec vocab.Spec) (launch, error) {
	exe, err := launcherPath()
	if err != nil {
		return launch{}, unavailable(l.name(), "launcher unusable", err)
	}
	abi := l.abi()
	if len(spec.Ports) > 0 && abi < vocab.ABINetTCP {
		return launch{}, unavailable(l.name(), "cannot confine the network to loopback ports", vocab.ErrPortsNeedTCPRules(abi))
	}
	part, err := l.complete(spec)
	if err != nil {
		return launch{}, unavailable(l.name(), "no seccomp program", err)
	}
	spec = withLauncher(spec, part)
	args, err := vocab.Encode(vocab.LandlockRun, spec)
	if err != nil {
		return launch{}, &Error{Code: CodeInvalidPolicy, Runner: l.name(), Reason: "cannot encode the launcher arguments", Err: err}
	}
	out := launch{
		path: exe, args: args,
		dir: launcherDir, heldEnv: linuxHeldEnv(),
		gaps:    gapsOf(vocab.LandlockGaps(abi, spec)),
		denials: linuxDenialSignatures,
		rule: RunnerFailureRule{
			Kind:        RuleExitAndLine,
			ExitCode:    vocab.FatalExit,
			FatalPrefix: vocab.FatalPrefix(vocab.LandlockRun, spec.Token),
		},
	}
	if spec.Notice != "" {
		out.rule.IgnoreLines = []string{vocab.NoticePrefix(vocab.LandlockRun) + spec.Notice}
	}
	return out, nil
}
