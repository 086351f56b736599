//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// loopbackNames is a resolver for test names: each resolves to 127.0.0.1,
// every other name fails, so nothing here reaches a real resolver.
type loopbackNames []string

func (l loopbackNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	for _, n := range l {
		if strings.EqualFold(strings.TrimSuffix(host, "."), n) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
	}
	return nil, &net.DNSError{Err: "no such test name", Name: host, IsNotFound: true}
}

// origin is an HTTP server on the host's loopback that counts its requests.
type origin struct {
	port int
	mu   sync.Mutex
	hits int
}

func newOrigin(t *testing.T, body string) *origin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &origin{port: ln.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits++
		o.mu.Unlock()
		io.WriteString(w, body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return o
}

func (o *origin) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits
}

// proxiedSbx is s with a provider whose proxy resolves the test names.
func proxiedSbx(t *testing.T, runner string) *sbx {
	s := newSbx(t, runner)
	s.p = sandbox.New(sandbox.Config{Runners: []string{runner}, Resolver: loopbackNames{"allowed.sbx.test", "denied.sbx.test", "rebind.sbx.test", "other.sbx.test"}})
	return s
}

// curl runs curl in the sandbox and returns its stdout (the body, then the
// HTTP status) and exit status.
func (s *sbx) curl(pol sandbox.Policy, args ...string) (string, int, *sandbox.Wrapped) {
	s.t.Helper()
	w := s.wrap(pol, append([]string{"curl", "-sS", "--max-time", "10", "-w", " %{http_code}"}, args...)...)
	r := s.spawn(w, nil)
	return strings.TrimSpace(r.stdout), r.code, w
}

// TestProxiedNetwork: under the proxied network an allowed name is reached
// through the proxy the command's environment points at; a denied name, a
// name not allowed, an IP literal and a name that resolves to loopback
// (rebinding) are refused with the proxy's 403, and reported; a connect
// that ignores the proxy, UDP (DNS to an outside resolver), a listening
// socket and a TCP Fast Open connect are refused by the kernel.
func TestProxiedNetwork(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed for this test")
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		s = proxiedSbx(t, s.runner)
		o := newOrigin(t, "hello from origin")
		port := strconv.Itoa(o.port)
		pol := s.policy()
		pol.Network = sandbox.NetworkProxied
		pol.AllowDomains = []string{"allowed.sbx.test", "rebind.sbx.test:" + port}
		pol.DenyDomains = []string{"denied.sbx.test"}
		pol.AllowPrivateDestinations = true // the test names resolve to loopback

		out, code, w := s.curl(pol, "http://allowed.sbx.test:"+port+"/hello")
		if code != 0 || out != "hello from origin 200" {
			t.Fatalf("the allowed name through the proxy: exit %d, %q", code, out)
		}
		if w.Network != sandbox.NetworkProxied || !strings.HasPrefix(w.Proxy, "http://127.0.0.1:") {
			t.Errorf("the wrap says network %q, proxy %q", w.Network, w.Proxy)
		}
		hits := o.count()
		for _, c := range []struct{ what, url string }{
			{"a denied name", "http://denied.sbx.test:" + port + "/"},
			{"a name not allowed", "http://other.sbx.test:" + port + "/"},
		} {
			out, code, w := s.curl(pol, c.url)
			if code != 0 || !strings.Contains(out, "blocked by the sandbox policy") || !strings.HasSuffix(out, " 403") {
				t.Errorf("%s: exit %d, %q; want the proxy's 403", c.what, code, out)
			}
			if b := w.Blocked(); len(b) != 1 || b[0].Port != o.port || b[0].Count != 1 {
				t.Errorf("%s: blocked %+v", c.what, b)
			}
		}
		out, code, w = s.curl(pol, "--noproxy", "", "http://127.0.0.1:"+port+"/")
		if code != 0 || !strings.HasSuffix(out, " 403") {
			t.Errorf("an IP literal through the proxy: exit %d, %q; want 403", code, out)
		}
		if b := w.Blocked(); len(b) != 1 || b[0].Host != "127.0.0.1" {
			t.Errorf("IP literal: blocked %+v", b)
		}
		if o.count() != hits {
			t.Errorf("the origin got %d requests that the proxy should have refused", o.count()-hits)
		}

		// Rebinding: an allowed name that resolves to loopback is refused
		// unless private destinations are allowed (the control above).
		strict := pol
		strict.AllowPrivateDestinations = false
		out, code, w = s.curl(strict, "http://rebind.sbx.test:"+port+"/")
		if code != 0 || !strings.HasSuffix(out, " 403") {
			t.Errorf("a name resolving to loopback: exit %d, %q; want 403", code, out)
		}
		if b := w.Blocked(); len(b) != 1 || b[0].Host != "rebind.sbx.test" || !strings.Contains(b[0].Reason, "127.0.0.1") {
			t.Errorf("rebinding: blocked %+v", b)
		}
		if out, code, _ := s.curl(pol, "http://rebind.sbx.test:"+port+"/"); code != 0 || out != "hello from origin 200" {
			t.Errorf("control, the same name with private destinations allowed: exit %d, %q", code, out)
		}

		// Around the proxy: the kernel refuses.
		direct := s.tool(pol, "connect-tcp", "127.0.0.1:"+port)
		wantDenied(t, "a direct connect to the origin", direct, "EACCES", "ECONNREFUSED")
		wantDenied(t, "UDP to an outside resolver", s.tool(pol, "send-udp", "192.0.2.53:53"), "EACCES", "ENETUNREACH")
		wantDenied(t, "TCP Fast Open", s.tool(pol, "fastopen", "192.0.2.1", port), "EACCES", "ENETUNREACH")
		if s.traits().ownNetwork {
			// Its own network namespace: listening there reaches nobody.
			wantOK(t, "listen in the sandbox's own network", s.tool(pol, "listen-tcp"))
		} else {
			wantDenied(t, "listen on the host's network", s.tool(pol, "listen-tcp"), "EACCES")
		}
		if o.count() != hits+1 {
			t.Errorf("the origin got %d more requests, want the 1 allowed one (the rebinding control)", o.count()-hits)
		}
		// Controls: the same direct connect and UDP work unconfined.
		wantOK(t, "control: a direct connect unconfined", hostTool(t, "connect-tcp", "127.0.0.1:"+port))
	})
}

// TestProxiedReport: the enforcement reported for the proxied network: the
// namespaces runner holds it completely (its own network namespace); the
// landlock runner names the port rule's gap. RequireFull under landlock is
// refused, never run with a wider network.
func TestProxiedReport(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		s = proxiedSbx(t, s.runner)
		pol := s.policy()
		pol.Network = sandbox.NetworkProxied
		pol.AllowDomains = []string{"allowed.sbx.test"}
		pol.AllowLocalPorts = []int{5432}
		w := s.wrap(pol, "true")
		var portGap string
		for _, g := range w.Gaps {
			if g.Area == "net" {
				portGap = g.Reason
			}
		}
		if s.traits().ownNetwork {
			if portGap != "" {
				t.Errorf("namespaces: a network gap %q", portGap)
			}
			return
		}
		proxyPort := strings.TrimPrefix(w.Proxy, "http://127.0.0.1:")
		if !strings.Contains(portGap, "port "+proxyPort+", 5432") || !strings.Contains(portGap, "every address") {
			t.Errorf("landlock: the port gap %q does not name the proxy's port %s and 5432", portGap, proxyPort)
		}
		pol.RequireFull = true
		if _, err := s.p.Wrap(t.Context(), sandboxRequest(pol, "true")); !errors.Is(err, sandbox.ErrUnavailable) {
			t.Errorf("landlock with RequireFull: %v, want SANDBOX_UNAVAILABLE", err)
		}
	})
}

// TestAllowLocalPorts: an allowed port on the host's loopback is reachable
// directly (under network deny, and proxied); another port is not.
func TestAllowLocalPorts(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		allowed, other := newOrigin(t, "dev server"), newOrigin(t, "database")
		for _, mode := range []sandbox.NetworkMode{sandbox.NetworkDeny, sandbox.NetworkProxied} {
			pol := s.policy()
			pol.Network = mode
			pol.AllowLocalPorts = []int{allowed.port}
			addr := "127.0.0.1:" + strconv.Itoa(allowed.port)
			wantOK(t, fmt.Sprintf("%s: connect to the allowed local port", mode), s.tool(pol, "connect-tcp", addr))
			out, code, _ := s.curl(pol, "http://"+addr+"/")
			if code != 0 || out != "dev server 200" {
				t.Errorf("%s: curl to the allowed local port: exit %d, %q", mode, code, out)
			}
			wantDenied(t, fmt.Sprintf("%s: another local port", mode), s.tool(pol, "connect-tcp", "127.0.0.1:"+strconv.Itoa(other.port)), "EACCES", "ECONNREFUSED")
		}
		if other.count() != 0 {
			t.Errorf("the port not allowed got %d requests", other.count())
		}
		if allowed.count() != 2 {
			t.Errorf("the allowed port got %d requests, want 2", allowed.count())
		}
		// Control: without the port allowed, it is out of reach too.
		wantDenied(t, "the same port not allowed", s.tool(s.policy(), "connect-tcp", "127.0.0.1:"+strconv.Itoa(allowed.port)), "EACCES", "ECONNREFUSED")
	})
}

// TestCLIProxied: --allow-domain selects the proxied network; an allowed
// destination works, a refused one is named after the run on stderr and in
// the report's outcome.
func TestCLIProxied(t *testing.T) {
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			o := newOrigin(t, "via the cli")
			allowed := "127.0.0.1:" + strconv.Itoa(o.port)
			report := s.base + "/report.json"
			script := `curl -sS --noproxy '' -w ' %{http_code}\n' http://` + allowed + `/; curl -sS --noproxy '' -o /dev/null -w '%{http_code}\n' http://127.0.0.2:` + strconv.Itoa(o.port) + `/`
			out, errs, code := cli(t, s.ws, "--runner", runner, "--allow-domain", allowed, "--allow-private-destinations", "--json-report", report, "--", "/bin/sh", "-c", script)
			if code != 0 || out != "via the cli 200\n403\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
			}
			if !strings.Contains(errs, "sandbox-run: note: the domain proxy refused \"127.0.0.2\" port "+strconv.Itoa(o.port)+" (once: ") {
				t.Errorf("stderr does not name the refused destination: %q", errs)
			}
			var rep struct {
				Policy  sandbox.Policy  `json:"policy"`
				Outcome sandbox.Outcome `json:"outcome"`
			}
			readJSON(t, report, &rep)
			if rep.Policy.Network != sandbox.NetworkProxied || len(rep.Outcome.Blocked) != 1 || rep.Outcome.Blocked[0].Host != "127.0.0.2" ||
				len(rep.Outcome.Refusals) != 1 || rep.Outcome.Refusals[0].Target != "127.0.0.2:"+strconv.Itoa(o.port) {
				t.Errorf("report: policy %+v, outcome %+v", rep.Policy, rep.Outcome)
			}
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, v) != nil {
		t.Fatalf("%s: %v %s", path, err, b)
	}
}
