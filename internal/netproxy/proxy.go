package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Resolver resolves a name to addresses; net.DefaultResolver is one.
// Tests inject their own to map test names to local servers.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is a proxy's configuration.
type Config struct {
	// Rules say what may be reached.
	Rules Rules
	// Resolver resolves names; nil means net.DefaultResolver.
	Resolver Resolver
	// Listen is the address to listen on; "" means 127.0.0.1:0.
	Listen string
	// DialTimeout bounds one dial; 0 means 30 s.
	DialTimeout time.Duration
}

// Blocked is one refused destination and how often it was refused.
type Blocked struct {
	// Host is the name (or IP literal) asked for.
	Host string `json:"host"`
	// Port is the port asked for.
	Port int `json:"port"`
	// Count is how many requests were refused.
	Count int `json:"count"`
	// Reason is the first refusal's reason.
	Reason string `json:"reason"`
}

// Proxy is a running proxy.
type Proxy struct {
	cfg      Config
	ln       net.Listener
	srv      *http.Server
	conns    chan net.Conn
	done     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	blocked  map[hostPort]*Blocked
	tunnels  map[net.Conn]struct{}
	extra    map[net.Listener]struct{} // listeners given to Serve
	open     atomic.Int32              // client connections admitted and not closed
	closeErr error
	once     sync.Once
}

type hostPort struct {
	host string
	port int
}

// RefusedError is a destination the rules refuse.
type RefusedError struct {
	Host   string
	Port   int
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("sandbox policy refuses %s port %d: %s", e.Host, e.Port, e.Reason)
}

// Start listens and serves until Close.
func Start(cfg Config) (*Proxy, error) {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 30 * time.Second
	}
	addr := cfg.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("netproxy: listen: %w", err)
	}
	p := &Proxy{cfg: cfg, ln: ln, conns: make(chan net.Conn), done: make(chan struct{}),
		blocked: map[hostPort]*Blocked{}, tunnels: map[net.Conn]struct{}{}, extra: map[net.Listener]struct{}{}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = r.In.URL
			r.Out.Host = r.In.Host
		},
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           p.dial,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: 0,
		},
		ErrorHandler: p.forwardError,
	}
	p.srv = &http.Server{Handler: p.handler(rp), ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes, ErrorLog: nil}
	p.wg.Add(2)
	go func() { defer p.wg.Done(); _ = p.srv.Serve(chanListener{p}) }()
	go func() { defer p.wg.Done(); p.accept(ln) }()
	return p, nil
}

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() *net.TCPAddr { return p.ln.Addr().(*net.TCPAddr) }

// Blocked returns the refused destinations, sorted by host and port.
func (p *Proxy) Blocked() []Blocked {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Blocked, 0, len(p.blocked))
	for _, b := range p.blocked {
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Host != out[j].Host {
			return out[i].Host < out[j].Host
		}
		return out[i].Port < out[j].Port
	})
	return out
}

// Serve accepts connections on ln as on the proxy's own listener, in the
// background, until ln is closed or the proxy is (which closes ln). The
// namespaces runner gives it the listeners made inside a sandbox's own
// network namespace.
func (p *Proxy) Serve(ln net.Listener) {
	p.mu.Lock()
	select {
	case <-p.done:
		p.mu.Unlock()
		ln.Close()
		return
	default:
	}
	p.extra[ln] = struct{}{}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		p.accept(ln)
		p.mu.Lock()
		delete(p.extra, ln)
		p.mu.Unlock()
	}()
}

// Close stops the proxy and ends every connection it serves.
func (p *Proxy) Close() error {
	p.once.Do(func() {
		p.mu.Lock()
		close(p.done)
		for ln := range p.extra {
			ln.Close()
		}
		p.mu.Unlock()
		p.closeErr = p.ln.Close()
		_ = p.srv.Close()
		p.mu.Lock()
		for c := range p.tunnels {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p.closeErr
}

// maxBlocked bounds the distinct destinations Blocked keeps, and
// maxHostLen the name kept of each: a command asking for a million
// made-up names must not grow the consumer's memory without end. Past the
// bound, refusals are counted under OverflowHost.
const (
	maxBlocked = 256
	maxHostLen = 253
)

// OverflowHost is the Blocked entry that counts the refusals of
// destinations past the first maxBlocked.
const OverflowHost = "(more destinations than the report keeps)"

func (p *Proxy) record(e *RefusedError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	host := e.Host
	if len(host) > maxHostLen {
		host = host[:maxHostLen]
	}
	k := hostPort{host, e.Port}
	if b, ok := p.blocked[k]; ok {
		b.Count++
		return
	}
	if len(p.blocked) >= maxBlocked {
		k = hostPort{OverflowHost, 0}
		if b, ok := p.blocked[k]; ok {
			b.Count++
			return
		}
		p.blocked[k] = &Blocked{Host: OverflowHost, Count: 1, Reason: "refused, like those listed"}
		return
	}
	p.blocked[k] = &Blocked{Host: host, Port: e.Port, Count: 1, Reason: e.Reason}
}

// track keeps c to close at Close; untrack forgets it.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return false
	default:
	}
	p.tunnels[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.tunnels, c)
	p.mu.Unlock()
}

// accept reads the first byte of each connection ln accepts: 5 is SOCKS5,
// anything else goes to the HTTP server. It returns when ln is closed.
func (p *Proxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			select {
			case <-p.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if !p.admit() {
			c.Close() // the command holds maxConns already
			continue
		}
		lc := &limitedConn{Conn: c, free: p.release}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.classify(lc)
		}()
	}
}

// The bounds on what a command can make the proxy hold in the consumer's
// process: connections at once (each a descriptor and two goroutines),
// the size of a request's header, and how long a kept-alive connection
// may idle between requests. A tunnel may idle as long as its ends like.
const (
	maxConns       = 512
	maxHeaderBytes = 64 << 10
	idleTimeout    = 60 * time.Second
)

// admit counts a new client connection, refusing one past maxConns. The
// count is atomic, not under p.mu: Close closes connections holding p.mu.
func (p *Proxy) admit() bool {
	if p.open.Add(1) > maxConns {
		p.open.Add(-1)
		return false
	}
	return true
}

func (p *Proxy) release() { p.open.Add(-1) }

// limitedConn is an admitted client connection: closing it frees its
// place. tunnel unwraps it (a splice needs the TCP connection itself) and
// frees the place when the tunnel ends.
type limitedConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.done()
	return err
}

func (c *limitedConn) done() { c.once.Do(c.free) }

// CloseWrite closes the write side of the connection it wraps. Without it
// a lingering close (refuse) found no CloseWrite here, closed the whole
// connection with the refused request's body still arriving, and the
// kernel reset the client before it read the 403.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

func (p *Proxy) classify(c net.Conn) {
	var first [1]byte
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.ReadFull(c, first[:]); err != nil {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	pc := &prefixConn{Conn: c, prefix: first[:]}
	if first[0] == 5 {
		if !p.track(c) {
			c.Close()
			return
		}
		defer p.untrack(c)
		p.socks(pc)
		return
	}
	select {
	case p.conns <- pc:
	case <-p.done:
		c.Close()
	}
}

// check decides host:port and resolves it, returning the addresses that
// may be dialled; a refusal is recorded.
func (p *Proxy) check(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	h, isIP := normalise(host)
	refuse := func(reason string) error {
		e := &RefusedError{Host: h, Port: port, Reason: reason}
		p.record(e)
		return e
	}
	if port < 1 || port > 65535 {
		return nil, refuse("not a valid port")
	}
	d := p.cfg.Rules.Decide(h, port)
	if !d.Allowed {
		return nil, refuse(d.Reason)
	}
	var addrs []netip.Addr
	if isIP {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return nil, refuse("not a valid IP address")
		}
		addrs = []netip.Addr{a}
	} else {
		res, err := p.cfg.Resolver.LookupNetIP(ctx, "ip", h)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", h, err)
		}
		addrs = res
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no address", h)
	}
	if !p.cfg.Rules.AllowPrivate {
		for _, a := range addrs {
			if Private(a) {
				return nil, refuse(fmt.Sprintf("resolves to the non-public address %s, and the policy does not allow private destinations", a.Unmap()))
			}
		}
	}
	return addrs, nil
}

// dial connects to host:port after check, to the checked addresses only.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", ps, err)
	}
	addrs, err := p.check(ctx, host, port)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: p.cfg.DialTimeout}
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// refusalBody is what a refused HTTP request gets.
func refusalBody(e *RefusedError) string {
	return fmt.Sprintf("sandbox-local: blocked by the sandbox policy: %s port %d: %s\n", e.Host, e.Port, e.Reason)
}

func (p *Proxy) handler(rp *httputil.ReverseProxy) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect {
			p.connect(w, r)
			return
		}
		if r.URL.Scheme != "http" || r.URL.Host == "" {
			http.Error(w, "sandbox-local: this is the sandbox's proxy: it forwards absolute http:// URLs and CONNECT only", http.StatusBadRequest)
			return
		}
		if r.Body != nil {
			// The transport closes the body when the dial is refused;
			// refuse still drains it (keepOpen), and the server closes
			// its own body once the handler returns.
			r.Body = keepOpen{r.Body}
		}
		rp.ServeHTTP(w, r)
	})
}

// keepOpen is a request body whose Close leaves it readable.
type keepOpen struct{ io.ReadCloser }

func (keepOpen) Close() error { return nil }

func (p *Proxy) forwardError(w http.ResponseWriter, r *http.Request, err error) {
	var re *RefusedError
	if errors.As(err, &re) {
		p.refuse(w, r, re)
		return
	}
	http.Error(w, "sandbox-local: proxy: "+err.Error(), http.StatusBadGateway)
}

// refuse answers a refused request (a CONNECT or a forwarded one) with a
// 403 whose reason phrase says the sandbox policy refused it and why, and
// the same in the body. Clients report a failed CONNECT by its status line
// and drop its body (Go's net/http keeps the text after the code, Python
// "Tunnel connection failed: 403 ...", curl and git the code only), and
// some report a forwarded 403 by its status line too (wget "ERROR 403:
// ..."). net/http cannot write a reason phrase of its own, so the
// connection is hijacked, the answer written by hand, and the connection
// closed.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, re *RefusedError) {
	body := refusalBody(re)
	if r.Method != http.MethodConnect && r.Body != nil && !strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		// A client that did not wait for 100-continue is sending its body
		// now: read it (bounded) before answering, so that it is not
		// reset mid-send and misses the 403. (Where the ReverseProxy
		// has closed its own wrapper of the body, as Go 1.26's does after
		// a refused dial, this reads nothing, and the lingering close
		// below drains the body from the connection instead.)
		rc := http.NewResponseController(w)
		rc.SetReadDeadline(time.Now().Add(lingerTime))
		io.CopyN(io.Discard, r.Body, lingerBytes)
		rc.SetReadDeadline(time.Time{})
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Sandbox-Blocked", headerSafe(re.Host))
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, body)
		return
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	fmt.Fprintf(brw.Writer, "HTTP/1.1 403 %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Sandbox-Blocked: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		refusalReason(re), headerSafe(re.Host), len(body), body)
	brw.Writer.Flush()
	// A lingering close: the client may still be sending a body the proxy
	// never reads, and closing with unread data makes the kernel answer
	// with a reset, which can reach the client before it has read the 403
	// (curl: "Connection reset by peer", a flaky refusal). So the write side
	// is closed first, then what still arrives is read and dropped, for at
	// most lingerTime and lingerBytes.
	closeWrite(c)
	c.SetReadDeadline(time.Now().Add(lingerTime))
	io.CopyN(io.Discard, brw, lingerBytes)
}

// How long, and how much, a refused connection's unread request is
// drained before it is closed (refuse).
const (
	lingerTime  = 2 * time.Second
	lingerBytes = 64 << 20
)

// refusalReason is the reason phrase of a refusal.
func refusalReason(e *RefusedError) string {
	return headerSafe(fmt.Sprintf("Forbidden by the sandbox policy: %s port %d: %s", e.Host, e.Port, e.Reason))
}

// headerSafe replaces what may not be in a status line or header value.
func headerSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c >= 0x7f {
			b[i] = '?'
		}
	}
	return string(b)
}

func hostPortOf(hostport, defPort string) (string, int, error) {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		host, ps = hostport, defPort
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return "", 0, fmt.Errorf("port %q", ps)
	}
	return host, port, nil
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := hostPortOf(r.Host, "443")
	if err != nil {
		http.Error(w, "sandbox-local: bad CONNECT target", http.StatusBadRequest)
		return
	}
	up, err := p.dial(r.Context(), "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		p.forwardError(w, r, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "sandbox-local: cannot tunnel", http.StatusInternalServerError)
		return
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		c.Close()
		up.Close()
		return
	}
	var pending []byte
	if n := brw.Reader.Buffered(); n > 0 {
		pending, _ = brw.Reader.Peek(n)
	}
	p.tunnel(c, up, pending)
}

// tunnel copies both ways until either side ends; the copy is the
// kernel's (splice) when both ends are TCP.
func (p *Proxy) tunnel(client, up net.Conn, pending []byte) {
	if !p.track(client) {
		client.Close()
		up.Close()
		return
	}
	p.track(up)
	defer p.untrack(client)
	defer p.untrack(up)
	raw := client
	if pc, ok := client.(*prefixConn); ok {
		if len(pc.prefix) > 0 {
			pending = append(append([]byte(nil), pc.prefix...), pending...)
			pc.prefix = nil
		}
		raw = pc.Conn
	}
	if lc, ok := raw.(*limitedConn); ok {
		defer lc.done()
		raw = lc.Conn
	}
	if len(pending) > 0 {
		if _, err := up.Write(pending); err != nil {
			client.Close()
			up.Close()
			return
		}
	}
	Splice(raw, up)
	raw.Close()
	up.Close()
}

// Splice copies a to b and b to a until both directions end, passing each
// end of stream on as a half-close where the connection has one.
func Splice(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		io.Copy(b, a)
		closeWrite(b)
		close(done)
	}()
	io.Copy(a, b)
	closeWrite(a)
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// prefixConn gives back the bytes read to classify a connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

// CloseWrite closes the write side where the connection has one.
func (c *prefixConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// chanListener hands the HTTP server the connections accept classified.
type chanListener struct{ p *Proxy }

func (l chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.p.conns:
		return c, nil
	case <-l.p.done:
		return nil, net.ErrClosed
	}
}

func (l chanListener) Close() error   { return nil }
func (l chanListener) Addr() net.Addr { return l.p.ln.Addr() }
