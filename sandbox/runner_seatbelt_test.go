package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// macFS pretends every path is an existing directory, as a Mac's file
// system would show the test's paths; no symlinks.
type macFS struct{}

type dirInfo string

func (d dirInfo) Name() string                    { return string(d) }
func (dirInfo) Size() int64                       { return 0 }
func (dirInfo) Mode() fs.FileMode                 { return fs.ModeDir | 0o755 }
func (dirInfo) ModTime() time.Time                { return time.Time{} }
func (dirInfo) IsDir() bool                       { return true }
func (dirInfo) Sys() any                          { return nil }
func (macFS) Lstat(n string) (fs.FileInfo, error) { return dirInfo(n), nil }
func (macFS) Readlink(string) (string, error)     { return "", fs.ErrInvalid }
func (macFS) ReadDirNames(string) ([]string, error) {
	return nil, fs.ErrNotExist
}

// fakeLocator finds sandbox-exec, or not.
type fakeLocator struct{ present bool }

type exeInfo struct{ dirInfo }

func (exeInfo) Mode() fs.FileMode { return 0o755 }
func (exeInfo) IsDir() bool       { return false }

func (l fakeLocator) Stat(n string) (fs.FileInfo, error) {
	if !l.present {
		return nil, fs.ErrNotExist
	}
	return exeInfo{dirInfo(n)}, nil
}

// fakeSelf is the provider's own binary, as launcherPath would find it.
func fakeSelf() (string, error) { return "/Applications/Agent.app/Contents/MacOS/agent", nil }

func seatbeltProvider(present bool) *Provider {
	return &Provider{cands: []runner{seatbeltRunner{loc: fakeLocator{present}, fsys: macFS{}, exe: fakeSelf}}, fsys: osFS{}}
}

func TestSeatbeltWrap(t *testing.T) {
	ws := t.TempDir()
	p := seatbeltProvider(true)
	w, err := p.Wrap(context.Background(), Request{Argv: []string{"make", "test"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: ws, DenyRead: []string{"/Users/u/.ssh"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Cleanup()
	if w.Path != "/usr/bin/sandbox-exec" || w.Runner != "seatbelt" {
		t.Fatalf("path %q runner %q", w.Path, w.Runner)
	}
	if len(w.Args) < 6 || w.Args[0] != "sandbox-exec" || w.Args[1] != "-p" {
		t.Fatalf("args %q", w.Args)
	}
	tail := w.Args[len(w.Args)-6:]
	if strings.Join(tail, " ") != "-- /Applications/Agent.app/Contents/MacOS/agent seatbelt-run -- make test" {
		t.Fatalf("args end %q, want -- SELF seatbelt-run -- make test", tail)
	}
	profile := w.Args[2]
	if strings.Contains(profile, ws) || strings.Contains(profile, ".ssh") {
		t.Fatal("a path was spliced into the profile text")
	}
	var sawWS, sawDeny bool
	for i, a := range w.Args[3 : len(w.Args)-6] {
		if i%2 == 0 && a != "-D" {
			t.Fatalf("parameter list %q is not -D pairs", w.Args[3:len(w.Args)-6])
		}
		sawWS = sawWS || strings.HasSuffix(a, "="+ws) || strings.HasSuffix(a, "=/private"+ws)
		sawDeny = sawDeny || strings.HasSuffix(a, "=/Users/u/.ssh")
	}
	if !sawWS || !sawDeny {
		t.Errorf("workspace (%v) or deny-read (%v) not passed as -D", sawWS, sawDeny)
	}
	if w.Enforcement != Partial || len(w.Gaps) == 0 {
		t.Errorf("enforcement %q gaps %v: seatbelt is always partial", w.Enforcement, w.Gaps)
	}
	if w.RunnerFailure.Kind != RuleSignature || w.RunnerFailure.ExitCode != 0 || w.RunnerFailure.AppliedEnv != "SANDBOX_LOCAL_APPLIED_FD" {
		t.Errorf("runner failure rule %+v, want signature-only", w.RunnerFailure)
	}
	if o := w.Classify(125, []byte("oops\n")); o.Kind != OutcomeChild {
		t.Errorf("a child's exit 125 under seatbelt classified %+v", o)
	}
	if o := w.Classify(1, []byte("sandbox-exec: invalid profile\n")); o.Kind != OutcomeRunnerFailure {
		t.Errorf("sandbox-exec failure classified %+v", o)
	}
	if o := w.Classify(127, []byte("seatbelt-run: execvp() of 'make' failed: no such file or directory\n")); o.Kind != OutcomeChild {
		t.Errorf("command not found classified %+v", o)
	}
	if o := w.Classify(1, []byte("cp: x: Operation not permitted\n")); o.Kind != OutcomeDenied {
		t.Errorf("EPERM classified %+v", o)
	}
}

// TestSeatbeltCacheVars: the compilers' module caches are pointed below the
// wrap's temp dir (the profile keeps the shared per-user cache closed), in
// LaunchEnv and Env, unless the caller's environment sets one itself.
func TestSeatbeltCacheVars(t *testing.T) {
	p := seatbeltProvider(true)
	w, err := p.Wrap(context.Background(), Request{Argv: []string{"swift", "build"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: t.TempDir(),
		Env: EnvPolicy{Set: map[string]string{"SWIFTPM_MODULECACHE_OVERRIDE": "/Users/u/ws/.build/mc"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Cleanup()
	want := "CLANG_MODULE_CACHE_PATH=" + filepath.Join(w.TempDir, "clang-module-cache")
	if !slices.Contains(w.LaunchEnv, want) || !slices.Contains(w.Env, want) {
		t.Errorf("want %s in LaunchEnv %q and Env", want, w.LaunchEnv)
	}
	for _, kv := range w.LaunchEnv {
		if strings.HasPrefix(kv, "SWIFTPM_MODULECACHE_OVERRIDE=") {
			t.Errorf("the caller's SWIFTPM_MODULECACHE_OVERRIDE was overridden: %s", kv)
		}
	}
	if !slices.Contains(w.Env, "SWIFTPM_MODULECACHE_OVERRIDE=/Users/u/ws/.build/mc") {
		t.Errorf("the caller's SWIFTPM_MODULECACHE_OVERRIDE is lost")
	}
	w2, err := p.Wrap(context.Background(), Request{Argv: []string{"swift", "build"}, Policy: Policy{Mode: ReadOnly, Workspace: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Cleanup()
	if !slices.Contains(w2.LaunchEnv, "SWIFTPM_MODULECACHE_OVERRIDE="+filepath.Join(w2.TempDir, "swiftpm-module-cache")) {
		t.Errorf("LaunchEnv %q lacks SwiftPM's module cache", w2.LaunchEnv)
	}
}

func TestSeatbeltMissingIsUnavailable(t *testing.T) {
	_, err := seatbeltProvider(false).Wrap(context.Background(), Request{Argv: []string{"true"}, Policy: Policy{Mode: ReadOnly, Workspace: t.TempDir()}})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "sandbox-exec") {
		t.Fatalf("err = %v, want SANDBOX_UNAVAILABLE naming sandbox-exec", err)
	}
}

func TestSeatbeltRequireFullRefused(t *testing.T) {
	_, err := seatbeltProvider(true).Wrap(context.Background(), Request{Argv: []string{"true"}, Policy: Policy{Mode: ReadOnly, Workspace: t.TempDir(), RequireFull: true}})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v: seatbelt enforcement is partial, RequireFull must refuse", err)
	}
}

// TestSeatbeltProxied: the proxied network under Seatbelt allows TCP
// connects to the proxy's port and the allowed local ports on localhost
// only, and reports the trust services it opens for TLS.
func TestSeatbeltProxied(t *testing.T) {
	p := seatbeltProvider(true)
	w, err := p.Wrap(context.Background(), Request{Argv: []string{"npm", "install"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: t.TempDir(),
		Network: NetworkProxied, AllowDomains: []string{"registry.npmjs.org"}, AllowLocalPorts: []int{5432}}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Cleanup()
	port := strings.TrimPrefix(w.Proxy, "http://127.0.0.1:")
	profile := w.Args[2]
	for _, want := range []string{`(remote tcp "localhost:` + port + `")`, `(remote tcp "localhost:5432")`, `"com.apple.trustd"`} {
		if !strings.Contains(profile, want) {
			t.Errorf("the profile lacks %s", want)
		}
	}
	if strings.Contains(profile, `(remote ip "*:*")`) || strings.Contains(profile, "MDNS_SOCKET") {
		t.Error("the proxied profile opens the network or DNS")
	}
	trustGap := false
	for _, g := range w.Gaps {
		trustGap = trustGap || strings.Contains(g.Reason, "trustd")
	}
	if !trustGap || w.Network != NetworkProxied {
		t.Errorf("network %q, gaps %v", w.Network, w.Gaps)
	}
	if !strings.Contains(strings.Join(w.LaunchEnv, " "), "HTTPS_PROXY=http://127.0.0.1:"+port) {
		t.Errorf("launch env %v", w.LaunchEnv)
	}
}

// TestSeatbeltAppliedReport runs real processes in place of sandbox-exec
// and the seatbelt-run step, with a seatbelt wrap's rule: Command passes
// the report pipe as fd 3 named by AppliedEnv, and a "sandbox-exec:" first
// line is a runner failure only when nothing wrote the marker there. The
// step writes it (TestSeatbeltStepReportsThenExecs); here a shell does.
func TestSeatbeltAppliedReport(t *testing.T) {
	p := seatbeltProvider(true)
	w, err := p.Wrap(context.Background(), Request{Argv: []string{"true"}, Env: []string{"PATH=/usr/bin:/bin", "SANDBOX_LOCAL_APPLIED_FD=7"},
		Policy: Policy{Mode: ReadOnly, Workspace: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Cleanup()
	for _, kv := range w.Env {
		if strings.HasPrefix(kv, "SANDBOX_LOCAL_APPLIED_FD=") {
			t.Errorf("the caller's %s reached the wrap's Env", kv)
		}
	}
	run := func(script string) Outcome {
		t.Helper()
		w.Path, w.Args = "/bin/sh", []string{"sh", "-c", script}
		cmd := w.Command(context.Background())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		code := 0
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		return w.Classify(code, []byte(stderr.String()))
	}
	// The command ran after the report and forged sandbox-exec's line.
	forged := `[ "$SANDBOX_LOCAL_APPLIED_FD" = 3 ] && printf 'applied\n' >&3 && exec 3>&- && echo 'sandbox-exec: invalid data type of path filter' >&2; exit 71`
	if o := run(forged); o.Kind != OutcomeChild || o.ExitCode != 71 {
		t.Errorf("forged line after the report classified %+v", o)
	}
	// Positive control: no report, the same line is sandbox-exec's failure.
	if o := run(`echo 'sandbox-exec: invalid data type of path filter' >&2; exit 71`); o.Kind != OutcomeRunnerFailure {
		t.Errorf("sandbox-exec's failure without a report classified %+v", o)
	}
	// The report is read from the last Command: after the unreported run,
	// a reported one is the command's again.
	if o := run(forged); o.Kind != OutcomeChild {
		t.Errorf("forged line, second run: %+v", o)
	}
	if err := w.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if o := w.Classify(71, []byte("sandbox-exec: x\n")); o.Kind != OutcomeChild {
		t.Errorf("after Cleanup the last report is forgotten: %+v", o)
	}
}

// TestSeatbeltLocalPortsUnderDeny: under network deny, an allowed local
// port is the only IP destination the profile opens (localhost only), and
// the trust services stay closed: there is no proxy to verify TLS through.
func TestSeatbeltLocalPortsUnderDeny(t *testing.T) {
	p := seatbeltProvider(true)
	w, err := p.Wrap(context.Background(), Request{Argv: []string{"psql"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: t.TempDir(),
		AllowLocalPorts: []int{5432}}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Cleanup()
	profile := w.Args[2]
	if !strings.Contains(profile, `(remote tcp "localhost:5432")`) || strings.Count(profile, `(remote tcp "localhost:`) != 1 {
		t.Errorf("the profile does not open exactly localhost:5432")
	}
	if strings.Contains(profile, `"com.apple.trustd"`) || strings.Contains(profile, `(remote ip "*:*")`) || w.Proxy != "" {
		t.Errorf("network deny with a local port opened more: proxy %q", w.Proxy)
	}
	ctl, err := p.Wrap(context.Background(), Request{Argv: []string{"psql"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Cleanup()
	if strings.Contains(ctl.Args[2], `(remote tcp "localhost:`) {
		t.Error("control: network deny without local ports opens a port")
	}
}

// TestSeatbeltKeepsItsTempDirOpen: the Linux runners deny the parent of
// the temp dirs, but a Seatbelt deny of it would come after every allow
// and close the wrap's own temp dir: the profile names no such path.
func TestSeatbeltKeepsItsTempDirOpen(t *testing.T) {
	p := seatbeltProvider(true)
	w, err := p.Wrap(context.Background(), Request{Argv: []string{"true"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Cleanup()
	parent := "/" + filepath.Base(filepath.Dir(w.TempDir)) // sandbox-local-UID, however canonicalised
	for _, a := range w.Args {
		if strings.HasPrefix(a, "DENY") && strings.HasSuffix(a, parent) {
			t.Errorf("the profile denies the temp dirs' parent: %s", a)
		}
	}
}
