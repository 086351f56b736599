//go:build unix

package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// verdictPath points the per-user temp parent at a fresh TMPDIR and
// returns where the verdict lives.
func verdictPath(t *testing.T) string {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	parent, err := tempParent()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(parent, verdictFile)
}

func TestVerdictCache(t *testing.T) {
	p := verdictPath(t)
	if cachedVerdict("namespaces") {
		t.Fatal("an empty cache gave a verdict")
	}
	rememberVerdict("namespaces")
	if !cachedVerdict("namespaces") {
		t.Fatal("the remembered verdict is not read back")
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("verdict file %v %v, want mode 0600", fi, err)
	}
	edit := func(f func(*verdictEntry)) {
		b, _ := os.ReadFile(p)
		var e verdictEntry
		json.Unmarshal(b, &e)
		f(&e)
		b, _ = json.Marshal(e)
		os.WriteFile(p, b, 0o600)
	}
	for name, f := range map[string]func(*verdictEntry){
		"another binary, boot or userns setting": func(e *verdictEntry) { e.Key += "x" },
		"older than the TTL":                     func(e *verdictEntry) { e.Time = time.Now().Add(-2 * verdictTTL) },
		"from the future":                        func(e *verdictEntry) { e.Time = time.Now().Add(time.Hour) },
		"another runner":                         func(e *verdictEntry) { e.Runner = "landlock" },
	} {
		rememberVerdict("namespaces")
		edit(f)
		if cachedVerdict("namespaces") {
			t.Errorf("%s: still a verdict", name)
		}
	}
	// A symlink to a valid entry is not followed.
	rememberVerdict("namespaces")
	elsewhere := filepath.Join(t.TempDir(), "v")
	os.Rename(p, elsewhere)
	os.Symlink(elsewhere, p)
	if cachedVerdict("namespaces") {
		t.Error("a verdict read through a symlink")
	}
	forgetVerdict()
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Errorf("forget left %v", err)
	}
	if _, err := os.Stat(elsewhere); err != nil {
		t.Errorf("forget followed the link: %v", err)
	}
}

// TestVerdictCacheSelection: the cache skips only the preferred runner's
// probe, a probe that passes is remembered, and a runner failure of a wrap
// selected from the cache drops the verdict.
func TestVerdictCacheSelection(t *testing.T) {
	verdictPath(t)
	a, b := &fakeRunner{n: "a"}, &fakeRunner{n: "b"}
	s := selection{cache: true}
	if got, err := s.selectRunner(context.Background(), []runner{a, b}, nil); err != nil || got != a || a.probes.Load() != 1 || s.cachedChoice() {
		t.Fatalf("first selection: %v %v, %d probes, from cache %v", got, err, a.probes.Load(), s.cachedChoice())
	}
	s2 := selection{cache: true}
	if got, err := s2.selectRunner(context.Background(), []runner{a, b}, nil); err != nil || got != a || a.probes.Load() != 1 || !s2.cachedChoice() {
		t.Fatalf("cached selection: %v %v, %d probes, from cache %v", got, err, a.probes.Load(), s2.cachedChoice())
	}
	// A verdict for "a" never selects b first, whatever the order.
	s3 := selection{cache: true}
	if got, _ := s3.selectRunner(context.Background(), []runner{b, a}, nil); got != b || s3.cachedChoice() {
		t.Errorf("verdict for a with b preferred: got %v, from cache %v", got, s3.cachedChoice())
	}
	// A cached runner that is no longer ready is probed like any other.
	rememberVerdict("a")
	a.readyErr = errUnready
	s4 := selection{cache: true}
	if got, _ := s4.selectRunner(context.Background(), []runner{a, b}, nil); got != b || s4.cachedChoice() {
		t.Errorf("unready cached runner: got %v, from cache %v", got, s4.cachedChoice())
	}
	a.readyErr = nil
	rememberVerdict("a")
	w := &Wrapped{fromCache: true, RunnerFailure: RunnerFailureRule{Kind: RuleExitAndLine, ExitCode: 125, FatalPrefix: "ns-run: fatal: [t] "}}
	if o := w.Classify(0, nil); o.Kind != OutcomeChild || !cachedVerdict("a") {
		t.Fatalf("a command's own result dropped the verdict: %+v", o)
	}
	if o := w.Classify(125, []byte("ns-run: fatal: [t] unshare: EPERM\n")); o.Kind != OutcomeRunnerFailure || cachedVerdict("a") {
		t.Errorf("runner failure of a cached selection: %+v, verdict still there: %v", o, cachedVerdict("a"))
	}
}

var errUnready = os.ErrPermission
