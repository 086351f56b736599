//go:build linux

package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
	"golang.org/x/sys/unix"
)

// userGoWorld is a user's machine: a home directory whose Go module cache
// holds sbxModule and whose build cache holds the workspace's build (both
// made unconfined, by the user's own go), and a workspace whose module
// needs sbxModule and that the sandbox has not built.
type userGoWorld struct {
	home, modcache, gocache, ws string
	env                         []string // the caller's: HOME, PATH, no Go variable
}

func newUserGoWorld(t *testing.T, s *sbx) *userGoWorld {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	u := &userGoWorld{home: filepath.Join(s.base, "home"), ws: s.ws}
	u.modcache = filepath.Join(u.home, "go", "pkg", "mod")
	u.gocache = filepath.Join(u.home, ".cache", "go-build")
	write(t, filepath.Join(u.gocache, "README"), "the user's own build cache\n")
	removableAtCleanup(t, s.base)
	// A file proxy holding sbxModule, for the user's own download.
	nw := &netWorld{}
	nw.goProxyHandler(t)
	vdir := filepath.Join(s.base, "proxy", sbxModule, "@v")
	write(t, filepath.Join(vdir, "list"), sbxModVer+"\n")
	write(t, filepath.Join(vdir, sbxModVer+".info"), fmt.Sprintf(`{"Version":%q,"Time":"2026-01-01T00:00:00Z"}`, sbxModVer))
	write(t, filepath.Join(vdir, sbxModVer+".mod"), moduleFiles["go.mod"])
	write(t, filepath.Join(vdir, sbxModVer+".zip"), string(nw.ModZip))
	u.env = []string{"HOME=" + u.home, "PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin", "GOTOOLCHAIN=local", "GOFLAGS=", "CGO_ENABLED=0"}
	dl := exec.Command(goBin, "mod", "download", sbxModule+"@"+sbxModVer)
	dl.Dir = u.home
	dl.Env = append(append([]string{}, u.env...), "GOPROXY=file://"+filepath.Join(s.base, "proxy"), "GOSUMDB=off", "TMPDIR="+t.TempDir())
	if out, err := dl.CombinedOutput(); err != nil {
		t.Fatalf("the user's own go mod download: %v\n%s", err, out)
	}
	write(t, filepath.Join(u.ws, "go.mod"), "module example.com/app\n\ngo 1.22\n\nrequire "+sbxModule+" "+sbxModVer+"\n")
	write(t, filepath.Join(u.ws, "go.sum"), sbxModule+" "+sbxModVer+" "+nw.ModSum+"\n"+sbxModule+" "+sbxModVer+"/go.mod "+nw.ModGoModSum+"\n")
	write(t, filepath.Join(u.ws, "main.go"), "package main\n\nimport \""+sbxModule+"\"\n\nfunc main() { println(hello.Hello()) }\n")
	build := exec.Command(goBin, "build", "-o", os.DevNull, ".")
	build.Dir = u.ws
	build.Env = append(append([]string{}, u.env...), "GOPROXY=off", "TMPDIR="+t.TempDir())
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the user's own go build: %v\n%s", err, out)
	}
	return u
}

// copyWorkspace copies the Go files of ws to dir, a new workspace.
func copyWorkspace(t *testing.T, ws, dir string) string {
	t.Helper()
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(ws, f))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, f), string(b))
	}
	return dir
}

// removableAtCleanup makes the directories below dir writable before the
// cleanups registered earlier (t.TempDir's, newSbx's) remove it: a Go
// module cache there is read-only.
func removableAtCleanup(t *testing.T, dir string) {
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
}

// run runs argv under pol with the world's environment.
func (u *userGoWorld) run(s *sbx, pol sandbox.Policy, argv ...string) ran {
	s.t.Helper()
	w, err := s.p.Wrap(context.Background(), sandbox.Request{Argv: argv, Env: u.env, Policy: pol})
	if err != nil {
		s.t.Fatalf("Wrap(%q): %v", argv, err)
	}
	s.t.Cleanup(func() { w.Cleanup() })
	return s.spawn(w, nil)
}

// hashTree hashes every name, mode, link target and file content below
// dir: a tree changed in any way hashes differently.
func hashTree(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v\n", strings.TrimPrefix(p, dir), fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			fmt.Fprintf(h, "-> %s\n", l)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestGoBuildUnderTheDefaults: the sandbox's first `go mod download` and
// `go build` in a workspace work under the default policy, network
// denied: the build cache is the workspace's own (the report and `go env`
// name it) and the compiled packages come from the user's build cache
// (GOCACHEPROG): runtime is not compiled again. The module cache: under
// landlock the workspace's own, the module read from the user's module
// cache as a file proxy and extracted again; under namespaces the user's
// own path, an overlay whose writes go to the workspace's upper layer, so
// the module is neither downloaded nor extracted again and its package,
// whose action ID holds its directory, is not compiled again either. The pairs: without
// GOCACHEPROG the same build compiles runtime; with Caches.Off it fails on
// the user's read-only cache, as before; with Caches.NoWarm it fails to
// download the module. The user's caches hash the same after every run.
func TestGoBuildUnderTheDefaults(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		u := newUserGoWorld(t, s)
		before := hashTree(t, u.gocache) + hashTree(t, u.modcache)
		script := `go mod download && go build -x -o "$TMPDIR/app" . 2>"$TMPDIR/x" || { cat "$TMPDIR/x" >&2; exit 1; }; ` +
			`"$TMPDIR/app" 2>&1 && go env GOCACHE GOMODCACHE && { grep -c -e "-p runtime " "$TMPDIR/x"; true; } && ` +
			`{ grep -c -e "-p ` + sbxModule + ` " "$TMPDIR/x"; true; }`
		r := u.run(s, s.policy(), "/bin/sh", "-c", script)
		w := r.w
		root := filepath.Join(u.home, ".cache", "sandbox-local", "caches")
		modcache, warm, overlay := filepath.Join(w.CacheDir, "go", "pkg", "mod"), filepath.Join(u.modcache, "cache", "download"), ""
		ovl := overlayExpected(t, s, u.home)
		if ovl {
			modcache, warm, overlay = u.modcache, u.modcache, u.modcache
		}
		want := strings.Join([]string{"hello from the sbx module", filepath.Join(w.CacheDir, "go-build"), modcache, "0"}, "\n")
		got := strings.TrimSpace(r.stdout)
		if ovl {
			want += "\n0" // the module's package was not compiled again
		} else {
			got = strings.TrimSpace(got[:strings.LastIndexByte(got, '\n')])
		}
		if r.code != 0 || got != want || filepath.Dir(w.CacheDir) != root {
			t.Fatalf("go build under the defaults: exit %d stdout %q stderr %.800q cache dir %q; want %q", r.code, r.stdout, r.stderr, w.CacheDir, want)
		}
		if len(w.Caches) == 0 || w.Caches[0].Tool != "go" || strings.Join(w.Caches[0].WarmFrom, ",") != warm+","+u.gocache || w.Caches[0].Overlay != overlay {
			t.Errorf("report's caches %+v", w.Caches)
		}
		if ovl {
			// Nothing was extracted or downloaded into the upper layer:
			// the module was the user's, read in place.
			upper := w.CacheDir + ".gomod/upper"
			if ents, err := os.ReadDir(filepath.Join(upper, filepath.Dir(sbxModule))); err == nil && len(ents) > 0 {
				t.Errorf("the module was extracted again into the overlay's upper layer: %v", ents)
			}
		}
		noprog := s.policy()
		noprog.Env.Set = map[string]string{"GOCACHEPROG": ""}
		noprog.Workspace = copyWorkspace(t, u.ws, filepath.Join(s.base, "ws-noprog"))
		// The line before the last: runtime's compiles.
		if r = u.run(s, noprog, "/bin/sh", "-c", script); r.code != 0 || lastLine(strings.TrimSpace(r.stdout)[:strings.LastIndexByte(strings.TrimSpace(r.stdout), '\n')]) == "0" {
			t.Errorf("without GOCACHEPROG: exit %d stdout %q stderr %.600q, want runtime compiled", r.code, r.stdout, r.stderr)
		}
		if ents, err := os.ReadDir(filepath.Join(w.CacheDir, "go", "pkg", "mod", "cache", "download", sbxModule, "@v")); !ovl && (err != nil || len(ents) == 0) {
			t.Errorf("the module did not land in the sandbox's module cache: %v", err)
		}
		off := s.policy()
		off.Caches.Off = true
		r = u.run(s, off, "/bin/sh", "-c", script)
		if r.code == 0 || !strings.Contains(strings.ToLower(r.stderr), map[bool]string{true: "read-only file system", false: "permission denied"}[s.runner == "namespaces"]) {
			t.Errorf("Caches.Off: exit %d stderr %.600q, want the user's cache refused", r.code, r.stderr)
		}
		cold := s.policy()
		cold.Caches.NoWarm = true
		cold.Workspace = copyWorkspace(t, u.ws, filepath.Join(s.base, "ws-cold"))
		r = u.run(s, cold, "/bin/sh", "-c", script)
		if r.code == 0 || !strings.Contains(r.stderr, sbxModule) {
			t.Errorf("Caches.NoWarm under network deny: exit %d stderr %.600q, want the download of %s failed", r.code, r.stderr, sbxModule)
		}
		if after := hashTree(t, u.gocache) + hashTree(t, u.modcache); after != before {
			t.Errorf("the user's caches changed")
		}
	})
}

// TestUserCachesStayReadOnly: with the sandbox's caches in place, a
// command that writes the user's own build cache or module cache is
// refused (under namespaces, its writes at the module cache's path land
// in the workspace's overlay layer instead) and they hash the same
// after; it writes its own cache dir (the positive control). A second workspace's command cannot write the
// first's cache dir (its own it can): one workspace cannot poison
// another's builds.
func TestUserCachesStayReadOnly(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		u := newUserGoWorld(t, s)
		before := hashTree(t, u.gocache) + hashTree(t, u.modcache)
		tool := func(pol sandbox.Policy, verb string, args ...string) (string, *sandbox.Wrapped) {
			t.Helper()
			r := u.run(s, pol, append([]string{self(t), toolArg, verb}, args...)...)
			return toolAnswer(t, r), r.w
		}
		zip := filepath.Join(u.modcache, "cache", "download", sbxModule, "@v", sbxModVer+".zip")
		got, w := tool(s.policy(), "write", filepath.Join(u.gocache, "planted"))
		wantDenied(t, "write the user's build cache", got)
		wantAbsent(t, filepath.Join(u.gocache, "planted"))
		if overlayExpected(t, s, u.home) {
			// The user's module cache is an overlay there: what the
			// command writes at its path lands in the workspace's upper
			// layer, never in the user's files (the hash below).
			upper := filepath.Join(w.CacheDir+".gomod", "upper")
			got, _ = tool(s.policy(), "mkdir", filepath.Join(u.modcache, "evil"))
			wantOK(t, "mkdir in the module cache's overlay", got)
			wantAbsent(t, filepath.Join(u.modcache, "evil"))
			if fi, err := os.Stat(filepath.Join(upper, "evil")); err != nil || !fi.IsDir() {
				t.Errorf("the mkdir through the overlay is not in its upper layer: %v", err)
			}
			// A module zip is read-only to its owner: root rewrites it
			// (the copy in the upper layer), a user cannot.
			if got, _ = tool(s.policy(), "write", zip); got == "ok" {
				if _, err := os.Stat(filepath.Join(upper, strings.TrimPrefix(zip, u.modcache))); err != nil {
					t.Errorf("the rewritten zip is not in the upper layer: %v", err)
				}
			} else {
				wantDenied(t, "rewrite a module zip", got, "EACCES")
			}
		} else {
			got, _ = tool(s.policy(), "mkdir", filepath.Join(u.modcache, "evil"))
			wantDenied(t, "mkdir in the user's module cache", got)
			wantAbsent(t, filepath.Join(u.modcache, "evil"))
			got, _ = tool(s.policy(), "write", zip)
			wantDenied(t, "rewrite a module zip of the user's", got)
		}
		got, _ = tool(s.policy(), "write", filepath.Join(w.CacheDir, "planted"))
		wantOK(t, "write the sandbox's own cache dir", got)
		if after := hashTree(t, u.gocache) + hashTree(t, u.modcache); after != before {
			t.Errorf("the user's caches changed")
		}

		ws2 := filepath.Join(s.base, "ws2")
		if err := os.Mkdir(ws2, 0o755); err != nil {
			t.Fatal(err)
		}
		pol2 := s.policy()
		pol2.Workspace = ws2
		got, w2 := tool(pol2, "write", filepath.Join(w.CacheDir, "from-ws2"))
		wantDenied(t, "write the first workspace's cache dir from the second", got)
		wantAbsent(t, filepath.Join(w.CacheDir, "from-ws2"))
		if w2.CacheDir == w.CacheDir || filepath.Dir(w2.CacheDir) != filepath.Dir(w.CacheDir) {
			t.Errorf("second workspace's cache dir %q, the first's %q", w2.CacheDir, w.CacheDir)
		}
		got, _ = tool(pol2, "write", filepath.Join(w2.CacheDir, "own"))
		wantOK(t, "write the second workspace's own cache dir", got)
	})
}

// TestCLICaches: the CLI's cache flags, each against the default as its
// control: the default names the workspace's cache dir (and the report
// lists it), and a write there works where the same write to the user's
// cache is refused; --no-caches leaves the variables alone; --no-cache go
// leaves only Go's; --cache-dir moves them; an unknown --allow-registry is
// INVALID_POLICY and a known one selects the proxied network; `cache list`
// and `cache prune --all` see and remove the workspace's cache dir.
func TestCLICaches(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		home := filepath.Join(s.base, "home")
		write(t, filepath.Join(home, ".cache", "go-build", "README"), "the user's\n")
		run := func(args ...string) (string, string, int) {
			t.Helper()
			cmd := exec.Command(helperBinary(t, "sandbox-run"), args...)
			cmd.Dir, cmd.Env = s.ws, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			return out.String(), errb.String(), exitCode(cmd, err)
		}
		report := filepath.Join(s.base, "report.json")
		script := `echo "${GOCACHE-unset} ${PIP_CACHE_DIR-unset}"; mkdir -p "$XDG_CACHE_HOME" && echo x > "$XDG_CACHE_HOME/own" && echo own; echo x > "$HOME/.cache/go-build/planted" || echo refused`
		out, errs, code := run("--runner", s.runner, "--json-report", report, "--", "/bin/sh", "-c", script)
		var rep struct {
			CacheDir string             `json:"cache_dir"`
			Caches   []sandbox.CacheUse `json:"caches"`
			Policy   sandbox.Policy     `json:"policy"`
		}
		if b, err := os.ReadFile(report); err != nil || json.Unmarshal(b, &rep) != nil {
			t.Fatalf("report: %v %s", err, b)
		}
		dir := rep.CacheDir
		want := filepath.Join(dir, "go-build") + " " + filepath.Join(dir, "pip") + "\nown\nrefused\n"
		if code != 0 || out != want || filepath.Dir(dir) != filepath.Join(home, ".cache", "sandbox-local", "caches") || len(rep.Caches) == 0 || rep.Caches[0].Tool != "go" {
			t.Errorf("default: exit %d stdout %q stderr %q cache dir %q; want %q", code, out, errs, dir, want)
		}
		wantAbsent(t, filepath.Join(home, ".cache", "go-build", "planted"))
		if out, errs, code = run("--runner", s.runner, "--no-caches", "--", "/bin/sh", "-c", script); code != 0 || out != "unset unset\nrefused\n" {
			t.Errorf("--no-caches: exit %d stdout %q stderr %q", code, out, errs)
		}
		if out, _, code = run("--runner", s.runner, "--no-cache", "go", "--", "/bin/sh", "-c", script); code != 0 || out != "unset "+filepath.Join(dir, "pip")+"\nown\nrefused\n" {
			t.Errorf("--no-cache go: exit %d stdout %q", code, out)
		}
		given := filepath.Join(s.base, "given")
		if out, _, code = run("--runner", s.runner, "--cache-dir", given, "--", "/bin/sh", "-c", script); code != 0 || out != filepath.Join(given, "go-build")+" "+filepath.Join(given, "pip")+"\nown\nrefused\n" {
			t.Errorf("--cache-dir: exit %d stdout %q", code, out)
		}
		wantContent(t, filepath.Join(given, "xdg", "own"), "x\n")
		if _, errs, code = run("--runner", s.runner, "--allow-registry", "maven", "--", "/bin/true"); code != 125 || !strings.Contains(errs, "INVALID_POLICY: --allow-registry") {
			t.Errorf("--allow-registry maven: exit %d stderr %q", code, errs)
		}
		if _, errs, code = run("--runner", s.runner, "--allow-registry", "go", "--json-report", report, "--", "/bin/true"); code != 0 {
			t.Errorf("--allow-registry go: exit %d stderr %q", code, errs)
		} else if b, _ := os.ReadFile(report); json.Unmarshal(b, &rep) != nil || rep.Policy.Network != sandbox.NetworkProxied || !slices.Contains(rep.Policy.AllowDomains, "proxy.golang.org:443") {
			t.Errorf("--allow-registry go: network %q, allowed %q", rep.Policy.Network, rep.Policy.AllowDomains)
		}
		if out, _, code = run("cache", "list"); code != 0 || !strings.Contains(out, dir) || !strings.Contains(out, s.ws) {
			t.Errorf("cache list: exit %d stdout %q", code, out)
		}
		if out, _, code = run("cache", "prune", "--all"); code != 0 || !strings.Contains(out, "1 caches removed") {
			t.Errorf("cache prune --all: exit %d stdout %q", code, out)
		}
		wantAbsent(t, dir)
	})
}

// overlayExpected reports whether a wrap under s shows the user's module
// cache (in home) through an overlay: under namespaces, where the caches'
// file system takes an overlay's upper layer (not a container's overlayfs
// root).
func overlayExpected(t *testing.T, s *sbx, home string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(home, &st); err != nil {
		t.Fatal(err)
	}
	switch st.Type {
	case unix.EXT4_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC:
		return s.runner == "namespaces"
	}
	t.Logf("%s: file system %#x, no overlay expected", home, st.Type)
	return false
}

// TestOverlayLauncher: the launcher's side of -overlay, given by hand.
// Under namespaces the directory is shown at its own path with the
// command's writes in the upper layer and none in the directory itself
// (the positive control); an overlay the kernel refuses (its lower layer
// inside its upper one) leaves the directory read-only, says so on
// stderr, and the command runs; an upper layer that is a symlink is a
// launcher failure, the command not run. Under landlock, which mounts
// nothing, -overlay is a launcher failure.
func TestOverlayLauncher(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		lower, good, nested, linked := filepath.Join(s.base, "lower"), filepath.Join(s.base, "good"), filepath.Join(s.base, "nested"), filepath.Join(s.base, "linked")
		inner := filepath.Join(nested, "upper", "lower")
		for _, d := range []string{lower, filepath.Join(good, "upper"), filepath.Join(good, "work"), inner, filepath.Join(nested, "work"), filepath.Join(linked, "work")} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(filepath.Join(good, "upper"), filepath.Join(linked, "upper")); err != nil {
			t.Fatal(err)
		}
		pol := s.policy()
		pol.Caches.Off = true // no -overlay of the wrap's own
		run := func(dir string, argv ...string) ran {
			low := lower
			if dir == nested {
				low = inner
			}
			w := s.wrap(pol, argv...)
			w.Args = withOptions(w.Args, "-overlay", low, "-overlay-dir", dir)
			return s.spawn(w, nil)
		}
		marker := filepath.Join(s.ws, "ran")
		if s.runner == "namespaces" && !overlayExpected(t, s, s.base) {
			t.Skipf("%s is on a file system overlayfs does not take as an upper layer: no overlay to mount", s.base)
		}
		if s.runner == "landlock" {
			r := run(good, self(t), toolArg, "write", marker)
			if r.code != 125 || !strings.HasPrefix(r.stderr, r.w.RunnerFailure.FatalPrefix) || !strings.Contains(r.stderr, "-overlay") {
				t.Errorf("-overlay under landlock: exit %d stderr %q; want a launcher failure", r.code, r.stderr)
			}
			wantAbsent(t, marker)
			return
		}
		r := run(good, self(t), toolArg, "mkdir", filepath.Join(lower, "made"))
		wantOK(t, "mkdir through the overlay", toolAnswer(t, r))
		wantAbsent(t, filepath.Join(lower, "made"))
		if fi, err := os.Stat(filepath.Join(good, "upper", "made")); err != nil || !fi.IsDir() {
			t.Errorf("the mkdir through the overlay is not in its upper layer: %v", err)
		}
		r = run(nested, self(t), toolArg, "mkdir", filepath.Join(inner, "made"))
		wantDenied(t, "mkdir where the kernel refused the overlay", toolAnswer(t, r), "EROFS")
		if !strings.Contains(r.stderr, "ns-run: notice: the overlay on "+inner+" could not be mounted") {
			t.Errorf("a refused overlay: stderr %q, want the notice", r.stderr)
		}
		wantAbsent(t, filepath.Join(inner, "made"))
		r = run(linked, self(t), toolArg, "write", marker)
		if r.code != 125 || !strings.HasPrefix(r.stderr, r.w.RunnerFailure.FatalPrefix) {
			t.Errorf("an upper layer that is a symlink: exit %d stderr %q; want a launcher failure", r.code, r.stderr)
		}
		wantAbsent(t, marker)
	})
}
