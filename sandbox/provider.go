package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/bo-agent/sandbox-local/internal/hostinfo"
	"github.com/bo-agent/sandbox-local/internal/nativepath"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// Config configures a Provider: only the mechanism, never a policy.
type Config struct {
	// Runners overrides the platform's candidate runners, in order. One
	// name is selected directly, unprobed; several are probed in order.
	// Empty means the platform default: namespaces then landlock on Linux,
	// seatbelt on macOS, winacl on Windows.
	Runners []string `json:"runners,omitempty"`
	// VerdictCache remembers, for an hour and per user, that the preferred
	// runner passed its probe, so that a short-lived consumer (a CLI that
	// wraps one command) does not launch a probe sandbox before every
	// command. It only ever skips that probe, never chooses another
	// runner; it lives in the per-user private temp parent, which no wrap
	// can write (a writable root containing it is INVALID_POLICY); a wrap
	// selected from it whose launcher fails drops it (Classify).
	VerdictCache bool `json:"verdict_cache,omitempty"`
	// Resolver resolves the names the domain proxy of NetworkProxied
	// connects to; nil is the system's (net.DefaultResolver).
	Resolver Resolver `json:"-"`
}

// The runners' names, as Config.Runners, Wrapped.Runner, Error.Runner,
// Runners and Diagnosis spell them.
const (
	// RunnerNamespaces: Linux, the ns-run launcher (user, mount, pid, IPC
	// and network namespaces, with Landlock and seccomp).
	RunnerNamespaces = "namespaces"
	// RunnerLandlock: Linux, the landlock-run launcher (Landlock and
	// seccomp, no namespaces).
	RunnerLandlock = "landlock"
	// RunnerSeatbelt: macOS, sandbox-exec with a generated profile.
	RunnerSeatbelt = "seatbelt"
	// RunnerWinACL: Windows, a write-restricted token and ACLs.
	RunnerWinACL = "winacl"
)

// Provider wraps commands in the local sandbox. It stores only the
// mechanism and the cached runner verdict; policy is per call. Safe for
// concurrent use.
type Provider struct {
	cfg   Config
	cands []runner
	cerr  error
	sel   selection
	fsys  fileSystem
}

// LocalSandboxProvider is Provider under the name the product's
// description gives the local sandbox provider, so that a consumer written
// against that description compiles. It is an alias: the same type, with
// nothing of its own; new code can use Provider.
type LocalSandboxProvider = Provider

// New returns a provider for cfg. Nothing is probed until the first Wrap
// (or Runner, or Diagnose).
func New(cfg Config) *Provider {
	cands, err := candidates(cfg.Runners)
	return &Provider{cfg: cfg, cands: cands, cerr: err, fsys: osFS{}, sel: selection{cache: cfg.VerdictCache}}
}

var (
	defaultOnce     sync.Once
	defaultProvider *Provider
)

// Default returns the process-wide provider with the zero Config.
func Default() *Provider {
	defaultOnce.Do(func() { defaultProvider = New(Config{}) })
	return defaultProvider
}

// Runner returns the name of the selected runner, selecting it if needed.
func (p *Provider) Runner(ctx context.Context) (string, error) {
	r, err := p.sel.selectRunner(ctx, p.cands, p.cerr)
	if err != nil {
		return "", err
	}
	return r.name(), nil
}

// Wrap validates req, selects the runner (once per provider, and again
// after a runner failure that Classify reported) and returns
// the command ready to spawn. Errors are *Error: INVALID_POLICY before
// anything was spawned or created, SANDBOX_UNAVAILABLE when no runner can
// confine it (then do not run the command at all).
func (p *Provider) Wrap(ctx context.Context, req Request) (*Wrapped, error) {
	r, err := validate(req)
	if err != nil {
		return nil, err
	}
	run, err := p.sel.selectRunner(ctx, p.cands, p.cerr)
	if err != nil {
		return nil, err
	}
	if err := prepareCaches(r); err != nil {
		return nil, err
	}
	token, err := vocab.NewToken()
	if err != nil {
		return nil, unavailable(run.name(), "cannot make a wrap token", err)
	}
	w := &Wrapped{Dir: r.dir, Runner: run.name(), fromCache: p.sel.cachedChoice(), sel: &p.sel, selGen: p.sel.generation()}
	policy, protectGaps := grants(p.fsys, r, token)
	var temp tempPart
	if !run.traits().ownTemp {
		if temp, err = makeTemp(run, policy.Writable, w); err != nil {
			return nil, err
		}
	}
	limits, limitGaps := applyLimits(run, r, w)
	net, err := startNetwork(run, r, token, w, p.cfg.Resolver)
	if err != nil {
		w.Cleanup()
		return nil, err
	}
	spec := buildSpec(policy, temp, limits, net, goModOverlay(run, r, policy, temp))
	l, err := run.prepare(ctx, spec)
	if err != nil {
		w.Cleanup()
		return nil, err
	}
	w.adopt(l)
	// A runner's own temp dir (traits.ownTemp) is checked too.
	if err := launcherOutsideWritable(w.Path, spec.Writable, w.TempDir); err != nil {
		w.Cleanup()
		return nil, err
	}
	w.Gaps = append(append(w.Gaps, protectGaps...), limitGaps...)
	w.Enforcement = Full
	if len(w.Gaps) > 0 {
		w.Enforcement = Partial
		if r.requireFull {
			w.Cleanup()
			return nil, unavailable(run.name(), "full enforcement required, but: "+joinGaps(w.Gaps), nil)
		}
	}
	for _, v := range append([]string{"TMPDIR"}, l.tempVars...) {
		w.LaunchEnv = append(w.LaunchEnv, v+"="+w.TempDir)
	}
	for _, v := range l.cacheVars {
		if envValue(r.env, v.name) != "" {
			continue // the caller's own choice stands
		}
		w.LaunchEnv = append(w.LaunchEnv, v.name+"="+filepath.Join(w.TempDir, v.subdir))
	}
	w.LaunchEnv = append(w.LaunchEnv, w.cacheVars(r, spec)...)
	w.LaunchEnv = append(append(w.LaunchEnv, w.netVars...), l.env...)
	if w.RunnerFailure.Kind == RuleExitAndLine {
		// The launcher reads the token that signs its fatal line here, and
		// removes it before the command starts.
		w.LaunchEnv = append(w.LaunchEnv, vocab.TokenEnv+"="+spec.Token)
	}
	w.Env, w.WithheldEnv = r.env, r.withheldEnv
	w.rules = &pathRules{mode: r.mode, dir: r.dir, writable: spec.Writable, temp: w.TempDir,
		readOnly: spec.ReadOnly, guarded: spec.Guarded,
		toolConfigs: r.toolConfigs, extraRO: r.extraRO, denyRead: spec.DenyRead, userDeny: r.userDeny,
		network: r.network.mode, withheld: r.withheldEnv}
	if home, ok := realHome(); ok {
		w.rules.home = home
	}
	if w.HeldEnv != nil {
		w.Env = vocab.HoldEnv(w.Env)
	}
	var unset []string
	for _, u := range w.Caches {
		unset = append(unset, u.Replaced...)
	}
	if len(w.netVars) > 0 {
		unset = append(unset, proxyAliasesIn(w.Env, w.netVars)...)
	}
	// Only Command names the refusal record's pipe: a value inherited from
	// the caller would point the launcher at some other descriptor.
	unset = append(unset, vocab.RefusalsEnv)
	if v := w.RunnerFailure.AppliedEnv; v != "" {
		// Only Command names the report pipe: a value inherited from the
		// caller would point the launcher at some other descriptor.
		unset = append(unset, v)
	}
	w.Env = setVars(w.Env, w.LaunchEnv, unset)
	w.recordsRefusals = run.traits().recordsRefusals
	return w, nil
}

// setVars returns env with the variables of set (NAME=VALUE) set, the last
// of a name winning, after env's own and in set's order, and then without
// the variables named in unset, even those set sets: one pass over env,
// whatever the number of variables.
func setVars(env, set, unset []string) []string {
	gone := make(map[string]bool, len(set)+len(unset))
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		gone[name] = true
	}
	for _, name := range unset {
		gone[name] = true
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !gone[name] {
			out = append(out, kv)
		}
	}
	last := make(map[string]int, len(set))
	for i, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		last[name] = i
	}
	for i, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		if last[name] == i && !slices.Contains(unset, name) {
			out = append(out, kv)
		}
	}
	return out
}

// launcherOutsideWritable refuses a wrap whose launcher the command could
// replace: a launcher binary inside a writable root (or the temp dir) would
// let one command swap it, and every later wrap would then run the
// attacker's file, unconfined, before any rule applies.
func launcherOutsideWritable(path string, writable []string, tempDir string) error {
	for _, root := range append(append([]string(nil), writable...), tempDir) {
		if root != "" && nativepath.Within(path, root) {
			return invalidf("the launcher binary %s is inside the writable root %s: a command could replace it and run the next command unconfined; move the binary or the root", path, root)
		}
	}
	return nil
}

// tempOutsideWritable refuses a writable root that holds the per-user temp
// parent: a command could then write the other wraps' private temp dirs
// and the verdict cache (a forged verdict fails every later run).
func tempOutsideWritable(roots []string) error {
	base := os.TempDir()
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	for _, root := range roots {
		if nativepath.Within(base, root) {
			return invalidf("the writable root %s holds the temp directory %s, where every wrap keeps its private temp dir and the runner verdict: a command could write other commands' temp dirs; grant a directory below it, or set TMPDIR elsewhere", root, base)
		}
	}
	return nil
}

// makeTemp makes the wrap's private temp dir in the per-user parent, for
// a runner that makes none of its own (traits.ownTemp): it sets w.TempDir
// and w.cleanup, and returns the Spec's part.
func makeTemp(run runner, writable []string, w *Wrapped) (tempPart, error) {
	if err := tempOutsideWritable(writable); err != nil {
		return tempPart{}, err
	}
	tmp, err := newPrivateTemp()
	if err != nil {
		return tempPart{}, unavailable(run.name(), "cannot create the private temp dir", err)
	}
	w.TempDir = tmp
	w.cleanup = func() error { return removeTemp(tmp) }
	part := tempPart{dir: tmp}
	// The per-user parent holds every other wrap's temp dir (and its
	// bridge, and the runner verdict): the command may read only its own,
	// where the runner can deny a directory and grant one inside it.
	if run.traits().deniesTempParent {
		part.denyRead = []string{filepath.Dir(tmp)}
	}
	return part, nil
}

// dropVar returns env without the variable name.
func dropVar(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if n, _, _ := strings.Cut(e, "="); n != name {
			out = append(out, e)
		}
	}
	return out
}

// Diagnosis is what Diagnose found: the machine's features, every
// candidate's probe verdict, and the runner a Wrap would use.
type Diagnosis struct {
	Host       HostFacts        `json:"host"`
	Candidates []CandidateCheck `json:"candidates"`
	// Selected is the runner Wrap uses, "" when none.
	Selected string `json:"selected"`
	// Error is why none is selected.
	Error string `json:"error,omitempty"`
}

// HostFacts are the machine's features that decide which runner can work.
type HostFacts struct {
	// OS is runtime.GOOS.
	OS string `json:"os"`
	// Kernel is the kernel release, where known.
	Kernel string `json:"kernel,omitempty"`
	// LandlockABI is the Landlock ABI version, 0 when absent.
	LandlockABI int `json:"landlock_abi"`
	// Seccomp reports whether seccomp filters are available.
	Seccomp bool `json:"seccomp"`
	// UserNamespaces says whether unprivileged user namespaces look allowed
	// by the sysctls (the namespaces probe is the real test).
	UserNamespaces bool `json:"user_namespaces"`
	// UserNamespacesNote explains UserNamespaces.
	UserNamespacesNote string `json:"user_namespaces_note,omitempty"`
}

// readHost reads the machine's HostFacts.
func readHost() HostFacts {
	f := HostFacts{OS: runtime.GOOS, Kernel: hostinfo.Kernel(), LandlockABI: hostinfo.LandlockABI(), Seccomp: hostinfo.Seccomp()}
	f.UserNamespaces, f.UserNamespacesNote = hostinfo.UserNamespaces()
	return f
}

// CandidateCheck is one candidate's probe verdict.
type CandidateCheck struct {
	Runner string `json:"runner"`
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

// Diagnose probes every candidate (even a sole one) and reports. It does not
// change the provider's cached selection, but computes it if needed; a
// failed probe of the preferred runner drops the verdict cache's entry
// (Config.VerdictCache), so `sandbox-run doctor` also repairs a verdict
// that a changed machine made wrong.
func (p *Provider) Diagnose(ctx context.Context) Diagnosis {
	d := Diagnosis{Host: readHost()}
	for i, c := range p.cands {
		err := p.sel.probe(ctx, c)
		cc := CandidateCheck{Runner: c.name(), OK: err == nil}
		if err != nil {
			cc.Reason = err.Error()
			if i == 0 && len(p.cands) > 1 && ctx.Err() == nil {
				forgetVerdict() // a cached verdict for it is wrong now
			}
		}
		d.Candidates = append(d.Candidates, cc)
	}
	name, err := p.Runner(ctx)
	d.Selected = name
	if err != nil {
		d.Error = err.Error()
	}
	return d
}

// errorf wraps err for a runner step.
func errorf(step string, err error) error { return fmt.Errorf("%s: %w", step, err) }
