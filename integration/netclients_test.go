//go:build linux

package integration

// Real clients through the domain proxy, configured by environment
// variables only (what the sandbox's proxied network mode sets), unconfined
// for now. Every origin is reachable under names only the proxy can
// resolve, so a success proves the request went through the proxy, and the
// origins count requests by name, so a refusal proves the origin never saw
// the denied name.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/internal/netproxy"
)

// sbxNoProxy is what NO_PROXY holds (netproxy.NoProxy).
const sbxNoProxy = netproxy.NoProxy

// proxyEnv is the environment of a command in the proxied network mode:
// the proxy part is what the sandbox sets (copy it into the library), the
// trust part, only when caFile is not "", is for the tests' throwaway CA.
//
// Who reads what, for a fetch from an allowed name with that variable
// alone (TestNetClientVariables, TestNetClientPip, TestNetClientCargo;
// curl 7.88, git 2.39, go 1.26, Python 3.11, pip 23.2, npm 10.8, cargo
// 1.95):
//
//	curl http://    http_proxy ALL_PROXY all_proxy     (libcurl ignores HTTP_PROXY: httpoxy)
//	curl https://   HTTPS_PROXY https_proxy ALL_PROXY all_proxy
//	git https://    HTTPS_PROXY https_proxy ALL_PROXY all_proxy
//	python urllib   HTTP_PROXY http_proxy for http://, HTTPS_PROXY https_proxy for https://
//	go (GOPROXY)    HTTPS_PROXY https_proxy            (never ALL_PROXY; never proxies loopback)
//	npm             HTTPS_PROXY https_proxy npm_config_proxy npm_config_https_proxy
//	pip             PIP_PROXY HTTPS_PROXY
//	cargo           CARGO_HTTP_PROXY HTTPS_PROXY https_proxy ALL_PROXY all_proxy
//	wget, requests  use proxyEnv (TestNetClientOthers; not checked one by one)
//	node's own fetch and https.get: none (ENOTFOUND: node 20 reads no proxy variable)
//
// So HTTP_PROXY/http_proxy and HTTPS_PROXY/https_proxy in both cases
// cover every client; ALL_PROXY=socks5h:// is libcurl's fallback (other
// schemes, and a client that unsets the HTTP ones), socks5h so the client
// sends the name, not an address it resolved. NO_PROXY is loopback only
// (sbxNoProxy) and must never name a domain the policy decides on: a
// client sends a NO_PROXY name around the proxy (TestNetClientLoopback).
// npm_config_proxy, npm_config_https_proxy, PIP_PROXY and CARGO_HTTP_PROXY
// are the tools' own settings, which by the tools' documentation (not
// checked here) win over a proxy in the user's .npmrc, pip.conf or
// .cargo/config.toml; pnpm and yarn 1 read the npm_config_ ones too
// (documented; yarn 1 reaches a registry with the wrap's variables alone
// in TestToolCachesThroughTheProxy, pnpm is not packaged for Debian and
// never runs here). All of this is
// cooperative: a client that ignores the variables (or a git with
// http.proxy in its config, which wins over them) connects directly, so
// the network confinement, not the variables, must keep it from anything
// but the proxy.
//
// Test only (the proxy never decrypts TLS, so a real sandbox leaves the
// system's roots alone; these make the clients trust the test CA):
// SSL_CERT_FILE (Go, Python's ssl, OpenSSL), CURL_CA_BUNDLE (curl),
// GIT_SSL_CAINFO (git), NODE_EXTRA_CA_CERTS (node), npm_config_cafile (npm:
// Debian's /etc/npmrc sets cafile to the system bundle, which replaces
// node's roots, NODE_EXTRA_CA_CERTS included), REQUESTS_CA_BUNDLE
// (requests, pip), CARGO_HTTP_CAINFO (cargo).
func proxyEnv(proxyURL string, caFile string) []string {
	u, err := url.Parse(proxyURL)
	if err != nil {
		panic(err)
	}
	env := netproxy.ClientEnv(u.Host)
	if caFile != "" {
		env = append(env,
			"SSL_CERT_FILE="+caFile, "CURL_CA_BUNDLE="+caFile, "GIT_SSL_CAINFO="+caFile,
			"NODE_EXTRA_CA_CERTS="+caFile, "npm_config_cafile="+caFile, "REQUESTS_CA_BUNDLE="+caFile,
			"CARGO_HTTP_CAINFO="+caFile)
	}
	return env
}

// clientEnv is a client's whole environment: PATH, a fresh HOME (no user
// configuration), then proxyEnv for p and the test CA, then extra.
func clientEnv(t *testing.T, p *netproxy.Proxy, w *netWorld, extra ...string) []string {
	t.Helper()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0"}
	env = append(env, proxyEnv("http://"+p.Addr().String(), w.CA.File)...)
	return append(env, extra...)
}

// without drops the variables named (exactly) from env.
func without(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// clientResult is what one client run did.
type clientResult struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

func (r clientResult) String() string {
	return fmt.Sprintf("exit %d after %v\nstdout: %s\nstderr: %s", r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// needClient finds a client on PATH; a missing one fails the test. go,
// when not on PATH (scripts/test's unprivileged run has only /usr/bin
// and /bin), is the toolchain that built the test.
func needClient(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil && name == "go" {
		if g := filepath.Join(runtime.GOROOT(), "bin", "go"); runtime.GOROOT() != "" {
			if _, serr := os.Stat(g); serr == nil {
				return g
			}
		}
	}
	if err != nil {
		t.Fatalf("%s is not on PATH: the client checks need it: %v", name, err)
	}
	return p
}

// runClient runs argv with env in dir (a temp dir if ""), its stdout to
// sink if not nil; it is killed after 30 s.
func runClient(t *testing.T, env []string, dir string, sink io.Writer, argv ...string) clientResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, needClient(t, argv[0]), argv[1:]...)
	// A killed npm's children may hold the pipes.
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = env
	if dir == "" {
		dir = t.TempDir()
	}
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	if sink != nil {
		cmd.Stdout = sink
	}
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	r := clientResult{stdout: out.String(), stderr: errb.String(), code: exitCode(cmd, err), took: time.Since(start)}
	if ctx.Err() != nil {
		t.Errorf("%v timed out: %v", argv, r)
	}
	return r
}

// wantBlocked checks the proxy's record of refusals, exactly.
func wantBlocked(t *testing.T, p *netproxy.Proxy, want ...netproxy.Blocked) {
	t.Helper()
	got := p.Blocked()
	sort.Slice(want, func(i, j int) bool {
		return want[i].Host < want[j].Host || want[i].Host == want[j].Host && want[i].Port < want[j].Port
	})
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Blocked() = %+v\nwant       %+v", got, want)
	}
}

func atoiPort(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

const (
	reasonNotAllowed = "not in the policy's allow-domains"
	reasonIP         = "an IP address, not a name the policy allows"
	reasonDenyWins   = "denied by the policy's deny-domains (" + sbxDenyWins + ")"
)

// refusedConnect is the reason phrase of the proxy's 403 (to a CONNECT or
// a forwarded request), which is all Go, Python and wget report of a
// refused CONNECT.
func refusedConnect(host, port, reason string) string {
	return "Forbidden by the sandbox policy: " + host + " port " + port + ": " + reason
}

// refusal is the body of the proxy's 403 for host:port.
func refusal(host, port, reason string) string {
	return "sandbox-local: blocked by the sandbox policy: " + host + " port " + port + ": " + reason + "\n"
}

func TestNetClientCurl(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t)
	p, _ := startSbxProxy(t)
	env := clientEnv(t, p, w)
	hp, sp := portOf(w.HTTP), portOf(w.HTTPS)
	curl := func(env []string, sink io.Writer, args ...string) clientResult {
		t.Helper()
		return runClient(t, env, "", sink, append([]string{"curl", "-sS", "--max-time", "20"}, args...)...)
	}

	// Positive control: the origin answers other.sbx.test when asked
	// directly (the name pinned to 127.0.0.1 by curl itself).
	if r := curl(env, nil, "--noproxy", "*", "--resolve", sbxOther+":"+sp+":127.0.0.1", at(w.HTTPS, sbxOther, "/hello")); r.code != 0 || r.stdout != helloBody {
		t.Fatalf("direct to %s (control): %v", sbxOther, r)
	}
	otherHits := w.Hits.Get(sbxOther)

	for _, tc := range []struct {
		name, url string
		code      int
		stdout    string
		stderr    string
	}{
		{"http allowed", at(w.HTTP, sbxAllowed, "/hello"), 0, helloBody, ""},
		{"https allowed", at(w.HTTPS, sbxAllowed, "/hello"), 0, helloBody, ""},
		{"https wildcard", at(w.HTTPS, sbxUnder, "/hello"), 0, helloBody, ""},
		{"http denied", at(w.HTTP, sbxOther, "/hello"), 22, refusal(sbxOther, hp, reasonNotAllowed), "The requested URL returned error: 403"},
		{"https denied", at(w.HTTPS, sbxOther, "/hello"), 56, "", "CONNECT tunnel failed, response 403"},
		{"https deny wins over the wildcard", at(w.HTTPS, sbxDenyWins, "/hello"), 56, "", "CONNECT tunnel failed, response 403"},
		{"http IP literal", at(w.HTTP, sbxIPLiteral, "/hello"), 22, refusal(sbxIPLiteral, hp, reasonIP), "The requested URL returned error: 403"},
		{"https IP literal", at(w.HTTPS, sbxIPLiteral, "/hello"), 56, "", "CONNECT tunnel failed, response 403"},
		{"http redirect to a denied name", at(w.HTTP, sbxAllowed, "/redirect-denied"), 22, refusal(sbxOther, hp, reasonNotAllowed), "The requested URL returned error: 403"},
		{"https redirect to a denied name", at(w.HTTPS, sbxAllowed, "/redirect-denied"), 56, "", "CONNECT tunnel failed, response 403"},
	} {
		r := curl(env, nil, "-L", "--fail-with-body", tc.url)
		if r.code != tc.code || r.stdout != tc.stdout || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%s: curl %s: %v\nwant exit %d, stdout %q, stderr with %q", tc.name, tc.url, r, tc.code, tc.stdout, tc.stderr)
		}
	}
	// The CONNECT refusal's body names the policy too (curl -v shows the
	// proxy's headers only, so ask the proxy by hand).
	if r := curl(env, nil, "-v", at(w.HTTPS, sbxOther, "/hello")); !strings.Contains(r.stderr, "X-Sandbox-Blocked: "+sbxOther) {
		t.Errorf("curl -v through a refused CONNECT: %v\nwant the X-Sandbox-Blocked header", r)
	}

	// socks5h:// through ALL_PROXY alone: the name goes to the proxy.
	socksEnv := without(env, "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy")
	if r := curl(socksEnv, nil, at(w.HTTPS, sbxAllowed, "/hello")); r.code != 0 || r.stdout != helloBody {
		t.Errorf("socks5h allowed: %v", r)
	}
	if r := curl(socksEnv, nil, at(w.HTTPS, sbxOther, "/hello")); r.code != 97 || !strings.Contains(r.stderr, "Can't complete SOCKS5 connection to "+sbxOther+". (2)") {
		t.Errorf("socks5h denied: %v\nwant exit 97 (CURLE_PROXY), reply 2 (not allowed by ruleset)", r)
	}

	// 200 MiB through CONNECT, every byte counted and hashed.
	const n = 200 << 20
	sink := newCountingHash()
	r := curl(env, sink, at(w.HTTPS, sbxAllowed, fmt.Sprintf("/big?n=%d", n)))
	if r.code != 0 || sink.n != n || sink.Sum() != bigSHA256(n) {
		t.Errorf("200 MiB through CONNECT: %v\ngot %d bytes, sha256 %s; want %d, %s", r, sink.n, sink.Sum(), n, bigSHA256(n))
	}
	t.Logf("200 MiB through CONNECT in %v", r.took.Round(time.Millisecond))
	// And through the plain forward proxy.
	sink = newCountingHash()
	const m = 50 << 20
	r = curl(env, sink, at(w.HTTP, sbxAllowed, fmt.Sprintf("/big?n=%d", m)))
	if r.code != 0 || sink.n != m || sink.Sum() != bigSHA256(m) {
		t.Errorf("50 MiB through the forward proxy: %v\ngot %d bytes; want %d", r, sink.n, m)
	}

	// 32 MiB up, through the forward proxy and through CONNECT (curl sends
	// Expect: 100-continue).
	up := filepath.Join(t.TempDir(), "up")
	f, err := os.Create(up)
	if err != nil {
		t.Fatal(err)
	}
	const u = 32 << 20
	io.Copy(f, bigStream(u))
	f.Close()
	for _, s := range []*httptest.Server{w.HTTP, w.HTTPS} {
		r := curl(env, nil, "--data-binary", "@"+up, at(s, sbxAllowed, "/upload"))
		if want := fmt.Sprintf("%d %s\n", u, bigSHA256(u)); r.code != 0 || r.stdout != want {
			t.Errorf("32 MiB up to %s: %v\nwant %q", at(s, sbxAllowed, "/upload"), r, want)
		}
	}

	// 32 tunnels at once, 4 MiB each: 16 CONNECTs, then (--next, as curl's
	// options hold for every URL of a group) 16 over SOCKS.
	w4 := []string{"--http1.1", "-w", "%{http_code} %{size_download}\n"}
	args := append([]string{"--parallel", "--parallel-max", "32"}, w4...)
	for i := 0; i < 32; i++ {
		if i == 16 {
			args = append(append(args, "--next", "--proxy", "socks5h://"+p.Addr().String()), w4...)
		}
		args = append(args, "-o", "/dev/null", at(w.HTTPS, sbxAllowed, fmt.Sprintf("/big?n=%d&i=%d", 4<<20, i)))
	}
	before := w.Hits.Get(sbxAllowed)
	r = curl(env, nil, args...)
	if want := strings.Repeat(fmt.Sprintf("200 %d\n", 4<<20), 32); r.code != 0 || r.stdout != want || w.Hits.Get(sbxAllowed) != before+32 {
		t.Errorf("32 parallel tunnels: %v", r)
	}

	// A refused upload gets the refusal, not a reset, with and without
	// Expect: 100-continue (the proxy closes without reading the body).
	for _, expect := range []string{"Expect: 100-continue", "Expect:"} {
		r := curl(env, nil, "-H", expect, "--data-binary", "@"+up, at(w.HTTP, sbxOther, "/upload"))
		if r.code != 0 || r.stdout != refusal(sbxOther, hp, reasonNotAllowed) {
			t.Errorf("32 MiB up to %s (%s): %v", sbxOther, expect, r)
		}
	}

	// HTTP/2 inside the tunnel: the proxy copies bytes.
	if r := curl(env, nil, "--http2", "-w", "[%{http_version}]", at(w.HTTPS, sbxAllowed, "/hello")); r.code != 0 || r.stdout != helloBody+"[2]" {
		t.Errorf("HTTP/2 through CONNECT: %v", r)
	}
	// A Host header naming another name does not reach it: the forwarded
	// request goes to, and names, the URL's host.
	if r := curl(env, nil, "-H", "Host: "+net.JoinHostPort(sbxOther, hp), at(w.HTTP, sbxAllowed, "/hello")); r.code != 0 || r.stdout != helloBody {
		t.Errorf("allowed URL with the Host header of a denied name: %v", r)
	}

	// One curl, one connection to the proxy, two hosts: the second request
	// on the kept-alive connection is decided on its own.
	r = curl(env, nil, "-w", "[%{http_code} %{num_connects}]", at(w.HTTP, sbxAllowed, "/hello"), at(w.HTTP, sbxOther, "/hello"))
	if want := helloBody + "[200 1]" + refusal(sbxOther, hp, reasonNotAllowed) + "[403 0]"; r.code != 0 || r.stdout != want {
		t.Errorf("two hosts on one proxy connection: %v\nwant stdout %q", r, want)
	}

	if got := w.Hits.Get(sbxOther); got != otherHits {
		t.Errorf("the origin answered %s %d times through the proxy", sbxOther, got-otherHits)
	}
	wantBlocked(t, p,
		netproxy.Blocked{Host: sbxIPLiteral, Port: atoiPort(t, hp), Count: 1, Reason: reasonIP},
		netproxy.Blocked{Host: sbxIPLiteral, Port: atoiPort(t, sp), Count: 1, Reason: reasonIP},
		netproxy.Blocked{Host: sbxDenyWins, Port: atoiPort(t, sp), Count: 1, Reason: reasonDenyWins},
		netproxy.Blocked{Host: sbxOther, Port: atoiPort(t, hp), Count: 5, Reason: reasonNotAllowed},
		netproxy.Blocked{Host: sbxOther, Port: atoiPort(t, sp), Count: 4, Reason: reasonNotAllowed},
	)
}

func TestNetClientGit(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t)
	p, _ := startSbxProxy(t)
	env := clientEnv(t, p, w)
	gp := portOf(w.Git)
	clone := func(env []string, u string) (clientResult, string) {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "clone")
		return runClient(t, env, "", nil, "git", "clone", "-q", u, dst), dst
	}
	head := func(dir string) string {
		t.Helper()
		r := runClient(t, env, dir, nil, "git", "rev-parse", "HEAD")
		return strings.TrimSpace(r.stdout)
	}

	wantHead := w.GitHead
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"https through CONNECT", env},
		{"socks5h through ALL_PROXY", without(env, "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy")},
	} {
		r, dst := clone(tc.env, at(w.Git, sbxAllowed, "/repo.git"))
		if r.code != 0 {
			t.Errorf("%s: clone: %v", tc.name, r)
			continue
		}
		if got := head(dst); got != wantHead {
			t.Errorf("%s: HEAD %q, want %q", tc.name, got, wantHead)
		}
		wantContent(t, filepath.Join(dst, "README"), helloBody)
		// And a push back (a POST of a pack through the tunnel).
		write(t, filepath.Join(dst, "pushed"), tc.name+"\n")
		ident := append(append([]string(nil), tc.env...), gitIdentity...)
		for _, args := range [][]string{{"add", "pushed"}, {"commit", "-q", "-m", "pushed " + tc.name}, {"push", "-q", "origin", "main"}} {
			if r := runClient(t, ident, dst, nil, append([]string{"git"}, args...)...); r.code != 0 {
				t.Errorf("%s: git %v: %v", tc.name, args, r)
			}
		}
		local := strings.TrimSpace(runClient(t, env, dst, nil, "git", "rev-parse", "HEAD").stdout)
		remote := strings.TrimSpace(runClient(t, env, w.GitRepo, nil, "git", "rev-parse", "main").stdout)
		if local == wantHead || local != remote {
			t.Errorf("%s: pushed %s, the server's main is %s", tc.name, local, remote)
		}
		wantHead = remote
	}
	for _, tc := range []struct {
		name, url, stderr string
	}{
		{"denied name", at(w.Git, sbxOther, "/repo.git"), "CONNECT tunnel failed, response 403"},
		{"IP literal", at(w.Git, sbxIPLiteral, "/repo.git"), "CONNECT tunnel failed, response 403"},
		{"redirect to a denied name", at(w.Git, sbxAllowed, "/moved/repo.git"), "CONNECT tunnel failed, response 403"},
	} {
		r, dst := clone(env, tc.url)
		if r.code != 128 || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%s: clone %s: %v\nwant exit 128 and %q", tc.name, tc.url, r, tc.stderr)
		}
		wantAbsent(t, dst)
	}
	socksEnv := without(env, "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy")
	if r, _ := clone(socksEnv, at(w.Git, sbxOther, "/repo.git")); r.code != 128 || !strings.Contains(r.stderr, "Can't complete SOCKS5 connection to "+sbxOther+". (2)") {
		t.Errorf("socks5h denied: %v", r)
	}
	// git's http.proxy wins over the variables: one pointing at nothing
	// breaks the clone the variables alone make work.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	withConfig := append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.proxy", "GIT_CONFIG_VALUE_0=http://"+dead)
	if r, _ := clone(withConfig, at(w.Git, sbxAllowed, "/repo.git")); r.code != 128 || !strings.Contains(r.stderr, "Failed to connect to 127.0.0.1 port") {
		t.Errorf("clone with http.proxy=%s in git's config: %v\nwant exit 128, failed to connect", dead, r)
	}
	if n := w.Hits.Get(sbxOther); n != 0 {
		t.Errorf("the git server answered %s %d times", sbxOther, n)
	}
	wantBlocked(t, p,
		netproxy.Blocked{Host: sbxIPLiteral, Port: atoiPort(t, gp), Count: 1, Reason: reasonIP},
		netproxy.Blocked{Host: sbxOther, Port: atoiPort(t, gp), Count: 3, Reason: reasonNotAllowed},
	)
}

// goEnv is the environment of the go command: a fresh module cache and
// build cache, the sbx GOPROXY, no checksum database, no toolchain
// download.
func goEnv(t *testing.T, env []string, goproxy string) []string {
	t.Helper()
	gopath := t.TempDir()
	modcache := filepath.Join(gopath, "pkg", "mod")
	// The module cache is read-only; make it removable before TempDir
	// removes it (cleanups run last first).
	t.Cleanup(func() {
		filepath.Walk(gopath, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	return append(env, "GOPROXY="+goproxy, "GOSUMDB=off", "GONOSUMDB="+sbxModule, "GOFLAGS=-mod=mod",
		"GOPATH="+gopath, "GOMODCACHE="+modcache, "GOCACHE="+t.TempDir(), "GOTOOLCHAIN=local", "GOENV=off",
		"CGO_ENABLED=0")
}

// goForbidden is the error go mod download -json reports when the proxy
// refuses the CONNECT to host: Go's transport keeps only the status text.
func goForbidden(w *netWorld, host, reason string) string {
	return `"Error": "` + sbxModule + "@" + sbxModVer + `: Get \"` + at(w.GoProxy, host, "/"+sbxModule+"/@v/"+sbxModVer+".info") + `\": ` +
		refusedConnect(host, portOf(w.GoProxy), reason) + `"`
}

func TestNetClientGo(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t)
	p, _ := startSbxProxy(t)
	env := clientEnv(t, p, w)
	mp := portOf(w.GoProxy)
	mv := sbxModule + "@" + sbxModVer

	// go mod download outside a module.
	r := runClient(t, goEnv(t, env, at(w.GoProxy, sbxAllowed, "")), "", nil, "go", "mod", "download", "-json", mv)
	var dl struct{ Path, Version, Sum, GoModSum, Dir, Zip, Error string }
	if err := json.Unmarshal([]byte(r.stdout), &dl); r.code != 0 || err != nil {
		t.Fatalf("go mod download %s: %v (%v)", mv, r, err)
	}
	if dl.Sum != w.ModSum || dl.GoModSum != w.ModGoModSum || dl.Error != "" {
		t.Errorf("go mod download: %+v\nwant Sum %s GoModSum %s", dl, w.ModSum, w.ModGoModSum)
	}
	wantContent(t, filepath.Join(dl.Dir, "hello.go"), moduleFiles["hello.go"])
	if b, err := os.ReadFile(dl.Zip); err != nil || !bytes.Equal(b, w.ModZip) {
		t.Errorf("module zip in the cache differs from the proxy's (%v)", err)
	}

	// A module that imports it: go mod tidy fetches it and records it
	// (no compiling: a fresh build cache would take longer than the rest).
	mod := t.TempDir()
	write(t, filepath.Join(mod, "go.mod"), "module example.com/m\n\ngo 1.21\n\nrequire "+sbxModule+" "+sbxModVer+"\n")
	write(t, filepath.Join(mod, "main.go"), "package main\n\nimport (\n\t\"fmt\"\n\n\thello \""+sbxModule+"\"\n)\n\nfunc main() { fmt.Println(hello.Hello()) }\n")
	genv := goEnv(t, env, at(w.GoProxy, sbxAllowed, ""))
	if r := runClient(t, genv, mod, nil, "go", "mod", "tidy"); r.code != 0 {
		t.Errorf("go mod tidy with the module: %v", r)
	}
	if r := runClient(t, genv, mod, nil, "go", "list", "-f", "{{.ImportPath}} {{.Name}} {{.GoFiles}}", sbxModule); r.code != 0 || r.stdout != sbxModule+" hello [hello.go]\n" {
		t.Errorf("go list of the module's package: %v", r)
	}
	wantContent(t, filepath.Join(mod, "go.sum"), sbxModule+" "+sbxModVer+" "+w.ModSum+"\n"+sbxModule+" "+sbxModVer+"/go.mod "+w.ModGoModSum+"\n")

	for _, tc := range []struct {
		name, goproxy, stderr string
	}{
		{"denied name", at(w.GoProxy, sbxOther, ""), goForbidden(w, sbxOther, reasonNotAllowed)},
		{"IP literal", at(w.GoProxy, sbxIPLiteral, ""), goForbidden(w, sbxIPLiteral, reasonIP)},
		{"redirect to a denied name", at(w.GoProxy, sbxAllowed, "/moved"), goForbidden(w, sbxOther, reasonNotAllowed)},
	} {
		r := runClient(t, goEnv(t, env, tc.goproxy), "", nil, "go", "mod", "download", "-json", mv)
		if r.code != 1 || !strings.Contains(r.stdout+r.stderr, tc.stderr) {
			t.Errorf("%s: GOPROXY=%s go mod download: %v\nwant exit 1 and %q", tc.name, tc.goproxy, r, tc.stderr)
		}
	}
	if n := w.Hits.Get(sbxOther); n != 0 {
		t.Errorf("the module proxy answered %s %d times", sbxOther, n)
	}
	wantBlocked(t, p,
		netproxy.Blocked{Host: sbxIPLiteral, Port: atoiPort(t, mp), Count: 1, Reason: reasonIP},
		netproxy.Blocked{Host: sbxOther, Port: atoiPort(t, mp), Count: 2, Reason: reasonNotAllowed},
	)
}

// pyFetch fetches argv[1] with urllib (which reads *_proxy and no_proxy):
// the body on stdout, or "HTTP <code>" and the body and exit 3 for an HTTP
// error, or "URLError: <reason>" and exit 4. With a second argument it
// prints the length and SHA-256 instead of the body.
const pyFetch = `
import hashlib, sys, urllib.error, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=20) as r:
        if len(sys.argv) > 2:
            h, n = hashlib.sha256(), 0
            while True:
                b = r.read(1 << 20)
                if not b:
                    break
                h.update(b)
                n += len(b)
            print(n, h.hexdigest())
        else:
            sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    sys.stdout.write("HTTP %d\n%s" % (e.code, e.read().decode()))
    sys.exit(3)
except urllib.error.URLError as e:
    sys.stdout.write("URLError: %s\n" % (e.reason,))
    sys.exit(4)
`

func TestNetClientPython(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t)
	p, _ := startSbxProxy(t)
	env := clientEnv(t, p, w)
	hp, sp := portOf(w.HTTP), portOf(w.HTTPS)
	tunnel403 := func(host, reason string) string {
		return "URLError: Tunnel connection failed: 403 " + refusedConnect(host, sp, reason) + "\n"
	}
	for _, tc := range []struct {
		name, url string
		code      int
		stdout    string
	}{
		{"http allowed", at(w.HTTP, sbxAllowed, "/hello"), 0, helloBody},
		{"https allowed", at(w.HTTPS, sbxAllowed, "/hello"), 0, helloBody},
		{"https wildcard", at(w.HTTPS, sbxUnder, "/hello"), 0, helloBody},
		{"http denied", at(w.HTTP, sbxOther, "/hello"), 3, "HTTP 403\n" + refusal(sbxOther, hp, reasonNotAllowed)},
		{"https denied", at(w.HTTPS, sbxOther, "/hello"), 4, tunnel403(sbxOther, reasonNotAllowed)},
		{"https deny wins over the wildcard", at(w.HTTPS, sbxDenyWins, "/hello"), 4, tunnel403(sbxDenyWins, reasonDenyWins)},
		{"http IP literal", at(w.HTTP, sbxIPLiteral, "/hello"), 3, "HTTP 403\n" + refusal(sbxIPLiteral, hp, reasonIP)},
		{"https IP literal", at(w.HTTPS, sbxIPLiteral, "/hello"), 4, tunnel403(sbxIPLiteral, reasonIP)},
		{"http redirect to a denied name", at(w.HTTP, sbxAllowed, "/redirect-denied"), 3, "HTTP 403\n" + refusal(sbxOther, hp, reasonNotAllowed)},
		{"https redirect to a denied name", at(w.HTTPS, sbxAllowed, "/redirect-denied"), 4, tunnel403(sbxOther, reasonNotAllowed)},
	} {
		r := runClient(t, env, "", nil, "python3", "-c", pyFetch, tc.url)
		if r.code != tc.code || r.stdout != tc.stdout {
			t.Errorf("%s: urllib %s: %v\nwant exit %d, stdout %q", tc.name, tc.url, r, tc.code, tc.stdout)
		}
	}
	const n = 64 << 20
	r := runClient(t, env, "", nil, "python3", "-c", pyFetch, at(w.HTTPS, sbxAllowed, fmt.Sprintf("/big?n=%d", n)), "hash")
	if want := fmt.Sprintf("%d %s\n", n, bigSHA256(n)); r.code != 0 || r.stdout != want {
		t.Errorf("64 MiB through CONNECT: %v\nwant %q", r, want)
	}
	if n := w.Hits.Get(sbxOther); n != 0 {
		t.Errorf("the origin answered %s %d times", sbxOther, n)
	}
	wantBlocked(t, p,
		netproxy.Blocked{Host: sbxIPLiteral, Port: atoiPort(t, hp), Count: 1, Reason: reasonIP},
		netproxy.Blocked{Host: sbxIPLiteral, Port: atoiPort(t, sp), Count: 1, Reason: reasonIP},
		netproxy.Blocked{Host: sbxDenyWins, Port: atoiPort(t, sp), Count: 1, Reason: reasonDenyWins},
		netproxy.Blocked{Host: sbxOther, Port: atoiPort(t, hp), Count: 2, Reason: reasonNotAllowed},
		netproxy.Blocked{Host: sbxOther, Port: atoiPort(t, sp), Count: 2, Reason: reasonNotAllowed},
	)
}

// npmEnv is npm's environment: the registry, a fresh cache, no retries
// (a refusal is final), nothing that asks the public registry on its own
// (update notifier, audit, funding).
func npmEnv(t *testing.T, env []string, registry string) []string {
	t.Helper()
	return append(env, "npm_config_registry="+registry, "npm_config_cache="+t.TempDir(),
		"npm_config_fetch_retries=0", "npm_config_update_notifier=false", "npm_config_audit=false",
		"npm_config_fund=false", "npm_config_loglevel=error", "npm_config_userconfig="+filepath.Join(t.TempDir(), "npmrc"))
}

// npmForbidden is npm's report of a refused CONNECT to host for path.
func npmForbidden(w *netWorld, host, reason, path string) string {
	return "npm error 403 403 " + refusedConnect(host, portOf(w.NPM), reason) + " - GET " + at(w.NPM, host, path) + "\n"
}

func TestNetClientNPM(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t)
	p, _ := startSbxProxy(t)
	env := clientEnv(t, p, w)
	np := portOf(w.NPM)
	registry := at(w.NPM, sbxAllowed, "/")

	if r := runClient(t, npmEnv(t, env, registry), "", nil, "npm", "view", sbxNPMPkg, "version"); r.code != 0 || r.stdout != sbxNPMVer+"\n" {
		t.Errorf("npm view: %v", r)
	}
	project := t.TempDir()
	write(t, filepath.Join(project, "package.json"), `{"name":"sbx-project","version":"0.0.0","private":true}`+"\n")
	if r := runClient(t, npmEnv(t, env, registry), project, nil, "npm", "install", sbxNPMPkg); r.code != 0 {
		t.Errorf("npm install: %v", r)
	}
	if r := runClient(t, env, project, nil, "node", "-e", `console.log(require("`+sbxNPMPkg+`"))`); r.code != 0 || r.stdout != "hello from the sbx package\n" {
		t.Errorf("node requiring the installed package: %v", r)
	}

	for _, tc := range []struct {
		name, registry, stderr string
	}{
		{"denied name", at(w.NPM, sbxOther, "/"), npmForbidden(w, sbxOther, reasonNotAllowed, "/"+sbxNPMPkg)},
		{"IP literal", at(w.NPM, sbxIPLiteral, "/"), npmForbidden(w, sbxIPLiteral, reasonIP, "/"+sbxNPMPkg)},
		{"redirect to a denied name", at(w.NPM, sbxAllowed, "/moved/"), npmForbidden(w, sbxOther, reasonNotAllowed, "/"+sbxNPMPkg)},
	} {
		r := runClient(t, npmEnv(t, env, tc.registry), "", nil, "npm", "view", sbxNPMPkg, "version")
		if r.code != 1 || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%s: npm view with registry %s: %v\nwant exit 1 and %q", tc.name, tc.registry, r, tc.stderr)
		}
	}
	// The registry's metadata sends the tarball to a denied name.
	project2 := t.TempDir()
	write(t, filepath.Join(project2, "package.json"), `{"name":"sbx-project","version":"0.0.0","private":true}`+"\n")
	r := runClient(t, npmEnv(t, env, registry), project2, nil, "npm", "install", sbxNPMElsewhere)
	if r.code != 1 || !strings.Contains(r.stderr, npmForbidden(w, sbxOther, reasonNotAllowed, "/"+sbxNPMElsewhere+"/-/"+sbxNPMElsewhere+"-"+sbxNPMVer+".tgz")) {
		t.Errorf("npm install of a package whose tarball is under %s: %v", sbxOther, r)
	}
	wantAbsent(t, filepath.Join(project2, "node_modules", sbxNPMElsewhere))

	if n := w.Hits.Get(sbxOther); n != 0 {
		t.Errorf("the registry answered %s %d times", sbxOther, n)
	}
	wantBlocked(t, p,
		netproxy.Blocked{Host: sbxIPLiteral, Port: atoiPort(t, np), Count: 1, Reason: reasonIP},
		netproxy.Blocked{Host: sbxOther, Port: atoiPort(t, np), Count: 3, Reason: reasonNotAllowed},
	)
}

// proxyVars are the proxy variables of proxyEnv.
var proxyVars = []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy",
	"NO_PROXY", "no_proxy", "npm_config_proxy", "npm_config_https_proxy", "PIP_PROXY", "CARGO_HTTP_PROXY"}

// TestNetClientVariables finds out which proxy variable each client reads:
// each client fetches from the allowed name with one variable of
// proxyEnv alone. Without the proxy the name does not resolve, so a
// success means the client used that variable.
func TestNetClientVariables(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t)
	p, _ := startSbxProxy(t)
	full := clientEnv(t, p, w)
	value := map[string]string{}
	for _, kv := range full {
		k, v, _ := strings.Cut(kv, "=")
		value[k] = v
	}
	only := func(name string) []string {
		env := without(full, proxyVars...)
		if name != "" {
			env = append(env, name+"="+value[name])
		}
		return env
	}
	type client struct {
		name string
		run  func(env []string) (bool, string)
	}
	fetch := func(argv ...string) func(env []string) (bool, string) {
		return func(env []string) (bool, string) {
			r := runClient(t, env, "", nil, argv...)
			return r.code == 0 && r.stdout == helloBody, r.String()
		}
	}
	clients := []client{
		{"curl http", fetch("curl", "-sS", "--max-time", "10", at(w.HTTP, sbxAllowed, "/hello"))},
		{"curl https", fetch("curl", "-sS", "--max-time", "10", at(w.HTTPS, sbxAllowed, "/hello"))},
		{"python http", fetch("python3", "-c", pyFetch, at(w.HTTP, sbxAllowed, "/hello"))},
		{"python https", fetch("python3", "-c", pyFetch, at(w.HTTPS, sbxAllowed, "/hello"))},
		{"git https", func(env []string) (bool, string) {
			r := runClient(t, env, "", nil, "git", "clone", "-q", at(w.Git, sbxAllowed, "/repo.git"), filepath.Join(t.TempDir(), "c"))
			return r.code == 0, r.String()
		}},
		{"go https", func(env []string) (bool, string) {
			r := runClient(t, goEnv(t, env, at(w.GoProxy, sbxAllowed, "")), "", nil, "go", "mod", "download", sbxModule+"@"+sbxModVer)
			return r.code == 0, r.String()
		}},
		{"npm https", func(env []string) (bool, string) {
			r := runClient(t, npmEnv(t, env, at(w.NPM, sbxAllowed, "/")), "", nil, "npm", "view", sbxNPMPkg, "version")
			return r.code == 0 && r.stdout == sbxNPMVer+"\n", r.String()
		}},
	}
	// What the clients here read (curl 7.88, git 2.39, go 1.26, Python
	// 3.11, npm 10): libcurl ignores HTTP_PROXY (httpoxy) and is the only
	// one that reads ALL_PROXY; Go and Python read only their scheme's
	// variable; npm's https-proxy falls back to its proxy setting.
	wantReads := map[string][]string{
		"curl http":    {"http_proxy", "ALL_PROXY", "all_proxy"},
		"curl https":   {"HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"},
		"python http":  {"HTTP_PROXY", "http_proxy"},
		"python https": {"HTTPS_PROXY", "https_proxy"},
		"git https":    {"HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"},
		"go https":     {"HTTPS_PROXY", "https_proxy"},
		"npm https":    {"HTTPS_PROXY", "https_proxy", "npm_config_proxy", "npm_config_https_proxy"},
	}
	vars := []string{"", "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy",
		"npm_config_proxy", "npm_config_https_proxy"}
	for _, c := range clients {
		var reads []string
		for _, v := range vars {
			ok, detail := c.run(only(v))
			if v == "" && ok {
				t.Errorf("%s succeeded without a proxy variable: %s", c.name, detail)
			}
			if ok {
				reads = append(reads, v)
			}
		}
		if fmt.Sprint(reads) != fmt.Sprint(wantReads[c.name]) {
			t.Errorf("%s reads %v, want %v", c.name, reads, wantReads[c.name])
		}
	}
}

// TestNetClientLoopback checks what NO_PROXY does: with proxyEnv's, every
// client reaches 127.0.0.1 directly (the proxy never sees it: under the
// sandbox the network confinement decides, not the proxy); without it,
// the clients that send loopback to the proxy are refused there, and Go
// goes direct anyway (net/http never proxies loopback). And a NO_PROXY
// naming an allowed name would send the client around the proxy, where
// the name does not resolve.
func TestNetClientLoopback(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t)
	p, _ := startSbxProxy(t)
	full := clientEnv(t, p, w)
	type client struct {
		name string
		run  func(env []string, host string) (bool, string)
	}
	clients := []client{
		{"curl", func(env []string, host string) (bool, string) {
			r := runClient(t, env, "", nil, "curl", "-sS", "--max-time", "10", at(w.HTTPS, host, "/hello"))
			return r.code == 0 && r.stdout == helloBody, r.String()
		}},
		{"python", func(env []string, host string) (bool, string) {
			r := runClient(t, env, "", nil, "python3", "-c", pyFetch, at(w.HTTPS, host, "/hello"))
			return r.code == 0 && r.stdout == helloBody, r.String()
		}},
		{"git", func(env []string, host string) (bool, string) {
			r := runClient(t, env, "", nil, "git", "clone", "-q", at(w.Git, host, "/repo.git"), filepath.Join(t.TempDir(), "c"))
			return r.code == 0, r.String()
		}},
		{"go", func(env []string, host string) (bool, string) {
			r := runClient(t, goEnv(t, env, at(w.GoProxy, host, "")), "", nil, "go", "mod", "download", sbxModule+"@"+sbxModVer)
			return r.code == 0, r.String()
		}},
		{"npm", func(env []string, host string) (bool, string) {
			r := runClient(t, npmEnv(t, env, at(w.NPM, host, "/")), "", nil, "npm", "view", sbxNPMPkg, "version")
			return r.code == 0 && r.stdout == sbxNPMVer+"\n", r.String()
		}},
	}
	// Without NO_PROXY, which clients still go direct to 127.0.0.1.
	directAnyway := map[string]bool{"go": true}
	noNoProxy := without(full, "NO_PROXY", "no_proxy")
	for _, c := range clients {
		if ok, detail := c.run(full, "127.0.0.1"); !ok {
			t.Errorf("%s to 127.0.0.1 with NO_PROXY=%s: %s", c.name, sbxNoProxy, detail)
		}
		if got := p.Blocked(); len(got) != 0 {
			t.Errorf("%s to 127.0.0.1 with NO_PROXY=%s reached the proxy: %+v", c.name, sbxNoProxy, got)
		}
	}
	for _, c := range clients {
		if ok, detail := c.run(noNoProxy, "127.0.0.1"); ok != directAnyway[c.name] {
			t.Errorf("%s to 127.0.0.1 without NO_PROXY: success %v, want %v: %s", c.name, ok, directAnyway[c.name], detail)
		}
		misdirected := append(noNoProxy, "NO_PROXY="+sbxAllowed, "no_proxy="+sbxAllowed)
		if ok, detail := c.run(misdirected, sbxAllowed); ok {
			t.Errorf("%s to %s with it in NO_PROXY went through: %s", c.name, sbxAllowed, detail)
		}
	}
	// curl and python asked for the origin, git, npm for theirs.
	wantBlocked(t, p,
		netproxy.Blocked{Host: "127.0.0.1", Port: atoiPort(t, portOf(w.HTTPS)), Count: 2, Reason: reasonIP},
		netproxy.Blocked{Host: "127.0.0.1", Port: atoiPort(t, portOf(w.Git)), Count: 1, Reason: reasonIP},
		netproxy.Blocked{Host: "127.0.0.1", Port: atoiPort(t, portOf(w.NPM)), Count: 1, Reason: reasonIP},
	)
}

// pipEnv is pip's environment: the index, no cache, no retries, no
// version check (which would ask pypi.org on its own).
func pipEnv(env []string, index string) []string {
	return append(env, "PIP_INDEX_URL="+index, "PIP_NO_CACHE_DIR=1", "PIP_RETRIES=0", "PIP_TIMEOUT=10",
		"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "PIP_CONFIG_FILE=/dev/null")
}

func TestNetClientPip(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t)
	p, _ := startSbxProxy(t)
	idx, whl := w.startPyIndex(t)
	env := clientEnv(t, p, w)
	ip := portOf(idx)

	dl := t.TempDir()
	r := runClient(t, pipEnv(env, at(idx, sbxAllowed, "/simple/")), "", nil, "python3", "-m", "pip", "download", "--no-deps", "-d", dl, sbxPyPkg)
	if r.code != 0 {
		t.Fatalf("pip download: %v", r)
	}
	if b, err := os.ReadFile(filepath.Join(dl, sbxPyWheel)); err != nil || !bytes.Equal(b, whl) {
		t.Errorf("pip download: the wheel differs from the index's (%v)", err)
	}
	target := t.TempDir()
	r = runClient(t, pipEnv(env, at(idx, sbxAllowed, "/simple/")), "", nil, "python3", "-m", "pip", "install", "--no-deps", "--target", target, sbxPyPkg)
	if r.code != 0 {
		t.Errorf("pip install: %v", r)
	}
	r = runClient(t, append(env, "PYTHONPATH="+target), "", nil, "python3", "-c", "import sbx_hello; print(sbx_hello.HELLO)")
	if r.code != 0 || r.stdout != "hello from the sbx wheel\n" {
		t.Errorf("importing the installed wheel: %v", r)
	}
	for _, tc := range []struct {
		name, index, host, reason string
	}{
		{"denied name", at(idx, sbxOther, "/simple/"), sbxOther, reasonNotAllowed},
		{"IP literal", at(idx, sbxIPLiteral, "/simple/"), sbxIPLiteral, reasonIP},
		{"redirect to a denied name", at(idx, sbxAllowed, "/moved/simple/"), sbxOther, reasonNotAllowed},
	} {
		dl := t.TempDir()
		// One retry: pip reports a failed fetch only in the warning
		// of a retry (by default it retries 5 times, backing off).
		r := runClient(t, append(pipEnv(env, tc.index), "PIP_RETRIES=1"), "", nil, "python3", "-m", "pip", "download", "--no-deps", "-d", dl, sbxPyPkg)
		want := "Tunnel connection failed: 403 " + refusedConnect(tc.host, ip, tc.reason)
		if r.code != 1 || !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("%s: pip download from %s: %v\nwant exit 1 and %q", tc.name, tc.index, r, want)
		}
	}
	// pip reads PIP_PROXY (its --proxy) and, through requests, HTTPS_PROXY.
	for _, v := range []string{"PIP_PROXY", "HTTPS_PROXY", ""} {
		only := without(env, proxyVars...)
		if v != "" {
			only = append(only, v+"=http://"+p.Addr().String())
		}
		r := runClient(t, pipEnv(only, at(idx, sbxAllowed, "/simple/")), "", nil, "python3", "-m", "pip", "download", "--no-deps", "-d", t.TempDir(), sbxPyPkg)
		if (r.code == 0) != (v != "") {
			t.Errorf("pip download with only %q of the proxy variables: %v", v, r)
		}
	}
	if n := w.Hits.Get(sbxOther); n != 0 {
		t.Errorf("the index answered %s %d times", sbxOther, n)
	}
	// Each refusal twice: the try and the retry.
	wantBlocked(t, p,
		netproxy.Blocked{Host: sbxIPLiteral, Port: atoiPort(t, ip), Count: 2, Reason: reasonIP},
		netproxy.Blocked{Host: sbxOther, Port: atoiPort(t, ip), Count: 4, Reason: reasonNotAllowed},
	)
}

// cargoEnv is cargo's environment: a fresh CARGO_HOME, the sbx registry,
// no retries.
// The toolchains stay the user's (RUSTUP_HOME): rustup's cargo proxy
// finds nothing under the fresh HOME.
func cargoEnv(t *testing.T, env []string, w *netWorld, index string) (cargoHome string, _ []string) {
	t.Helper()
	rustup := os.Getenv("RUSTUP_HOME")
	if rustup == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		rustup = filepath.Join(home, ".rustup")
	}
	cargoHome = t.TempDir()
	return cargoHome, append(env, "CARGO_HOME="+cargoHome, "RUSTUP_HOME="+rustup, "CARGO_REGISTRIES_SBX_INDEX=sparse+"+index,
		"CARGO_NET_RETRY=0", "CARGO_TERM_COLOR=never")
}

// cargoProject is a crate that depends on sbx-hello from the sbx registry.
func cargoProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "Cargo.toml"), "[package]\nname = \"sbx-project\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\n"+
		sbxCrate+" = { version = \""+sbxCrateVer+"\", registry = \"sbx\" }\n")
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "src", "main.rs"), "fn main() { println!(\"{}\", sbx_hello::hello()); }\n")
	return dir
}

func TestNetClientCargo(t *testing.T) {
	t.Parallel()
	// Not one of the clients every run must have: scripts/test's
	// unprivileged user has no Rust toolchain.
	if _, err := exec.LookPath("cargo"); err != nil {
		t.Skipf("cargo is not on PATH (%v): the cargo registry check needs a Rust toolchain", err)
	}
	w := newNetWorld(t)
	p, _ := startSbxProxy(t)
	reg, crate := w.startCargoRegistry(t)
	env := clientEnv(t, p, w)
	cp := portOf(reg)

	cargoHome, cenv := cargoEnv(t, env, w, at(reg, sbxAllowed, "/index/"))
	dir := cargoProject(t)
	r := runClient(t, cenv, dir, nil, "cargo", "fetch")
	if r.code != 0 {
		t.Fatalf("cargo fetch: %v", r)
	}
	cached, _ := filepath.Glob(filepath.Join(cargoHome, "registry", "cache", "*", sbxCrate+"-"+sbxCrateVer+".crate"))
	if len(cached) != 1 {
		t.Fatalf("cargo fetch left %v in its cache", cached)
	}
	if b, err := os.ReadFile(cached[0]); err != nil || !bytes.Equal(b, crate) {
		t.Errorf("the cached crate differs from the registry's (%v)", err)
	}
	for _, tc := range []struct {
		name, index, host string
	}{
		{"denied name", at(reg, sbxOther, "/index/"), sbxOther},
		{"IP literal", at(reg, sbxIPLiteral, "/index/"), sbxIPLiteral},
		{"redirect to a denied name", at(reg, sbxAllowed, "/moved/index/"), sbxOther},
	} {
		_, cenv := cargoEnv(t, env, w, tc.index)
		r := runClient(t, cenv, cargoProject(t), nil, "cargo", "fetch")
		// Cargo's wording of the failed fetch differs between versions
		// (rustup's 1.95 names the URL, Debian's 1.96 only config.json);
		// curl's refusal is the same, and the proxy's record below names
		// the host.
		want := "[56] Failure when receiving data from the peer (CONNECT tunnel failed, response 403)\n"
		if r.code != 101 || !strings.Contains(r.stderr, "config.json") || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: cargo fetch from %s: %v\nwant exit 101, config.json and %q", tc.name, tc.index, r, want)
		}
	}
	var reads []string
	for _, v := range []string{"", "CARGO_HTTP_PROXY", "HTTPS_PROXY", "https_proxy", "http_proxy", "HTTP_PROXY", "ALL_PROXY", "all_proxy"} {
		only := without(env, proxyVars...)
		if v != "" {
			only = append(only, v+"=http://"+p.Addr().String())
		}
		_, cenv := cargoEnv(t, only, w, at(reg, sbxAllowed, "/index/"))
		if r := runClient(t, cenv, cargoProject(t), nil, "cargo", "fetch"); r.code == 0 {
			reads = append(reads, v)
		}
	}
	// cargo's libcurl: its own http.proxy, then the libcurl variables
	// (no HTTP_PROXY, and http_proxy is not for https://).
	if want := "[CARGO_HTTP_PROXY HTTPS_PROXY https_proxy ALL_PROXY all_proxy]"; fmt.Sprint(reads) != want {
		t.Errorf("cargo reads %v, want %s", reads, want)
	}
	if n := w.Hits.Get(sbxOther); n != 0 {
		t.Errorf("the registry answered %s %d times", sbxOther, n)
	}
	wantBlocked(t, p,
		netproxy.Blocked{Host: sbxIPLiteral, Port: atoiPort(t, cp), Count: 1, Reason: reasonIP},
		netproxy.Blocked{Host: sbxOther, Port: atoiPort(t, cp), Count: 2, Reason: reasonNotAllowed},
	)
}

// pyRequests fetches argv[1] with requests (HTTPS_PROXY, REQUESTS_CA_BUNDLE).
const pyRequests = `
import sys, requests
try:
    r = requests.get(sys.argv[1], timeout=20)
    sys.stdout.write("HTTP %d\n%s" % (r.status_code, r.text))
except requests.exceptions.RequestException as e:
    sys.stdout.write("%s: %s\n" % (type(e).__name__, e))
    sys.exit(4)
`

// nodeFetch fetches argv[1] with node's built-in fetch (undici) and then
// https.get: neither reads the proxy variables (node 20).
const nodeFetch = `
const u = process.argv[1];
fetch(u).then(r => r.text()).then(b => process.stdout.write("fetch: " + b),
  e => process.stdout.write("fetch: " + (e.cause ? e.cause.code : e.message) + "\n")).then(() => {
  require("https").get(u, r => { let b = ""; r.on("data", d => b += d); r.on("end", () => process.stdout.write("https.get: " + b)); })
    .on("error", e => process.stdout.write("https.get: " + e.code + "\n"));
});
`

// TestNetClientOthers records what other clients an agent runs do with
// proxyEnv: wget and requests use it; node's own fetch and https do not
// (so a node script fails to resolve the name, and under the sandbox
// could reach nothing).
func TestNetClientOthers(t *testing.T) {
	t.Parallel()
	w := newNetWorld(t)
	p, _ := startSbxProxy(t)
	env := clientEnv(t, p, w)
	hp, sp := portOf(w.HTTP), portOf(w.HTTPS)
	wget := func(u string) []string {
		return []string{"wget", "-nv", "-O", "-", "--ca-certificate=" + w.CA.File, u}
	}
	for _, tc := range []struct {
		argv           []string
		code           int
		stdout, stderr string
	}{
		{wget(at(w.HTTP, sbxAllowed, "/hello")), 0, helloBody, ""},
		{wget(at(w.HTTPS, sbxAllowed, "/hello")), 0, helloBody, ""},
		{wget(at(w.HTTP, sbxOther, "/hello")), 8, "", "ERROR 403: " + refusedConnect(sbxOther, hp, reasonNotAllowed) + ".\n"},
		{wget(at(w.HTTPS, sbxOther, "/hello")), 4, "", "Proxy tunneling failed: " + refusedConnect(sbxOther, sp, reasonNotAllowed)},
		{[]string{"python3", "-c", pyRequests, at(w.HTTPS, sbxAllowed, "/hello")}, 0, "HTTP 200\n" + helloBody, ""},
		{[]string{"python3", "-c", pyRequests, at(w.HTTP, sbxOther, "/hello")}, 0, "HTTP 403\n" + refusal(sbxOther, hp, reasonNotAllowed), ""},
		// (urllib3's wording around it differs between versions.)
		{[]string{"python3", "-c", pyRequests, at(w.HTTPS, sbxOther, "/hello")}, 4,
			"Tunnel connection failed: 403 " + refusedConnect(sbxOther, sp, reasonNotAllowed), ""},
		{[]string{"node", "-e", nodeFetch, at(w.HTTPS, sbxAllowed, "/hello")}, 0, "fetch: ENOTFOUND\nhttps.get: ENOTFOUND\n", ""},
	} {
		r := runClient(t, env, "", nil, tc.argv...)
		stdoutOK := r.stdout == tc.stdout
		if tc.code == 4 && tc.argv[0] == "python3" {
			stdoutOK = strings.HasPrefix(r.stdout, "ProxyError: HTTPSConnectionPool(host='"+sbxOther+"', port="+sp+")") && strings.Contains(r.stdout, tc.stdout)
		}
		if r.code != tc.code || !stdoutOK || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%s %s: %v\nwant exit %d, stdout %q, stderr with %q", tc.argv[0], tc.argv[len(tc.argv)-1], r, tc.code, tc.stdout, tc.stderr)
		}
	}
	wantBlocked(t, p,
		netproxy.Blocked{Host: sbxOther, Port: atoiPort(t, hp), Count: 2, Reason: reasonNotAllowed},
		netproxy.Blocked{Host: sbxOther, Port: atoiPort(t, sp), Count: 2, Reason: reasonNotAllowed},
	)
	if n := w.Hits.Get(sbxOther); n != 0 {
		t.Errorf("the origin answered %s %d times", sbxOther, n)
	}
}
