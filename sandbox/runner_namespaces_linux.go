package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/bo-agent/sandbox-local/internal/hostinfo"
	"github.com/bo-agent/sandbox-local/internal/seccompfilter"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// namespacesRunner confines with new user, mount, pid, ipc, uts and (network
// deny) net namespaces, in the re-executed binary: the ns-run launcher of
// package launcher, all of it C that runs before (and instead of) the Go
// runtime. It is the Linux runner that can keep .git read-only inside the
// workspace. Where the kernel's Landlock can confine UNIX socket lookups by
// path, it also confines the allowed UNIX sockets with Landlock.
type namespacesRunner struct {
	abi func() int // the kernel's Landlock ABI; tests may fake it
}

func (namespacesRunner) name() string { return RunnerNamespaces }

func (n namespacesRunner) ready() error {
	if err := cgoLaunchers(); err != nil {
		return err
	}
	if _, err := launcherPath(); err != nil {
		return err
	}
	if ok, why := hostinfo.UserNamespaces(); !ok {
		return fmt.Errorf("user namespaces are refused here: %s", why)
	}
	if !hostinfo.Seccomp() {
		return errors.New("the kernel has no seccomp filters")
	}
	return seccompfilter.Available()
}

// probe really enters the namespaces: the launcher builds a root with one
// writable directory holding one read-only subdirectory, and proves a write
// works in the first and is refused in the second.
func (n namespacesRunner) probe(ctx context.Context) error {
	return probeLauncher(ctx, vocab.NsRun, func(allowed string) ([]string, error) {
		ro := filepath.Join(allowed, "read-only")
		return []string{ro}, os.Mkdir(ro, 0o700)
	}, n.complete)
}

// complete returns what the namespaces launcher takes besides the
// policy: the names its guard refuses, and the seccomp program for the
// spec with them (the guard's rules are in it exactly when it runs).
func (namespacesRunner) complete(spec vocab.Spec) (launcherPart, error) {
	part := launcherPart{guarded: guardedNames(spec, os.Lstat)}
	bpf, err := seccompfilter.BPF(withLauncher(spec, part), seccompfilter.Namespaces)
	part.seccomp = bpf
	return part, err
}

// guardedNames returns what the launcher's guard keeps the command from
// creating: the read-only subpaths that do not exist now (a main
// repository's .git/commondir) and the absent tool configs grants listed.
// With none, the launcher starts no guard and its filter hands nothing to
// it.
func guardedNames(spec vocab.Spec, lstat func(string) (os.FileInfo, error)) []string {
	var out []string
	for _, p := range spec.ReadOnly {
		if _, err := lstat(p); err != nil && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range spec.Guarded {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// traits: the other wraps' temp dirs are out of reach; the sandbox has its
// own network namespace, and the launcher hands its loopback listeners to
// the provider's bridge.
// Its command runs in a user namespace of its own, and its temp dir can be
// a tmpfs of its own.
func (namespacesRunner) traits() traits {
	return traits{deniesTempParent: true, ports: portsBridged, limits: limitTraits{launcher: true, usernsNproc: true, tmpfs: true},
		recordsRefusals: true, overlays: true}
}

func (n namespacesRunner) prepare(_ context.Context, spec vocab.Spec) (launch, error) {
	exe, err := launcherPath()
	if err != nil {
		return launch{}, unavailable(n.name(), "launcher unusable", err)
	}
	part, err := n.complete(spec)
	if err != nil {
		return launch{}, unavailable(n.name(), "no seccomp program", err)
	}
	spec = withLauncher(spec, part)
	args, err := vocab.Encode(vocab.NsRun, spec)
	if err != nil {
		return launch{}, &Error{Code: CodeInvalidPolicy, Runner: n.name(), Reason: "cannot encode the launcher arguments", Err: err}
	}
	return launch{
		path: exe, args: args,
		dir: launcherDir, heldEnv: linuxHeldEnv(),
		gaps:    gapsOf(vocab.NamespaceGaps(spec, n.abi(), os.Lstat)),
		denials: linuxDenialSignatures,
		rule: RunnerFailureRule{
			Kind:        RuleExitAndLine,
			ExitCode:    vocab.FatalExit,
			FatalPrefix: vocab.FatalPrefix(vocab.NsRun, spec.Token),
		},
	}, nil
}
