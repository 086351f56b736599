package sandbox

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

type fakeRunner struct {
	n               string
	readyErr        error
	probeErr        error
	rule            RunnerFailureRule // its wraps' RunnerFailure
	readies, probes atomic.Int32
}

func (f *fakeRunner) name() string { return f.n }
func (f *fakeRunner) ready() error { f.readies.Add(1); return f.readyErr }
func (f *fakeRunner) probe(context.Context) error {
	f.probes.Add(1)
	return f.probeErr
}
func (f *fakeRunner) traits() traits { return traits{} }
func (f *fakeRunner) prepare(context.Context, vocab.Spec) (launch, error) {
	return launch{rule: f.rule}, nil
}

func TestSelectSoleCandidateUnprobed(t *testing.T) {
	r := &fakeRunner{n: "only"}
	var s selection
	got, err := s.selectRunner(context.Background(), []runner{r}, nil)
	if err != nil || got != r {
		t.Fatalf("got %v, %v", got, err)
	}
	if r.probes.Load() != 0 || r.readies.Load() != 1 {
		t.Fatalf("sole candidate: %d probes, %d readies; want 0, 1", r.probes.Load(), r.readies.Load())
	}
}

func TestSelectSoleCandidateNotReady(t *testing.T) {
	r := &fakeRunner{n: "only", readyErr: errors.New("no kernel support")}
	var s selection
	_, err := s.selectRunner(context.Background(), []runner{r}, nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no kernel support") {
		t.Fatalf("err = %v", err)
	}
}

func TestSelectProbesInOrder(t *testing.T) {
	a := &fakeRunner{n: "a", probeErr: errors.New("userns refused")}
	b := &fakeRunner{n: "b"}
	c := &fakeRunner{n: "c"}
	var s selection
	got, err := s.selectRunner(context.Background(), []runner{a, b, c}, nil)
	if err != nil || got != b {
		t.Fatalf("got %v, %v; want b", got, err)
	}
	if a.probes.Load() != 1 || b.probes.Load() != 1 || c.probes.Load() != 0 {
		t.Fatalf("probes a=%d b=%d c=%d", a.probes.Load(), b.probes.Load(), c.probes.Load())
	}
}

func TestSelectAllFailNamesEveryReason(t *testing.T) {
	a := &fakeRunner{n: "namespaces", probeErr: errors.New("userns refused")}
	b := &fakeRunner{n: "landlock", readyErr: errors.New("no landlock")}
	var s selection
	_, err := s.selectRunner(context.Background(), []runner{a, b}, nil)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"namespaces: userns refused", "landlock: no landlock"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %q", err, want)
		}
	}
	if b.probes.Load() != 0 {
		t.Error("a runner that is not ready was probed")
	}
}

func TestSelectNoCandidates(t *testing.T) {
	var s selection
	if _, err := s.selectRunner(context.Background(), nil, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
}

func TestSelectCachedOnceUnderConcurrency(t *testing.T) {
	a := &fakeRunner{n: "a", probeErr: errors.New("no")}
	b := &fakeRunner{n: "b"}
	var s selection
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, err := s.selectRunner(context.Background(), []runner{a, b}, nil)
			if err == nil && r != b {
				err = errors.New("wrong runner " + r.name())
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("goroutine %d: %v", i, err)
		}
	}
	if a.probes.Load() != 1 || b.probes.Load() != 1 {
		t.Fatalf("probes a=%d b=%d, want 1 each", a.probes.Load(), b.probes.Load())
	}
}

func TestSelectFailureIsCachedToo(t *testing.T) {
	r := &fakeRunner{n: "only", readyErr: errors.New("no")}
	var s selection
	s.selectRunner(context.Background(), []runner{r}, nil)
	r.readyErr = nil
	if _, err := s.selectRunner(context.Background(), []runner{r}, nil); err == nil {
		t.Fatal("verdict was recomputed: a changed machine needs a new provider")
	}
	if r.readies.Load() != 1 {
		t.Fatalf("%d readies", r.readies.Load())
	}
}

func TestSelectCancelledProbeNotCached(t *testing.T) {
	a := &fakeRunner{n: "a", probeErr: context.Canceled}
	b := &fakeRunner{n: "b", probeErr: context.Canceled}
	var s selection
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.selectRunner(ctx, []runner{a, b}, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	a.probeErr, b.probeErr = nil, nil
	if r, err := s.selectRunner(context.Background(), []runner{a, b}, nil); err != nil || r != a {
		t.Fatalf("after a cancelled selection: %v, %v; want a fresh verdict", r, err)
	}
}

func TestCandidatesFromConfig(t *testing.T) {
	if _, err := candidates([]string{"no-such-runner"}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("unknown runner: %v", err)
	}
	all, err := candidates(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) > 0 {
		got, err := candidates([]string{all[0].name(), all[0].name()})
		if err != nil || len(got) != 2 {
			t.Fatalf("named candidates: %v %v", got, err)
		}
	}
}

func TestWrapEnvironment(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	p := &Provider{cands: []runner{&fakeRunner{n: "fake"}}, fsys: osFS{}}
	w, err := p.Wrap(context.Background(), Request{Argv: []string{"true"}, Env: []string{"A=1", "TMPDIR=/old", "B=2"},
		Policy: Policy{Mode: ReadOnly, Workspace: t.TempDir(), Caches: CachePolicy{Off: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Cleanup()
	want := []string{"A=1", "B=2", "TMPDIR=" + w.TempDir}
	if strings.Join(w.Env, ",") != strings.Join(want, ",") {
		t.Fatalf("Env %q, want %q", w.Env, want)
	}
	if strings.Join(w.LaunchEnv, ",") != "TMPDIR="+w.TempDir {
		t.Fatalf("LaunchEnv %q", w.LaunchEnv)
	}
}

// TestRunnerFailureSelectsAgain: a long-lived provider whose runner fails
// at launch (the machine changed under it) must not fail every later wrap
// on it: the next Wrap probes again and takes the next runner that passes.
// Only a runner failure drops the verdict, only the verdict the failed
// wrap ran on, and once.
func TestRunnerFailureSelectsAgain(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	rule := RunnerFailureRule{Kind: RuleExitAndLine, ExitCode: 125, FatalPrefix: "a-run: fatal: [t] "}
	failure := []byte("a-run: fatal: [t] mount a private /tmp: Invalid argument\n")
	cases := []struct {
		name     string
		classify func(first, second *Wrapped) // what happens after the first wrap
		breakA   bool                         // a's probe fails from then on
		want     string                       // the runner of the next wrap
		probesA  int32
	}{
		{"a runner failure, the runner no longer passes", func(w, _ *Wrapped) { w.Classify(125, failure) }, true, "b", 2},
		{"a runner failure, the runner passes again", func(w, _ *Wrapped) { w.Classify(125, failure) }, false, "a", 2},
		{"the command's own failure", func(w, _ *Wrapped) { w.Classify(125, []byte("a-run: something else\n")) }, true, "a", 1},
		{"a clean exit", func(w, _ *Wrapped) { w.Classify(0, nil) }, true, "a", 1},
		{"two failures of the same verdict probe once", func(w, v *Wrapped) { w.Classify(125, failure); v.Classify(125, failure) }, false, "a", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &fakeRunner{n: "a", rule: rule}
			b := &fakeRunner{n: "b", rule: rule}
			p := &Provider{cands: []runner{a, b}, fsys: osFS{}}
			wrap := func() *Wrapped {
				t.Helper()
				w, err := p.Wrap(context.Background(), Request{Argv: []string{"true"}, Policy: Policy{Mode: ReadOnly, Workspace: t.TempDir()}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { w.Cleanup() })
				return w
			}
			first, second := wrap(), wrap()
			if first.Runner != "a" || a.probes.Load() != 1 {
				t.Fatalf("first wrap: runner %s after %d probes of a; want a, 1", first.Runner, a.probes.Load())
			}
			if tc.breakA {
				a.probeErr = errors.New("the namespaces probe fails now")
			}
			tc.classify(first, second)
			if next := wrap(); next.Runner != tc.want || a.probes.Load() != tc.probesA {
				t.Errorf("next wrap: runner %s after %d probes of a; want %s, %d", next.Runner, a.probes.Load(), tc.want, tc.probesA)
			}
		})
	}
}
