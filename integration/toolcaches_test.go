//go:build linux

package integration

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// cacheCase is one toolchain fetching from the fixture registry under the
// sandbox: the tool's binary, the cache the user's own copy of it keeps
// (below the home directory, made holding one entry), the variable that
// moves its cache into the sandbox's, the commands of each run in the
// workspace, and found, which says whether the sandbox's cache of the tool
// (the variable's value in the wrap's Caches) holds what the runs
// downloaded or made, from each run's stdout.
type cacheCase struct {
	tool, bin, userCache, variable string
	runs                           []string
	// userEnv are the caller's own settings naming the user's cache
	// (below HOME, written $HOME), in each spelling the tool reads: the
	// sandbox's must win over every one.
	userEnv []string
	// userProxy are the caller's own proxy settings in the tool's other
	// spellings, naming a proxy the command cannot reach: under the
	// proxied network the wrap drops them.
	userProxy []string
	found     func(dir string, stdouts []string) error
	// pkg, when not "", says what a machine needs to run the case: one
	// without it skips the case, saying so (.ci/run installs each). The
	// others (python3's pip, npm) every run of the suite has.
	pkg string
}

// fileHolding is the first regular file below dir whose content holds
// want (equals it, when exact), "" for none.
func fileHolding(dir string, want []byte, exact bool) string {
	var hit string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || hit != "" || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && (bytes.Equal(b, want) || !exact && bytes.Contains(b, want)) {
			hit = p
		}
		return nil
	})
	return hit
}

// cacheCases are the toolchains, each against the fixtures of nw (pyIdx
// the Python index, crates the cargo registry; npm and yarn use nw.NPM).
// The registry settings are the scripts' own, so that nothing but the
// wrap's variables places the caches and reaches the proxy.
func cacheCases(nw *netWorld, pyIdx, crates string, whl, crate []byte) []cacheCase {
	npmReg := at(nw.NPM, sbxAllowed, "/")
	holding := func(what string, want []byte, exact bool) func(string, []string) error {
		return func(dir string, _ []string) error {
			if fileHolding(dir, want, exact) == "" {
				return fmt.Errorf("no file below %s holds %s", dir, what)
			}
			return nil
		}
	}
	return []cacheCase{
		{
			tool: "pip", bin: "python3", userCache: ".cache/pip", variable: "PIP_CACHE_DIR",
			userEnv: []string{"PIP_CACHE_DIR=$HOME/.cache/pip"},
			runs: []string{`PIP_INDEX_URL=` + pyIdx + ` PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_RETRIES=0 PIP_CONFIG_FILE=/dev/null ` +
				`python3 -m pip download -q --no-deps -d "$TMPDIR/dl" ` + sbxPyPkg + ` && ls "$TMPDIR/dl"`},
			// pip keeps the HTTP response, the wheel its body.
			found: holding("the wheel", whl, false),
		},
		{
			tool: "npm", bin: "npm", userCache: ".npm", variable: "npm_config_cache",
			// npm reads npm_config_* in any case, the last one winning.
			userEnv:   []string{"npm_config_cache=$HOME/.npm", "NPM_CONFIG_CACHE=$HOME/.npm", "Npm_Config_Cache=$HOME/.npm"},
			userProxy: []string{"NPM_CONFIG_HTTPS_PROXY=http://127.0.0.1:9", "Npm_Config_Proxy=http://127.0.0.1:9"},
			runs: []string{`echo '{"name":"app","version":"0.0.0","private":true}' > package.json && ` +
				`npm_config_fetch_retries=0 npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false npm_config_loglevel=error ` +
				`npm install --registry ` + npmReg + ` ` + sbxNPMPkg + ` && node -e 'console.log(require("` + sbxNPMPkg + `"))'`},
			found: holding("the package tarball", nw.NPMTgz, true),
		},
		{
			tool: "yarn", bin: "yarnpkg", userCache: ".cache/yarn", variable: "YARN_CACHE_FOLDER", pkg: "yarnpkg",
			// yarn 1 reads yarn_* in any case, the last one winning, over
			// npm_config_*.
			userEnv:   []string{"YARN_CACHE_FOLDER=$HOME/.cache/yarn", "yarn_cache_folder=$HOME/.cache/yarn", "npm_config_cache_folder=$HOME/.cache/yarn"},
			userProxy: []string{"yarn_https_proxy=http://127.0.0.1:9", "YARN_PROXY=http://127.0.0.1:9"},
			// Debian's yarnpkg finds its modules in /usr/share/nodejs,
			// which a node not of Debian's packaging does not search.
			runs: []string{`echo '{"name":"app","version":"0.0.0","private":true}' > package.json && ` +
				`NODE_PATH=/usr/share/nodejs yarnpkg add --non-interactive --no-progress --registry ` + npmReg + ` ` + sbxNPMPkg + ` >"$TMPDIR/yarn.log" 2>&1 || { cat "$TMPDIR/yarn.log" >&2; exit 1; }; ` +
				`node -e 'console.log(require("` + sbxNPMPkg + `"))'`},
			found: holding("the package tarball", nw.NPMTgz, true),
		},
		{
			tool: "cargo", bin: "cargo", userCache: ".cargo/registry", variable: "CARGO_HOME", pkg: "cargo 1.68 or later (sparse registries; Debian: cargo-web)",
			userEnv: []string{"CARGO_HOME=$HOME/.cargo"},
			runs: []string{`printf '[package]\nname = "app"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n` + sbxCrate + ` = { version = "` + sbxCrateVer + `", registry = "sbx" }\n' > Cargo.toml && ` +
				`mkdir -p src && echo 'fn main() {}' > src/main.rs && ` +
				`CARGO_REGISTRIES_SBX_INDEX=sparse+` + crates + ` CARGO_NET_RETRY=0 CARGO_TERM_COLOR=never cargo fetch -q`},
			found: func(dir string, _ []string) error {
				got, _ := filepath.Glob(filepath.Join(dir, "registry", "cache", "*", sbxCrate+"-"+sbxCrateVer+".crate"))
				if len(got) != 1 {
					return fmt.Errorf("crate files in %s: %q, want one", dir, got)
				}
				if b, err := os.ReadFile(got[0]); err != nil || !bytes.Equal(b, crate) {
					return fmt.Errorf("%s differs from the registry's crate (%v)", got[0], err)
				}
				return nil
			},
		},
		{
			tool: "ccache", bin: "ccache", userCache: ".cache/ccache", variable: "CCACHE_DIR", pkg: "ccache",
			userEnv: []string{"CCACHE_DIR=$HOME/.cache/ccache"},
			// Two runs: the first compiles and stores, the second is a hit.
			runs: func() []string {
				c := `printf 'int answer(void) { return 42; }\n' > answer.c && ccache cc -c answer.c -o "$TMPDIR/answer.o" && ` +
					`ccache --print-stats | grep -E '^(direct_cache_hit|cache_miss)\s'`
				return []string{c, c}
			}(),
			found: func(dir string, stdouts []string) error {
				want := []string{"cache_miss\t1\ndirect_cache_hit\t0\n", "cache_miss\t1\ndirect_cache_hit\t1\n"}
				if len(stdouts) != 2 || stdouts[0] != want[0] || stdouts[1] != want[1] {
					return fmt.Errorf("ccache's stats after each run %q, want %q", stdouts, want)
				}
				var results []string
				filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, "R") {
						results = append(results, p)
					}
					return nil
				})
				if len(results) != 1 {
					return fmt.Errorf("ccache's result files below %s: %q, want one", dir, results)
				}
				return nil
			},
		},
	}
}

// cacheOf is the value the wrap gave variable for tool, and the caller's
// variables it replaced for the tool, from its Caches.
func cacheOf(w *sandbox.Wrapped, tool, variable string) (string, []string) {
	for _, u := range w.Caches {
		if u.Tool != tool {
			continue
		}
		for _, kv := range u.Env {
			if v, ok := strings.CutPrefix(kv, variable+"="); ok {
				return v, u.Replaced
			}
		}
	}
	return "", nil
}

// TestToolCachesThroughTheProxy: under the default caches, with only the
// registry's name allowed through the proxy, pip download, npm install,
// yarn add and cargo fetch from the fixture registries, and ccache
// compiles, with the caller's environment naming the user's own cache of
// the tool in every spelling the tool reads: each succeeds, what it
// fetched or compiled is in the sandbox's cache of that tool (the
// directory the wrap's Caches names, which also names the caller's
// spellings it replaced), a second ccache compile is a hit, and the
// user's own cache of the tool hashes the same after. A write into the
// user's cache is refused and leaves nothing; the same write into the
// sandbox's cache of the tool works. A tool this machine lacks (yarn,
// cargo, ccache: .ci/run installs them) is skipped, naming what it needs.
func TestToolCachesThroughTheProxy(t *testing.T) {
	nw := newNetWorld(t)
	idx, whl := nw.startPyIndex(t)
	reg, crate := nw.startCargoRegistry(t)
	cases := cacheCases(nw, at(idx, sbxAllowed, "/simple/"), at(reg, sbxAllowed, "/index/"), whl, crate)
	forEachRunner(t, func(t *testing.T, s *sbx) {
		s.p = sandbox.New(sandbox.Config{Runners: []string{s.runner}, Resolver: &sbxResolver{}})
		home := filepath.Join(s.base, "home")
		removableAtCleanup(t, s.base) // Go's and the tools' read-only cache entries
		pol := s.policy()
		pol.Network = sandbox.NetworkProxied
		pol.AllowDomains = []string{sbxAllowed}
		pol.AllowPrivateDestinations = true // every test name is 127.0.0.1
		ca := nw.CA.File
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C",
			"SSL_CERT_FILE=" + ca, "NODE_EXTRA_CA_CERTS=" + ca, "npm_config_cafile=" + ca,
			"REQUESTS_CA_BUNDLE=" + ca, "CARGO_HTTP_CAINFO=" + ca}
		if r := os.Getenv("RUSTUP_HOME"); r != "" {
			env = append(env, "RUSTUP_HOME="+r)
		} else if h, err := os.UserHomeDir(); err == nil {
			// rustup's cargo finds the user's toolchains there, not
			// below the test's home.
			env = append(env, "RUSTUP_HOME="+filepath.Join(h, ".rustup"))
		}
		for _, c := range cases {
			t.Run(c.tool, func(t *testing.T) {
				if _, err := exec.LookPath(c.bin); err != nil && c.pkg != "" {
					t.Skipf("%s is not on PATH (%v): this case needs %s", c.bin, err, c.pkg)
				}
				needClient(t, c.bin)
				ws := filepath.Join(s.base, "ws-"+c.tool)
				if err := os.Mkdir(ws, 0o755); err != nil {
					t.Fatal(err)
				}
				p := pol
				p.Workspace = ws
				user := filepath.Join(home, filepath.FromSlash(c.userCache))
				write(t, filepath.Join(user, "entry"), "the user's own "+c.tool+" cache\n")
				before := hashTree(t, user)
				cenv := append(slices.Clone(env), c.userProxy...)
				var replaced []string // the caller's spellings other than the wrap's own
				for _, kv := range c.userEnv {
					cenv = append(cenv, strings.ReplaceAll(kv, "$HOME", home))
					if name, _, _ := strings.Cut(kv, "="); name != c.variable {
						replaced = append(replaced, name)
					}
				}
				run := func(argv ...string) ran {
					t.Helper()
					w, err := s.p.Wrap(t.Context(), sandbox.Request{Argv: argv, Env: cenv, Policy: p})
					if err != nil {
						t.Fatalf("Wrap(%q): %v", argv, err)
					}
					t.Cleanup(func() { w.Cleanup() })
					return s.spawn(w, func(cmd *exec.Cmd) { cmd.Dir = ws })
				}
				var outs []string
				var dir string
				for i, script := range c.runs {
					r := run("/bin/sh", "-c", script)
					if r.code != 0 {
						t.Fatalf("%s, run %d: exit %d stdout %q stderr %.1500q", c.tool, i+1, r.code, r.stdout, r.stderr)
					}
					var rep []string
					if dir, rep = cacheOf(r.w, c.tool, c.variable); dir == "" || !strings.HasPrefix(dir, r.w.CacheDir+"/") || !slices.Equal(rep, replaced) {
						t.Fatalf("the wrap's caches %+v: want %s for %s below its cache dir %q, replacing %q", r.w.Caches, c.variable, c.tool, r.w.CacheDir, replaced)
					}
					outs = append(outs, r.stdout)
				}
				if err := c.found(dir, outs); err != nil {
					t.Errorf("%s: %v", c.tool, err)
				}
				if after := hashTree(t, user); after != before {
					t.Errorf("the user's own %s cache %s changed", c.tool, user)
				}
				tool := func(verb, path string) string {
					return toolAnswer(t, run(self(t), toolArg, verb, path))
				}
				wantDenied(t, "write into the user's own "+c.tool+" cache", tool("write", filepath.Join(user, "planted")))
				wantAbsent(t, filepath.Join(user, "planted"))
				wantOK(t, "write into the sandbox's "+c.tool+" cache", tool("write", filepath.Join(dir, "planted")))
			})
		}
	})
}
