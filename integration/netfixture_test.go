//go:build linux

package integration

// Fixtures for the proxied network mode: a throwaway CA, HTTP and HTTPS
// origins, a git smart-HTTP server, a Go module proxy and an npm registry,
// all on 127.0.0.1 under test names (*.sbx.test) that only sbxResolver
// knows, so a client can reach them through the domain proxy and through
// nothing else (a direct connection cannot even resolve the name).

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"hash"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/internal/netproxy"
)

// The test names. The proxy of startSbxProxy allows sbxAllowed and the
// names beneath sbxWildcard, denies sbxDenyWins although the wildcard
// covers it, and does not allow sbxOther; all of them resolve (through
// sbxResolver only) to 127.0.0.1 and are in the origins' certificate.
const (
	sbxAllowed  = "allowed.sbx.test"
	sbxOther    = "other.sbx.test"
	sbxWildcard = "*.pkg.sbx.test"
	sbxUnder    = "a.pkg.sbx.test"
	sbxDenyWins = "deny.pkg.sbx.test"
	// sbxIPLiteral is a documentation address (TEST-NET-1) no client
	// treats as local: the proxy must refuse it as an IP literal before
	// dialling it.
	sbxIPLiteral = "192.0.2.1"
	helloBody    = "hello from the sbx test origin\n"
	sbxModule    = "allowed.sbx.test/hello"
	sbxModVer    = "v1.0.0"
	sbxNPMPkg    = "sbx-hello"
	sbxNPMVer    = "1.0.0"
	// sbxNPMElsewhere is a package whose tarball URL names sbxOther.
	sbxNPMElsewhere = "sbx-elsewhere"
)

// sbxResolver is the proxy's resolver: sbx.test and every name beneath it
// are 127.0.0.1, every other name does not exist. It records what it was
// asked.
type sbxResolver struct {
	mu    sync.Mutex
	asked []string
}

func (r *sbxResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.asked = append(r.asked, host)
	r.mu.Unlock()
	if host == "sbx.test" || strings.HasSuffix(host, ".sbx.test") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// Asked returns the names looked up so far, in order.
func (r *sbxResolver) Asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

var _ netproxy.Resolver = (*sbxResolver)(nil)

// sbxRules are the rules of the proxy the client checks go through.
func sbxRules(t testing.TB) netproxy.Rules {
	t.Helper()
	var r netproxy.Rules
	for _, s := range []string{sbxAllowed, sbxWildcard} {
		p, err := netproxy.ParsePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		r.Allow = append(r.Allow, p)
	}
	p, err := netproxy.ParsePattern(sbxDenyWins)
	if err != nil {
		t.Fatal(err)
	}
	r.Deny = []netproxy.Pattern{p}
	// The names resolve to loopback.
	r.AllowPrivate = true
	return r
}

// startSbxProxy starts a domain proxy with sbxRules and a fresh
// sbxResolver, closed at cleanup.
func startSbxProxy(t testing.TB) (*netproxy.Proxy, *sbxResolver) {
	t.Helper()
	res := &sbxResolver{}
	p, err := netproxy.Start(netproxy.Config{Rules: sbxRules(t), Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, res
}

// testCA is a certificate authority made for one test run.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// File is the CA certificate in PEM, in a test's temp dir.
	File string
	Pool *x509.CertPool
}

func newTestCA(t testing.TB) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "sandbox-local throwaway test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "sbx-test-ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, File: file, Pool: pool}
}

// leaf issues a server certificate for the test names and 127.0.0.1.
func (ca *testCA) leaf(t testing.TB) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: sbxAllowed},
		DNSNames:     []string{sbxAllowed, sbxOther, sbxWildcard},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(sbxIPLiteral)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key}
}

// hostHits counts the requests a server answered by the name in their
// Host header (port dropped).
type hostHits struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *hostHits) add(r *http.Request) {
	name := r.Host
	if hn, _, err := net.SplitHostPort(name); err == nil {
		name = hn
	}
	h.mu.Lock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	h.n[name]++
	h.mu.Unlock()
}

// Get is how many requests named host.
func (h *hostHits) Get(host string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[host]
}

// netWorld is every origin a client check needs.
type netWorld struct {
	CA *testCA
	// HTTP and HTTPS are the origin (/hello, /redirect-denied, /big?n=,
	// /upload answering the body's length and SHA-256).
	HTTP, HTTPS *httptest.Server
	// Git serves /repo.git by smart HTTP; /moved/... redirects to sbxOther.
	Git *httptest.Server
	// GitHead is the commit repo.git's main branch points at first, and
	// GitRepo the bare repository (it accepts pushes).
	GitHead, GitRepo string
	// GoProxy serves sbxModule at sbxModVer; /moved/... redirects to sbxOther.
	GoProxy *httptest.Server
	// NPM serves sbxNPMPkg and sbxNPMElsewhere; /moved/... redirects.
	NPM *httptest.Server
	// Hits counts every server's requests by name.
	Hits *hostHits
	// ModZip is the module zip, and ModSum and ModGoModSum its go.sum hashes.
	ModZip              []byte
	ModSum, ModGoModSum string
	// NPMTgz is the package tarball.
	NPMTgz []byte
}

// newNetWorld starts every fixture; all are closed at cleanup.
func newNetWorld(t *testing.T) *netWorld {
	t.Helper()
	w := &netWorld{CA: newTestCA(t), Hits: &hostHits{}}
	leaf := w.CA.leaf(t)
	startTLS := func(h http.Handler) *httptest.Server {
		s := httptest.NewUnstartedServer(w.counted(h))
		s.TLS = &tls.Config{Certificates: []tls.Certificate{leaf}}
		// HTTP/2 where the client offers it (through a tunnel, too).
		s.EnableHTTP2 = true
		s.StartTLS()
		t.Cleanup(s.Close)
		return s
	}
	w.HTTP = httptest.NewServer(w.counted(http.HandlerFunc(originHandler)))
	t.Cleanup(w.HTTP.Close)
	w.HTTPS = startTLS(http.HandlerFunc(originHandler))
	w.Git = startTLS(w.gitHandler(t))
	w.GoProxy = startTLS(w.goProxyHandler(t))
	w.NPM = startTLS(w.npmHandler(t))
	return w
}

func (w *netWorld) counted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.Hits.add(r)
		h.ServeHTTP(rw, r)
	})
}

// portOf is a test server's port.
func portOf(s *httptest.Server) string {
	u, err := url.Parse(s.URL)
	if err != nil {
		panic(err)
	}
	return u.Port()
}

// at is the URL of path on s under the name host.
func at(s *httptest.Server, host, path string) string {
	scheme := "http"
	if s.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, portOf(s)) + path
}

func schemeOf(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// redirectToOther sends the client to the same port under sbxOther.
func redirectToOther(rw http.ResponseWriter, r *http.Request, path string) {
	_, port, _ := net.SplitHostPort(r.Host)
	http.Redirect(rw, r, schemeOf(r)+"://"+net.JoinHostPort(sbxOther, port)+path, http.StatusFound)
}

func originHandler(rw http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/hello":
		rw.Header().Set("Content-Type", "text/plain")
		io.WriteString(rw, helloBody)
	case "/redirect-denied":
		redirectToOther(rw, r, "/hello")
	case "/upload":
		// The length and SHA-256 of the request body.
		c := newCountingHash()
		if _, err := io.Copy(c, r.Body); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(rw, "%d %s\n", c.n, c.Sum())
	case "/big":
		n, err := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
		if err != nil || n < 0 {
			http.Error(rw, "n", http.StatusBadRequest)
			return
		}
		rw.Header().Set("Content-Type", "application/octet-stream")
		rw.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		io.Copy(rw, bigStream(n))
	default:
		http.NotFound(rw, r)
	}
}

// bigStream is the deterministic content of /big?n=.
func bigStream(n int64) io.Reader {
	var seed [32]byte
	copy(seed[:], "sandbox-local big download seed")
	return io.LimitReader(mrand.NewChaCha8(seed), n)
}

var bigHashes sync.Map

// bigSHA256 is the hex SHA-256 of bigStream(n).
func bigSHA256(n int64) string {
	if v, ok := bigHashes.Load(n); ok {
		return v.(string)
	}
	h := sha256.New()
	io.Copy(h, bigStream(n))
	s := hex.EncodeToString(h.Sum(nil))
	bigHashes.Store(n, s)
	return s
}

// countingHash counts and hashes what is written to it.
type countingHash struct {
	n int64
	h hash.Hash
}

func newCountingHash() *countingHash { return &countingHash{h: sha256.New()} }

func (c *countingHash) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return c.h.Write(b)
}

func (c *countingHash) Sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

// hostOnlyEnv is what fixture commands (git while building the repo) run
// with: no proxy, no user configuration.
func hostOnlyEnv(home string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C", "GIT_CONFIG_NOSYSTEM=1"}, gitIdentity...)
}

// gitIdentity is who commits in the git fixtures and checks.
var gitIdentity = []string{"GIT_AUTHOR_NAME=sbx", "GIT_AUTHOR_EMAIL=sbx@sbx.test", "GIT_COMMITTER_NAME=sbx",
	"GIT_COMMITTER_EMAIL=sbx@sbx.test", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z",
	"GIT_COMMITTER_DATE=2026-01-01T00:00:00Z"}

// gitHandler builds a bare repository with one commit and serves it with
// git http-backend.
func (w *netWorld) gitHandler(t *testing.T) http.Handler {
	t.Helper()
	root := t.TempDir()
	home := t.TempDir()
	work := filepath.Join(t.TempDir(), "work")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = hostOnlyEnv(home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(root, "init", "-q", "--bare", "-b", "main", "repo.git")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	git(work, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(work, "README"), []byte(helloBody), 0o644); err != nil {
		t.Fatal(err)
	}
	git(work, "add", "README")
	git(work, "commit", "-q", "-m", "one commit")
	git(work, "push", "-q", filepath.Join(root, "repo.git"), "main")
	w.GitHead = git(work, "rev-parse", "HEAD")
	// Pushes too, without authentication.
	git(filepath.Join(root, "repo.git"), "config", "http.receivepack", "true")
	w.GitRepo = filepath.Join(root, "repo.git")
	execPath := git(root, "--exec-path")
	backend := &cgi.Handler{
		Path: filepath.Join(execPath, "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"},
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/moved"); ok {
			redirectToOther(rw, r, rest+queryOf(r))
			return
		}
		backend.ServeHTTP(rw, r)
	})
}

func queryOf(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	return "?" + r.URL.RawQuery
}

// moduleFiles are the files of sbxModule at sbxModVer.
var moduleFiles = map[string]string{
	"go.mod":   "module " + sbxModule + "\n\ngo 1.21\n",
	"hello.go": "package hello\n\n// Hello says hello.\nfunc Hello() string { return \"hello from the sbx module\" }\n",
}

// hash1 is golang.org/x/mod/sumdb/dirhash.Hash1 of files (name -> content).
func hash1(files map[string]string) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%x  %s\n", sha256.Sum256([]byte(files[n])), n)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// goProxyHandler serves the GOPROXY protocol for sbxModule: list, info,
// mod, zip and latest. The zip follows the module zip rules by hand (every
// file under module@version/, files only, no vendor or nested modules).
func (w *netWorld) goProxyHandler(t *testing.T) http.Handler {
	t.Helper()
	prefix := sbxModule + "@" + sbxModVer + "/"
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	inZip := map[string]string{}
	names := []string{"go.mod", "hello.go"}
	for _, n := range names {
		f, err := zw.Create(prefix + n)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, moduleFiles[n])
		inZip[prefix+n] = moduleFiles[n]
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	w.ModZip = buf.Bytes()
	w.ModSum = hash1(inZip)
	w.ModGoModSum = hash1(map[string]string{"go.mod": moduleFiles["go.mod"]})
	info := fmt.Sprintf(`{"Version":%q,"Time":"2026-01-01T00:00:00Z"}`, sbxModVer)
	base := "/" + sbxModule + "/@v/"
	files := map[string]struct {
		ctype, body string
	}{
		base + "list":                {"text/plain", sbxModVer + "\n"},
		base + sbxModVer + ".info":   {"application/json", info},
		base + sbxModVer + ".mod":    {"text/plain", moduleFiles["go.mod"]},
		base + sbxModVer + ".zip":    {"application/zip", string(w.ModZip)},
		"/" + sbxModule + "/@latest": {"application/json", info},
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/moved"); ok {
			redirectToOther(rw, r, rest)
			return
		}
		f, ok := files[r.URL.Path]
		if !ok {
			http.Error(rw, "not found: "+r.URL.Path, http.StatusNotFound)
			return
		}
		rw.Header().Set("Content-Type", f.ctype)
		io.WriteString(rw, f.body)
	})
}

// npmTarball is a package tarball: package/package.json and package/index.js.
func npmTarball(t testing.TB, name, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	files := []struct{ name, body string }{
		{"package/package.json", fmt.Sprintf(`{"name":%q,"version":%q,"main":"index.js"}`+"\n", name, version)},
		{"package/index.js", "module.exports = \"hello from the sbx package\";\n"},
	}
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), ModTime: time.Unix(1767225600, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, f.body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// npmHandler is a registry with two packages: sbxNPMPkg, its tarball on the
// registry itself, and sbxNPMElsewhere, its tarball under sbxOther.
func (w *netWorld) npmHandler(t *testing.T) http.Handler {
	t.Helper()
	w.NPMTgz = npmTarball(t, sbxNPMPkg, sbxNPMVer)
	elsewhere := npmTarball(t, sbxNPMElsewhere, sbxNPMVer)
	tgzs := map[string][]byte{sbxNPMPkg: w.NPMTgz, sbxNPMElsewhere: elsewhere}
	packument := func(r *http.Request, name string) []byte {
		tgz := tgzs[name]
		host := r.Host
		if name == sbxNPMElsewhere {
			_, port, _ := net.SplitHostPort(r.Host)
			host = net.JoinHostPort(sbxOther, port)
		}
		s1 := sha1.Sum(tgz)
		s512 := sha512.Sum512(tgz)
		v := map[string]any{
			"name":      name,
			"dist-tags": map[string]string{"latest": sbxNPMVer},
			"versions": map[string]any{
				sbxNPMVer: map[string]any{
					"name":    name,
					"version": sbxNPMVer,
					"main":    "index.js",
					"dist": map[string]string{
						"tarball":   "https://" + host + "/" + name + "/-/" + name + "-" + sbxNPMVer + ".tgz",
						"shasum":    hex.EncodeToString(s1[:]),
						"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:]),
					},
				},
			},
		}
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return b
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/moved"); ok {
			redirectToOther(rw, r, rest)
			return
		}
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		switch {
		case len(parts) == 1 && tgzs[parts[0]] != nil:
			rw.Header().Set("Content-Type", "application/json")
			rw.Write(packument(r, parts[0]))
		case len(parts) == 3 && tgzs[parts[0]] != nil && parts[1] == "-" && parts[2] == parts[0]+"-"+sbxNPMVer+".tgz":
			rw.Header().Set("Content-Type", "application/octet-stream")
			rw.Write(tgzs[parts[0]])
		default:
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusNotFound)
			io.WriteString(rw, `{"error":"not found"}`)
		}
	})
}
