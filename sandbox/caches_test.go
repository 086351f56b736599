//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// specRunner is a fake runner that keeps the spec it was given.
type specRunner struct {
	fakeRunner
	spec vocab.Spec
}

func (s *specRunner) prepare(_ context.Context, spec vocab.Spec) (launch, error) {
	s.spec = spec
	return launch{}, nil
}

func TestPlanCaches(t *testing.T) {
	ws := t.TempDir()
	home := "/home/u"
	key := workspaceKey(ws)
	cases := []struct {
		name    string
		pol     Policy
		env     []string
		wantDir string
		invalid string
	}{
		{"default", Policy{Mode: WorkspaceWrite}, []string{"HOME=" + home}, home + "/.cache/sandbox-local/caches/" + key, ""},
		{"XDG_CACHE_HOME", Policy{Mode: WorkspaceWrite}, []string{"HOME=" + home, "XDG_CACHE_HOME=/x/cache"}, "/x/cache/sandbox-local/caches/" + key, ""},
		{"relative XDG_CACHE_HOME is ignored", Policy{Mode: WorkspaceWrite}, []string{"HOME=" + home, "XDG_CACHE_HOME=cache"}, home + "/.cache/sandbox-local/caches/" + key, ""},
		{"no home: the temp dir", Policy{Mode: WorkspaceWrite}, nil, "", ""},
		{"read-only: the temp dir", Policy{Mode: ReadOnly}, []string{"HOME=" + home}, "", ""},
		{"given dir", Policy{Mode: WorkspaceWrite, Caches: CachePolicy{Dir: "/srv/c"}}, []string{"HOME=" + home}, "/srv/c", ""},
		{"off", Policy{Mode: WorkspaceWrite, Caches: CachePolicy{Off: true}}, []string{"HOME=" + home}, "", ""},
		{"dir with off", Policy{Mode: WorkspaceWrite, Caches: CachePolicy{Off: true, Dir: "/srv/c"}}, nil, "", "caches dir"},
		{"relative dir", Policy{Mode: WorkspaceWrite, Caches: CachePolicy{Dir: "c"}}, nil, "", "caches dir"},
		{"dir in read-only mode", Policy{Mode: ReadOnly, Caches: CachePolicy{Dir: "/srv/c"}}, nil, "", "read-only"},
		{"unknown tool", Policy{Mode: WorkspaceWrite, Caches: CachePolicy{Skip: []string{"maven"}}}, nil, "", `"maven"`},
	}
	for _, tc := range cases {
		tc.pol.Workspace = ws
		plan, err := planCaches(tc.pol, ws, tc.env)
		if tc.invalid != "" {
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidPolicy || !strings.Contains(err.Error(), tc.invalid) {
				t.Errorf("%s: err %v, want INVALID_POLICY naming %s", tc.name, err, tc.invalid)
			}
			continue
		}
		if err != nil || plan.dir != tc.wantDir {
			t.Errorf("%s: dir %q (%v), want %q", tc.name, plan.dir, err, tc.wantDir)
		}
	}
}

func TestCacheEnv(t *testing.T) {
	plan := &cachePlan{skip: map[string]bool{"cargo": true}, set: map[string]bool{"GOCACHE": true}, goProxy: "https://p.example,direct"}
	vars, uses := plan.cacheEnv("/c", "/u/go/pkg/mod/cache/download", "", "", nil)
	for _, want := range []string{"GOPATH=/c/go", "GOMODCACHE=/c/go/pkg/mod", "PIP_CACHE_DIR=/c/pip", "npm_config_cache=/c/npm",
		"XDG_CACHE_HOME=/c/xdg", "GOPROXY=file:///u/go/pkg/mod/cache/download,https://p.example,direct"} {
		if !slices.Contains(vars, want) {
			t.Errorf("vars %q lack %s", vars, want)
		}
	}
	for _, absent := range []string{"GOCACHE=", "CARGO_HOME="} {
		if slices.ContainsFunc(vars, func(v string) bool { return strings.HasPrefix(v, absent) }) {
			t.Errorf("vars %q hold %s (skipped, or the caller's Set)", vars, absent)
		}
	}
	if uses[0].Tool != "go" || !slices.Equal(uses[0].WarmFrom, []string{"/u/go/pkg/mod/cache/download"}) {
		t.Errorf("uses %+v", uses)
	}
	if v, _ := (&cachePlan{off: true}).cacheEnv("/c", "", "", "", nil); v != nil {
		t.Errorf("off: %q", v)
	}
	// The user's module cache through an overlay: GOMODCACHE is the
	// user's path, and no GOPROXY entry (its downloads are there).
	vars, uses = plan.cacheEnv("/c", "/u/go/pkg/mod/cache/download", "", "/u/go/pkg/mod", nil)
	if !slices.Contains(vars, "GOMODCACHE=/u/go/pkg/mod") || !slices.Contains(vars, "GOPATH=/c/go") ||
		slices.ContainsFunc(vars, func(v string) bool { return strings.HasPrefix(v, "GOPROXY=") }) {
		t.Errorf("overlay: vars %q", vars)
	}
	if uses[0].Overlay != "/u/go/pkg/mod" || !slices.Equal(uses[0].WarmFrom, []string{"/u/go/pkg/mod"}) {
		t.Errorf("overlay: uses %+v", uses[0])
	}
}

// TestCacheEnvReplacesAliases: the caller's variables a tool reads as one
// of the wrap's (npm's npm_config_* and yarn 1's yarn_* in any case) are
// named for dropping, only when the wrap sets that variable; another
// tool's, or a spelling the tool does not read as it, are not; one that
// Policy.Env.Set gives stands, and the wrap then sets no variable of its
// own for it.
func TestCacheEnvReplacesAliases(t *testing.T) {
	env := []string{"HOME=/h", "NPM_CONFIG_CACHE=/h/.npm", "Npm_Config_Cache=/h/.npm", "npm_config_cache=/h/.npm",
		"yarn_cache_folder=/h/y", "npm_config_cache_folder=/h/y", "YARN_GLOBAL_FOLDER=/h/g", "pip_cache_dir=/h/p", "npm_config_registry=https://r"}
	cases := []struct {
		name         string
		plan         *cachePlan
		tool         string
		wantReplaced []string
		variable     string // the tool's variable, and its value in the wrap's ("" unset)
		wantValue    string
	}{
		{"npm", &cachePlan{}, "npm", []string{"NPM_CONFIG_CACHE", "Npm_Config_Cache"}, "npm_config_cache", "/c/npm"},
		{"yarn", &cachePlan{}, "yarn", []string{"yarn_cache_folder", "npm_config_cache_folder"}, "YARN_CACHE_FOLDER", "/c/yarn/cache"},
		{"pip reads PIP_ only in capitals", &cachePlan{}, "pip", nil, "PIP_CACHE_DIR", "/c/pip"},
		{"npm skipped", &cachePlan{skip: map[string]bool{"npm": true}}, "npm", nil, "npm_config_cache", ""},
		{"an alias Env.Set gives stands", &cachePlan{set: map[string]bool{"NPM_CONFIG_CACHE": true}}, "npm", nil, "npm_config_cache", ""},
	}
	for _, tc := range cases {
		vars, uses := tc.plan.cacheEnv("/c", "", "", "", env)
		var got []string
		for _, u := range uses {
			if u.Tool == tc.tool {
				got = u.Replaced
			}
		}
		if !slices.Equal(got, tc.wantReplaced) {
			t.Errorf("%s: replaced %q, want %q", tc.name, got, tc.wantReplaced)
		}
		if v, _ := lookupEnv(vars, tc.variable); v != tc.wantValue {
			t.Errorf("%s: %s=%q in %q, want %q", tc.name, tc.variable, v, vars, tc.wantValue)
		}
	}
}

func TestGoCacheProg(t *testing.T) {
	for _, tc := range []struct{ self, user, want string }{
		{"/bin/x", "/h/.cache/go-build", "/bin/x sandbox-local-gocacheprog /h/.cache/go-build"},
		{"/b in/x", "/h/it's", `'/b in/x' sandbox-local-gocacheprog "/h/it's"`},
		{"/bin/x", `/h/'"`, ""},
	} {
		if got := goCacheProg(tc.self, tc.user); got != tc.want {
			t.Errorf("goCacheProg(%q, %q) = %q, want %q", tc.self, tc.user, got, tc.want)
		}
	}
}

func TestGoWarmSource(t *testing.T) {
	cfg := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "go"), 0o755)
	os.WriteFile(filepath.Join(cfg, "go", "env"), []byte("GOPROXY=https://corp.example\nGOMODCACHE=/m\n"), 0o644)
	cases := []struct {
		name             string
		env              []string
		wantDir, wantPrx string
	}{
		{"defaults", []string{"HOME=/h"}, "/h/go/pkg/mod/cache/download", defaultGoProxy},
		{"GOPATH list", []string{"HOME=/h", "GOPATH=/a:/b"}, "/a/pkg/mod/cache/download", defaultGoProxy},
		{"variables", []string{"HOME=/h", "GOMODCACHE=/mc", "GOPROXY=off"}, "/mc/cache/download", "off"},
		{"go env file", []string{"HOME=/h", "XDG_CONFIG_HOME=" + cfg}, "/m/cache/download", "https://corp.example"},
		{"a variable wins over the file", []string{"HOME=/h", "XDG_CONFIG_HOME=" + cfg, "GOPROXY=https://x"}, "/m/cache/download", "https://x"},
		{"a comma cannot be named", []string{"GOMODCACHE=/a,b"}, "", defaultGoProxy},
	}
	for _, tc := range cases {
		dir, proxy := goWarmSource(tc.env, readGoEnvFile(tc.env))
		if dir != tc.wantDir || proxy != tc.wantPrx {
			t.Errorf("%s: %q %q, want %q %q", tc.name, dir, proxy, tc.wantDir, tc.wantPrx)
		}
	}
}

// TestWrapCaches: the default cache dir is made private, per workspace,
// is a writable root, and its variables are in Env and the report; the
// user's module downloads are read only when the command cannot write
// them; a cache dir replaced by a symlink is never used.
func TestWrapCaches(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	home := t.TempDir()
	moddl := filepath.Join(home, "go", "pkg", "mod", "cache", "download")
	os.MkdirAll(moddl, 0o755)
	gocache := filepath.Join(home, ".cache", "go-build")
	os.MkdirAll(filepath.Join(gocache, "a0"), 0o755)
	r := &specRunner{fakeRunner: fakeRunner{n: "fake"}}
	p := &Provider{cands: []runner{r}, fsys: osFS{}}
	wrap := func(ws string, env []string, c CachePolicy) *Wrapped {
		t.Helper()
		w, err := p.Wrap(context.Background(), Request{Argv: []string{"true"}, Env: append([]string{"HOME=" + home}, env...),
			Policy: Policy{Mode: WorkspaceWrite, Workspace: ws, Caches: c}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Cleanup() })
		return w
	}
	ws1, ws2 := t.TempDir(), t.TempDir()
	if w := wrap(ws1, nil, CachePolicy{}); envValue(w.Env, "GOCACHEPROG") != "" {
		t.Errorf("GOCACHEPROG %q for an empty build cache", envValue(w.Env, "GOCACHEPROG"))
	}
	os.WriteFile(filepath.Join(gocache, "a0", "a0ff-a"), nil, 0o644)
	w1 := wrap(ws1, nil, CachePolicy{})
	root := filepath.Join(home, ".cache", "sandbox-local", "caches")
	if filepath.Dir(w1.CacheDir) != root || !slices.Contains(r.spec.Writable, w1.CacheDir) {
		t.Fatalf("cache dir %q, writable %q", w1.CacheDir, r.spec.Writable)
	}
	for _, d := range []string{filepath.Dir(root), root, w1.CacheDir} {
		if fi, err := os.Lstat(d); err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() {
			t.Errorf("%s: %v %v, want a 0700 directory", d, fi.Mode(), err)
		}
	}
	if envValue(w1.Env, "GOCACHE") != filepath.Join(w1.CacheDir, "go-build") || !slices.Contains(w1.LaunchEnv, "GOCACHE="+filepath.Join(w1.CacheDir, "go-build")) {
		t.Errorf("GOCACHE %q", envValue(w1.Env, "GOCACHE"))
	}
	if want := "file://" + moddl + "," + defaultGoProxy; envValue(w1.Env, "GOPROXY") != want || !slices.Contains(w1.Caches[0].WarmFrom, moddl) {
		t.Errorf("GOPROXY %q, want %q", envValue(w1.Env, "GOPROXY"), want)
	}
	if prog := envValue(w1.Env, "GOCACHEPROG"); !strings.HasSuffix(prog, " sandbox-local-gocacheprog "+gocache) || !slices.Contains(w1.Caches[0].WarmFrom, gocache) {
		t.Errorf("GOCACHEPROG %q", prog)
	}
	// Once a run found the workspace's cache complete, no program.
	os.MkdirAll(filepath.Join(w1.CacheDir, "go-build"), 0o755)
	os.WriteFile(filepath.Join(w1.CacheDir, "go-build", "sandbox-local-warm"), nil, 0o644)
	if w := wrap(ws1, nil, CachePolicy{}); envValue(w.Env, "GOCACHEPROG") != "" {
		t.Errorf("GOCACHEPROG %q with the warm marker", envValue(w.Env, "GOCACHEPROG"))
	}
	w2 := wrap(ws2, nil, CachePolicy{})
	if w2.CacheDir == w1.CacheDir || filepath.Dir(w2.CacheDir) != root {
		t.Errorf("second workspace's cache dir %q, first %q", w2.CacheDir, w1.CacheDir)
	}
	// The caller's inherited value names the user's cache: replaced. Set
	// is the caller's choice for the sandbox: kept.
	w, err := p.Wrap(context.Background(), Request{Argv: []string{"true"}, Env: []string{"HOME=" + home, "GOCACHE=/h/.cache/go-build", "PIP_CACHE_DIR=/h/pip"},
		Policy: Policy{Mode: WorkspaceWrite, Workspace: ws1, Env: EnvPolicy{Set: map[string]string{"PIP_CACHE_DIR": "/mine"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if envValue(w.Env, "GOCACHE") != filepath.Join(w1.CacheDir, "go-build") || envValue(w.Env, "PIP_CACHE_DIR") != "/mine" {
		t.Errorf("GOCACHE %q PIP_CACHE_DIR %q", envValue(w.Env, "GOCACHE"), envValue(w.Env, "PIP_CACHE_DIR"))
	}
	w.Cleanup()
	// The user's module cache inside a writable root is not read.
	w = wrap(home+"/go", nil, CachePolicy{})
	if envValue(w.Env, "GOPROXY") != "" {
		t.Errorf("GOPROXY %q with the user's module cache writable", envValue(w.Env, "GOPROXY"))
	}
	if w = wrap(ws1, nil, CachePolicy{NoWarm: true}); envValue(w.Env, "GOPROXY") != "" || envValue(w.Env, "GOCACHEPROG") != "" {
		t.Errorf("NoWarm: GOPROXY %q", envValue(w.Env, "GOPROXY"))
	}
	if w = wrap(ws1, []string{"GOCACHE=/mine"}, CachePolicy{Off: true}); envValue(w.Env, "GOCACHE") != "/mine" || w.CacheDir != "" {
		t.Errorf("off: GOCACHE %q, cache dir %q", envValue(w.Env, "GOCACHE"), w.CacheDir)
	}
	// A cache dir swapped for a symlink (to the user's own cache) is
	// refused: the caches go to the temp dir, and the report says why.
	victim := t.TempDir()
	os.Remove(w2.CacheDir)
	if err := os.Symlink(victim, w2.CacheDir); err != nil {
		t.Fatal(err)
	}
	w = wrap(ws2, nil, CachePolicy{})
	if !strings.HasPrefix(w.CacheDir, w.TempDir) || w.CacheNote == "" || slices.Contains(r.spec.Writable, victim) {
		t.Errorf("planted link: cache dir %q note %q writable %q", w.CacheDir, w.CacheNote, r.spec.Writable)
	}
	// A given dir that would void the sandbox is refused.
	if _, err := p.Wrap(context.Background(), Request{Argv: []string{"true"}, Env: []string{"HOME=" + home},
		Policy: Policy{Mode: WorkspaceWrite, Workspace: ws1, Caches: CachePolicy{Dir: "/"}}}); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("caches dir /: %v, want INVALID_POLICY", err)
	}
	// A given dir is made and granted.
	given := filepath.Join(t.TempDir(), "c")
	if w = wrap(ws1, nil, CachePolicy{Dir: given}); w.CacheDir != given || !slices.Contains(r.spec.Writable, given) {
		t.Errorf("given: cache dir %q writable %q", w.CacheDir, r.spec.Writable)
	}
}

// TestPruneCaches: prune removes the caches of gone workspaces, with
// their read-only directories, and follows no link out of them.
func TestPruneCaches(t *testing.T) {
	root := filepath.Join(t.TempDir(), "caches")
	keep, gone := t.TempDir(), filepath.Join(t.TempDir(), "gone")
	outside := filepath.Join(t.TempDir(), "outside")
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(outside, "x")
	for _, ws := range []string{keep, gone} {
		d := filepath.Join(root, workspaceKey(ws))
		write(filepath.Join(d, "go", "pkg", "mod", "m@v1", "f.go"), "package m")
		os.Chmod(filepath.Join(d, "go", "pkg", "mod", "m@v1"), 0o555)
		os.Symlink(outside, filepath.Join(d, "link"))
		writeCacheMeta(d+".json", cacheMeta{Workspace: ws, LastUsed: time.Now()})
		// The module cache overlay's layers: counted and pruned with the
		// cache dir, never listed as one of their own.
		write(filepath.Join(d+overlaySuffix, "upper", "m@v2", "g.go"), "package m2")
		os.Chmod(filepath.Join(d+overlaySuffix, "upper", "m@v2"), 0o555)
		os.MkdirAll(filepath.Join(d+overlaySuffix, "work", "work"), 0o000)
	}
	list, err := ListCaches(root)
	if err != nil || len(list) != 2 || list[0].Size != int64(len("package m")+len("package m2")) {
		t.Fatalf("list %+v %v", list, err)
	}
	pruned, err := PruneCaches(root, time.Hour)
	if err != nil || len(pruned) != 1 || pruned[0].Workspace != gone {
		t.Fatalf("pruned %+v %v", pruned, err)
	}
	if _, err := os.Stat(filepath.Join(root, workspaceKey(keep))); err != nil {
		t.Errorf("kept cache: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, workspaceKey(gone)+overlaySuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the pruned cache's overlay layers: %v, want them removed", err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a link's target was removed: %v", err)
	}
	if pruned, err = PruneCaches(root, 0); err != nil || len(pruned) != 1 {
		t.Errorf("prune all: %+v %v", pruned, err)
	}
}

// overlayRunner is a specRunner whose launcher mounts overlays.
type overlayRunner struct{ specRunner }

func (*overlayRunner) traits() traits { return traits{overlays: true} }

// TestWrapModCacheOverlay: a runner that mounts shows the user's module
// cache at its own path (GOMODCACHE the user's, no GOPROXY entry, the
// overlay's private dirs made beside the cache dir), and only where the
// overlay hides nothing the policy placed and the module cache is not
// the command's to write; a runner that does not mount, a given cache
// dir, Env.Set of GOMODCACHE and NoWarm keep the workspace's own module
// cache.
func TestWrapModCacheOverlay(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	home := t.TempDir()
	mod := filepath.Join(home, "go", "pkg", "mod")
	os.MkdirAll(filepath.Join(mod, "cache", "download"), 0o755)
	os.MkdirAll(filepath.Join(mod, "inside"), 0o755)
	cases := []struct {
		name    string
		mounts  bool
		ws      string
		change  func(*Policy)
		overlay bool
	}{
		{"a runner that mounts", true, "", nil, true},
		{"a runner that does not", false, "", nil, false},
		{"a writable root inside the module cache", true, "", func(p *Policy) { p.WritableRoots = []string{filepath.Join(mod, "inside")} }, false},
		{"a deny-read path inside it", true, "", func(p *Policy) { p.DenyRead = []string{filepath.Join(mod, "inside")} }, false},
		{"the module cache inside the workspace", true, home, nil, false},
		{"a given cache dir", true, "", func(p *Policy) { p.Caches.Dir = filepath.Join(t.TempDir(), "c") }, false},
		{"GOMODCACHE set", true, "", func(p *Policy) { p.Env.Set = map[string]string{"GOMODCACHE": "/m"} }, false},
		{"no warming", true, "", func(p *Policy) { p.Caches.NoWarm = true }, false},
	}
	for _, tc := range cases {
		var r runner = &specRunner{fakeRunner: fakeRunner{n: "fake"}}
		if tc.mounts {
			r = &overlayRunner{specRunner{fakeRunner: fakeRunner{n: "fake"}}}
		}
		ws := tc.ws
		if ws == "" {
			ws = t.TempDir()
		}
		pol := Policy{Mode: WorkspaceWrite, Workspace: ws}
		if tc.change != nil {
			tc.change(&pol)
		}
		p := &Provider{cands: []runner{r}, fsys: osFS{}}
		w, err := p.Wrap(context.Background(), Request{Argv: []string{"true"}, Env: []string{"HOME=" + home}, Policy: pol})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		w.Cleanup()
		var spec vocab.Spec
		switch r := r.(type) {
		case *overlayRunner:
			spec = r.spec
		case *specRunner:
			spec = r.spec
		}
		got := spec.Overlay != ""
		if got != tc.overlay {
			t.Errorf("%s: overlay %q, want one: %v", tc.name, spec.Overlay, tc.overlay)
			continue
		}
		if !got {
			if envValue(w.Env, "GOMODCACHE") == mod {
				t.Errorf("%s: GOMODCACHE is the user's without an overlay", tc.name)
			}
			continue
		}
		if spec.Overlay != mod || spec.OverlayDir != w.CacheDir+overlaySuffix || envValue(w.Env, "GOMODCACHE") != mod ||
			envValue(w.Env, "GOPROXY") != "" || w.Caches[0].Overlay != mod {
			t.Errorf("%s: spec %q %q, GOMODCACHE %q, GOPROXY %q, report %+v", tc.name, spec.Overlay, spec.OverlayDir,
				envValue(w.Env, "GOMODCACHE"), envValue(w.Env, "GOPROXY"), w.Caches[0])
		}
		for _, d := range []string{spec.OverlayDir, filepath.Join(spec.OverlayDir, "upper"), filepath.Join(spec.OverlayDir, "work")} {
			if fi, err := os.Lstat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: %s: %v, want a private directory", tc.name, d, err)
			}
		}
	}
}
