//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// TestRealClientsInTheSandbox: the real clients, run inside the sandbox
// under the proxied network with nothing but the wrap's own variables to
// find the proxy (the caller's environment holds no proxy setting, only
// the test CA to trust): curl (http, https, a redirect to a denied name, a
// 64 MiB download through CONNECT), git clone over https, go mod download
// from a GOPROXY, python's urllib, npm view. Allowed names work; denied
// ones are refused by the proxy and named in the wrap's Blocked; a client
// told to go around the proxy reaches nothing.
func TestRealClientsInTheSandbox(t *testing.T) {
	for _, c := range []string{"curl", "git", "python3", "npm"} {
		needClient(t, c)
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	w := newNetWorld(t)
	forEachRunner(t, func(t *testing.T, s *sbx) {
		s.p = sandbox.New(sandbox.Config{Runners: []string{s.runner}, Resolver: &sbxResolver{}})
		pol := s.policy()
		pol.Network = sandbox.NetworkProxied
		pol.AllowDomains = []string{sbxAllowed, sbxWildcard}
		pol.DenyDomains = []string{sbxDenyWins}
		pol.AllowPrivateDestinations = true // every test name is 127.0.0.1
		ca := w.CA.File
		home := t.TempDir()
		removableAtCleanup(t, home) // the workspace's module cache is below it
		env := []string{"PATH=" + filepath.Dir(goBin) + ":" + os.Getenv("PATH"), "HOME=" + home, "LANG=C",
			"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"SSL_CERT_FILE=" + ca, "CURL_CA_BUNDLE=" + ca, "GIT_SSL_CAINFO=" + ca, "NODE_EXTRA_CA_CERTS=" + ca,
			"npm_config_cafile=" + ca, "REQUESTS_CA_BUNDLE=" + ca}
		run := func(script string) (ran, *sandbox.Wrapped) {
			t.Helper()
			wr, err := s.p.Wrap(t.Context(), sandbox.Request{Argv: []string{"/bin/sh", "-c", script}, Policy: pol, Env: env})
			if err != nil {
				t.Fatalf("Wrap: %v", err)
			}
			t.Cleanup(func() { wr.Cleanup() })
			return s.spawn(wr, nil), wr
		}
		blocked := func(wr *sandbox.Wrapped) string {
			var names []string
			for _, b := range wr.Blocked() {
				names = append(names, b.Host)
			}
			return strings.Join(names, ",")
		}
		const big = 64 << 20
		// Into the workspace's module cache, the default (kept across
		// runs), or into $TMPDIR for the denied case, which must find
		// nothing there.
		goDownload := func(goproxy, caches string) string {
			return `export GOPROXY=` + goproxy + ` GOSUMDB=off GONOSUMDB=` + sbxModule +
				` GOFLAGS=-mod=mod GOTOOLCHAIN=local ` + caches + `; ` +
				goBin + ` mod download -json ` + sbxModule + `@` + sbxModVer
		}
		for _, c := range []struct {
			name, script, want, blocked string
			ok                          bool
		}{
			{"curl http", `curl -sS --max-time 20 ` + at(w.HTTP, sbxAllowed, "/hello"), helloBody, "", true},
			{"curl https", `curl -sS --max-time 20 ` + at(w.HTTPS, sbxUnder, "/hello"), helloBody, "", true},
			{"curl https, denied", `curl -sS --max-time 20 ` + at(w.HTTPS, sbxOther, "/hello"), "", sbxOther, false},
			{"curl https, deny wins", `curl -sS --max-time 20 ` + at(w.HTTPS, sbxDenyWins, "/hello"), "", sbxDenyWins, false},
			{"curl, a redirect to a denied name", `curl -sS -L --max-time 20 ` + at(w.HTTPS, sbxAllowed, "/redirect-denied"), "", sbxOther, false},
			{"curl, 64 MiB through CONNECT", fmt.Sprintf(`curl -sS --max-time 60 %s | sha256sum | cut -d' ' -f1`, at(w.HTTPS, sbxAllowed, fmt.Sprintf("/big?n=%d", big))), bigSHA256(big) + "\n", "", true},
			{"curl around the proxy", `curl -sS --max-time 10 --noproxy '*' --resolve ` + sbxAllowed + `:` + portOf(w.HTTPS) + `:127.0.0.1 ` + at(w.HTTPS, sbxAllowed, "/hello"), "", "", false},
			{"git clone over https", `git clone -q ` + at(w.Git, sbxAllowed, "/repo.git") + ` "$TMPDIR/c" && git -C "$TMPDIR/c" rev-parse HEAD`, w.GitHead + "\n", "", true},
			{"git clone, denied", `git clone -q ` + at(w.Git, sbxOther, "/repo.git") + ` "$TMPDIR/c"`, "", sbxOther, false},
			{"go mod download", goDownload(at(w.GoProxy, sbxAllowed, ""), ""), "", "", true},
			{"go mod download, denied", goDownload(at(w.GoProxy, sbxOther, ""), `GOMODCACHE="$TMPDIR/mod" GOCACHE="$TMPDIR/cache" GOPATH="$TMPDIR/gopath"`), "", sbxOther, false},
			{"python urllib", `python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("` + at(w.HTTPS, sbxAllowed, "/hello") + `").read().decode())'`, helloBody, "", true},
			{"python urllib, denied", `python3 -c 'import urllib.request; urllib.request.urlopen("` + at(w.HTTPS, sbxOther, "/hello") + `")'`, "", sbxOther, false},
			{"npm view", `npm_config_cache="$TMPDIR/npm" npm_config_fetch_retries=0 npm_config_update_notifier=false npm view --registry ` + at(w.NPM, sbxAllowed, "/") + ` ` + sbxNPMPkg + ` version`, sbxNPMVer + "\n", "", true},
			{"npm view, denied", `npm_config_cache="$TMPDIR/npm" npm_config_fetch_retries=0 npm_config_update_notifier=false npm view --registry ` + at(w.NPM, sbxOther, "/") + ` ` + sbxNPMPkg + ` version`, "", sbxOther, false},
		} {
			before := w.Hits.Get(sbxOther) + w.Hits.Get(sbxDenyWins)
			r, wr := run(c.script)
			switch {
			case c.ok && (r.code != 0 || c.want != "" && r.stdout != c.want):
				t.Errorf("%s: exit %d, stdout %.200q, stderr %.400q", c.name, r.code, r.stdout, r.stderr)
			case !c.ok && r.code == 0:
				t.Errorf("%s: exit 0 (stdout %.200q); want a failure", c.name, r.stdout)
			case blocked(wr) != c.blocked:
				t.Errorf("%s: blocked %q, want %q", c.name, blocked(wr), c.blocked)
			}
			if c.name == "go mod download" && r.code == 0 {
				var dl struct{ Sum, Error, Dir string }
				if err := json.Unmarshal([]byte(r.stdout), &dl); err != nil || dl.Sum != w.ModSum || wr.CacheDir == "" || !strings.HasPrefix(dl.Dir, wr.CacheDir+"/") {
					t.Errorf("go mod download: %v %+v, want Sum %s, in the sandbox's cache %s", err, dl, w.ModSum, wr.CacheDir)
				}
			}
			if after := w.Hits.Get(sbxOther) + w.Hits.Get(sbxDenyWins); after != before {
				t.Errorf("%s: a denied name's server got %d requests", c.name, after-before)
			}
		}
	})
}
