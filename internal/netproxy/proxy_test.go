package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mapResolver resolves test names from a table; anything else fails.
type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func loop() []netip.Addr { return []netip.Addr{netip.MustParseAddr("127.0.0.1")} }

func startProxy(t testing.TB, r Rules) *Proxy {
	t.Helper()
	p, err := Start(Config{Rules: r, Resolver: mapResolver{
		"allowed.test": loop(), "denied.test": loop(), "sub.wild.test": loop(), "rebind.test": loop(),
		"nowhere.test": nil,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func serverPort(t testing.TB, s *httptest.Server) string {
	t.Helper()
	u, _ := url.Parse(s.URL)
	return u.Port()
}

func proxiedClient(p *Proxy, tlsCfg *tls.Config) *http.Client {
	pu := &url.URL{Scheme: "http", Host: p.Addr().String()}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: tlsCfg, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
}

func TestHTTPForwardAndConnect(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://denied.test:"+r.URL.Query().Get("p")+"/", http.StatusFound)
			return
		}
		fmt.Fprintf(w, "plain %s %s", r.Host, r.URL.Path)
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "secure %s", r.Host)
	}))
	defer secure.Close()
	pp, sp := serverPort(t, plain), serverPort(t, secure)
	rules := Rules{Allow: mustPatterns(t, "allowed.test", "*.wild.test", "rebind.test", "nowhere.test"), AllowPrivate: true}
	p := startProxy(t, rules)
	tlsCfg := secure.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tlsCfg.ServerName = "example.com" // httptest's certificate names example.com
	c := proxiedClient(p, tlsCfg)

	get := func(u string) (int, string) {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			return -1, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		url, want string
		code      int
	}{
		{"http://allowed.test:" + pp + "/x", "plain allowed.test:" + pp + " /x", 200},
		{"http://sub.wild.test:" + pp + "/", "plain sub.wild.test", 200},
		{"https://allowed.test:" + sp + "/", "secure allowed.test", 200},
		{"http://denied.test:" + pp + "/", "blocked by the sandbox policy: denied.test port " + pp + ": not in the policy's allow-domains", 403},
		{"http://127.0.0.1:" + pp + "/", "127.0.0.1 port " + pp + ": an IP address", 403},
		{"http://allowed.test:" + pp + "/redirect?p=" + pp, "denied.test", 403},
		{"http://nowhere.test:" + pp + "/", "no address", 502},
	} {
		code, body := get(tc.url)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s = %d %q; want %d with %q", tc.url, code, body, tc.code, tc.want)
		}
	}
	// CONNECT to a denied name: a 403 the client reports, and Go's
	// transport reports its status text only, so that names the policy.
	wantErr := "Forbidden by the sandbox policy: denied.test port " + sp + ": not in the policy's allow-domains"
	if _, err := c.Get("https://denied.test:" + sp + "/"); err == nil || !strings.HasSuffix(err.Error(), ": "+wantErr) {
		t.Errorf("CONNECT denied.test: %v, want an error ending in %q", err, wantErr)
	}
	want := []Blocked{
		{Host: "127.0.0.1", Port: atoi(pp), Count: 1, Reason: "an IP address, not a name the policy allows"},
		{Host: "denied.test", Port: atoi(pp), Count: 2, Reason: "not in the policy's allow-domains"},
		{Host: "denied.test", Port: atoi(sp), Count: 1, Reason: "not in the policy's allow-domains"},
	}
	sort.Slice(want, func(i, j int) bool {
		return want[i].Host < want[j].Host || want[i].Host == want[j].Host && want[i].Port < want[j].Port
	})
	if got := p.Blocked(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Blocked() = %+v\nwant %+v", got, want)
	}
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

func TestPrivateDestinations(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	port := serverPort(t, srv)
	for _, allowPrivate := range []bool{false, true} {
		p := startProxy(t, Rules{Allow: mustPatterns(t, "rebind.test", "127.0.0.1"), AllowPrivate: allowPrivate})
		c := proxiedClient(p, nil)
		for _, u := range []string{"http://rebind.test:" + port + "/", "http://127.0.0.1:" + port + "/"} {
			resp, err := c.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if allowPrivate && resp.StatusCode != 200 {
				t.Errorf("allow private: GET %s = %d %s", u, resp.StatusCode, b)
			}
			if !allowPrivate && (resp.StatusCode != 403 || !strings.Contains(string(b), "non-public address 127.0.0.1")) {
				t.Errorf("no private: GET %s = %d %s; want 403 naming the address", u, resp.StatusCode, b)
			}
		}
	}
}

// socksConnect speaks SOCKS5 to the proxy and returns the reply code and
// the connection.
func socksDial(t *testing.T, proxy string, host string, port int) (byte, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte{5, 1, 0})
	var m [2]byte
	if _, err := io.ReadFull(c, m[:]); err != nil || m != [2]byte{5, 0} {
		t.Fatalf("method reply %v, %v", m, err)
	}
	req := []byte{5, 1, 0}
	if a, err := netip.ParseAddr(host); err == nil {
		req = append(req, 1)
		req = append(req, a.AsSlice()...)
	} else {
		req = append(req, 3, byte(len(host)))
		req = append(req, host...)
	}
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	c.Write(req)
	var rep [10]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		t.Fatalf("reply: %v", err)
	}
	return rep[1], c
}

func TestSOCKS5(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "via socks %s", r.Host) }))
	defer srv.Close()
	port := atoi(serverPort(t, srv))
	p := startProxy(t, Rules{Allow: mustPatterns(t, "allowed.test"), AllowPrivate: true})
	rep, c := socksDial(t, p.Addr().String(), "allowed.test", port)
	if rep != 0 {
		t.Fatalf("allowed.test: reply %d", rep)
	}
	fmt.Fprintf(c, "GET / HTTP/1.0\r\nHost: allowed.test\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	c.Close()
	if string(b) != "via socks allowed.test" {
		t.Errorf("body %q", b)
	}
	for _, h := range []string{"denied.test", "127.0.0.1"} {
		rep, c := socksDial(t, p.Addr().String(), h, port)
		c.Close()
		if rep != repNotAllowed {
			t.Errorf("%s: reply %d, want %d (not allowed by ruleset)", h, rep, repNotAllowed)
		}
	}
	if got := p.Blocked(); len(got) != 2 || got[0].Host != "127.0.0.1" || got[1].Host != "denied.test" {
		t.Errorf("Blocked() = %+v", got)
	}
}

// TestRefusalOnTheWire reads refusals as a client without net/http sees
// them, a CONNECT's and a forwarded request's: status line, the header
// naming the host, the body, and the end of the connection.
func TestRefusalOnTheWire(t *testing.T) {
	p := startProxy(t, Rules{Allow: mustPatterns(t, "allowed.test"), AllowPrivate: true})
	for _, tc := range []struct{ req, port string }{
		{"CONNECT denied.test:443 HTTP/1.1\r\nHost: denied.test:443\r\n\r\n", "443"},
		{"GET http://denied.test:8080/x HTTP/1.1\r\nHost: denied.test:8080\r\n\r\n", "8080"},
		{"POST http://denied.test/x HTTP/1.1\r\nHost: denied.test\r\nContent-Length: 3\r\n\r\nabc", "80"},
	} {
		c, err := net.Dial("tcp", p.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		// Without Connection: close the read would wait for the deadline.
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, tc.req)
		b, err := io.ReadAll(c)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		body := "sandbox-local: blocked by the sandbox policy: denied.test port " + tc.port + ": not in the policy's allow-domains\n"
		want := "HTTP/1.1 403 Forbidden by the sandbox policy: denied.test port " + tc.port + ": not in the policy's allow-domains\r\n" +
			"Content-Type: text/plain; charset=utf-8\r\nX-Sandbox-Blocked: denied.test\r\n" +
			fmt.Sprintf("Content-Length: %d\r\nConnection: close\r\n\r\n", len(body)) + body
		if string(b) != want {
			t.Errorf("%q answered\n%q\nwant\n%q", tc.req, b, want)
		}
	}
	if got := headerSafe("a\r\nb\x7f\xffc"); got != "a??b??c" {
		t.Errorf("headerSafe = %q", got)
	}
}

func TestNotAProxyRequest(t *testing.T) {
	p := startProxy(t, Rules{})
	resp, err := http.Get("http://" + p.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("origin-form request: %d, want 400", resp.StatusCode)
	}
}

func TestCloseEndsTunnels(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c)
		}
	}()
	p, err := Start(Config{Rules: Rules{Allow: mustPatterns(t, "allowed.test"), AllowPrivate: true}, Resolver: mapResolver{"allowed.test": loop()}})
	if err != nil {
		t.Fatal(err)
	}
	rep, c := socksDial(t, p.Addr().String(), "allowed.test", ln.Addr().(*net.TCPAddr).Port)
	if rep != 0 {
		t.Fatal(rep)
	}
	p.Close()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("tunnel still open after Close")
	}
}

// TestBlockedIsBounded: refusals of many distinct names keep a bounded
// report; past the bound they are counted, not listed.
func TestBlockedIsBounded(t *testing.T) {
	p := &Proxy{blocked: map[hostPort]*Blocked{}}
	for i := 0; i < maxBlocked+100; i++ {
		p.record(&RefusedError{Host: strconv.Itoa(i) + strings.Repeat("x", 300), Port: 443, Reason: "not allowed"})
	}
	p.record(&RefusedError{Host: "0" + strings.Repeat("x", 300), Port: 443, Reason: "not allowed"}) // a known one is counted where it is
	b := p.Blocked()
	if len(b) != maxBlocked+1 {
		t.Fatalf("%d entries, want %d and the overflow", len(b), maxBlocked)
	}
	var over *Blocked
	for i := range b {
		if len(b[i].Host) > maxHostLen {
			t.Fatalf("a host of %d bytes kept", len(b[i].Host))
		}
		if b[i].Host == OverflowHost {
			over = &b[i]
		}
	}
	if over == nil || over.Count != 100 {
		t.Errorf("overflow entry %+v, want 100 refusals counted", over)
	}
	for _, e := range b {
		if strings.HasPrefix(e.Host, "0x") && e.Count != 2 {
			t.Errorf("the first name refused twice counts %d", e.Count)
		}
	}
}

// TestConnectionsAreBounded: a command cannot make the proxy hold more
// than maxConns connections (descriptors and goroutines in the consumer's
// process): past the bound a new one is closed at once; once some close,
// new ones are served again. A request header past maxHeaderBytes is
// refused, not buffered.
func TestConnectionsAreBounded(t *testing.T) {
	p := startProxy(t, Rules{Allow: mustPatterns(t, "allowed.test")})
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < maxConns; i++ {
		c, err := net.Dial("tcp", p.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// Each admitted connection is being classified (its first byte
	// awaited); give the accept loop time to admit them all.
	deadline := time.Now().Add(5 * time.Second)
	for p.open.Load() < maxConns && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	extra, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := extra.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("a connection past the bound: read %v, want EOF (closed by the proxy)", err)
	}
	extra.Close()
	for _, c := range held[:10] {
		c.Close()
	}
	held = held[10:]
	deadline = time.Now().Add(5 * time.Second)
	for p.open.Load() > maxConns-10 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, "403") {
		t.Errorf("control, a connection once others closed: %q %v, want the proxy's 403", line, err)
	}

	big, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	big.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(big, "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nX-Pad: %s\r\n\r\n", strings.Repeat("a", 2*maxHeaderBytes))
	line, err = bufio.NewReader(big).ReadString('\n')
	if err != nil || !strings.Contains(line, "431") {
		t.Errorf("a header past %d bytes: %q %v, want 431", maxHeaderBytes, line, err)
	}
}
