package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// selection is the provider's cached verdict.
type selection struct {
	mu      sync.Mutex
	done    bool
	chosen  runner
	err     error
	probeFn func(context.Context, runner) error // nil: runner.probe
	// cache: use the per-user verdict cache (Config.VerdictCache, verdict.go).
	cache bool
	// fromCache: chosen was taken from the verdict cache, unprobed.
	fromCache bool
	// gen names the verdict: it grows each time one is dropped (forget),
	// so that a wrap's runner failure drops only the verdict it ran on.
	gen uint64
}

// cachedChoice reports whether the verdict came from the verdict cache.
func (s *selection) cachedChoice() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fromCache
}

// generation names the current verdict, for forget.
func (s *selection) generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// forget drops the verdict gen, a runner chosen, after a launch on it
// failed as a runner failure (Classify): the machine may have changed
// since (a mount, a sysctl, a container's profile), so the next Wrap
// selects again, probing the candidates, instead of failing on that runner
// for the provider's whole life. A verdict already dropped, or one that
// chose nothing, stays.
func (s *selection) forget(gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done && s.gen == gen && s.err == nil {
		s.done, s.chosen, s.fromCache = false, nil, false
		s.gen++
	}
}

// candidateResult is one candidate's verdict.
type candidateResult struct {
	Runner string
	Err    error
}

// selectRunner returns the cached verdict, computing it on first use: a
// sole candidate is checked with ready and taken; several are probed in
// order and the first that passes is taken. A verdict is computed once,
// even when many goroutines ask at the same moment; only a probe cut short
// by the caller's ctx is not cached, and a runner failure at launch drops
// it (forget).
func (s *selection) selectRunner(ctx context.Context, cands []runner, configErr error) (runner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.chosen, s.err
	}
	chosen, err := s.compute(ctx, cands, configErr)
	if err != nil && ctx.Err() != nil {
		return nil, unavailable("", "runner selection was cancelled", ctx.Err())
	}
	s.done, s.chosen, s.err = true, chosen, err
	return chosen, err
}

func (s *selection) compute(ctx context.Context, cands []runner, configErr error) (runner, error) {
	if configErr != nil {
		return nil, configErr
	}
	if len(cands) == 0 {
		return nil, unavailable("", "no sandbox runner exists for this platform", nil)
	}
	if len(cands) == 1 {
		if err := cands[0].ready(); err != nil {
			return nil, unavailable(cands[0].name(), "runner cannot work here", err)
		}
		return cands[0], nil
	}
	// The cache may only skip the preferred runner's probe, never pick
	// another; its cheap readiness check still runs.
	if s.cache && cachedVerdict(cands[0].name()) && cands[0].ready() == nil {
		s.fromCache = true
		return cands[0], nil
	}
	var results []candidateResult
	for i, c := range cands {
		err := s.probe(ctx, c)
		if err == nil {
			if s.cache && i == 0 {
				rememberVerdict(c.name())
			}
			return c, nil
		}
		results = append(results, candidateResult{c.name(), err})
	}
	if names, err := sameFailure(results); err != nil {
		// One reason for all (a CGO_ENABLED=0 build): said once.
		return nil, &Error{Code: CodeUnavailable, Reason: "every runner failed its probe (" + names + ")", Err: err}
	}
	return nil, &Error{Code: CodeUnavailable, Reason: "every runner failed its probe: " + joinResults(results), Err: errors.Join(errsOf(results)...)}
}

func (s *selection) probe(ctx context.Context, r runner) error {
	if s.probeFn != nil {
		return s.probeFn(ctx, r)
	}
	if err := r.ready(); err != nil {
		return err
	}
	return r.probe(ctx)
}

// sameFailure returns the runners' names and their one error when every
// result failed with the same message, else nil.
func sameFailure(rs []candidateResult) (string, error) {
	names := make([]string, len(rs))
	for i, r := range rs {
		if r.Err.Error() != rs[0].Err.Error() {
			return "", nil
		}
		names[i] = r.Runner
	}
	return strings.Join(names, ", "), rs[0].Err
}

func joinResults(rs []candidateResult) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s: %v", r.Runner, r.Err)
	}
	return strings.Join(parts, "; ")
}

func errsOf(rs []candidateResult) []error {
	errs := make([]error, len(rs))
	for i, r := range rs {
		errs[i] = r.Err
	}
	return errs
}

// candidates resolves Config.Runners (or the platform's default order) into
// runners; an unknown name is an error that every Wrap then reports.
func candidates(names []string) ([]runner, error) {
	all := platformRunners()
	if len(names) == 0 {
		return all, nil
	}
	var out []runner
	for _, n := range names {
		var found runner
		for _, r := range all {
			if r.name() == n {
				found = r
			}
		}
		if found == nil {
			return nil, unavailable(n, fmt.Sprintf("runner %q is not available on this platform (have: %s)", n, strings.Join(runnerNames(all), ", ")), nil)
		}
		out = append(out, found)
	}
	return out, nil
}

func runnerNames(rs []runner) []string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.name()
	}
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}

// Runners returns the names of this platform's runners, the preferred
// first: the order in which a Provider whose Config names none tries them.
func Runners() []string {
	rs := platformRunners()
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.name()
	}
	return names
}
