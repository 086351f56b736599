package sandbox

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bo-agent/sandbox-local/internal/netproxy"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// bridge is the provider's end of the namespaces launcher's loopback
// ports. The sandbox has its own network namespace, whose loopback the
// host cannot reach; its launcher makes a listener there for each port and
// hands the descriptors over this seqpacket socket (vocab.BridgeHello,
// the token, the ports, SCM_RIGHTS). The bridge then accepts on them, out
// here: the proxy's port goes to the proxy, an allowed local port to the
// host's 127.0.0.1 at that port. The launcher's stage 1 holds its end
// until the sandbox ends; then the bridge closes that launch's listeners.
type bridge struct {
	path      string
	ln        *net.UnixListener
	token     string
	proxy     *netproxy.Proxy
	proxyPort int
	local     []int

	mu     sync.Mutex
	closed bool
	open   map[io.Closer]struct{} // launches' connections, listeners, relays
	wg     sync.WaitGroup
}

// bridgePath is where a wrap's bridge listens: beside its temp dir, in the
// per-user private parent, which no sandbox can write; named after the
// temp dir, so that the sweep of a dead process's dirs removes it too.
func bridgePath(tempDir string) string { return tempDir + ".bridge" }

func startBridge(path, token string, proxy *netproxy.Proxy, proxyPort int, local []int) (*bridge, error) {
	if len(path) >= len(unix.RawSockaddrUnix{}.Path) {
		return nil, fmt.Errorf("the bridge's path %s is too long for a UNIX socket (set TMPDIR to a shorter directory)", path)
	}
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, fmt.Errorf("listen on the bridge: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	b := &bridge{path: path, ln: ln, token: token, proxy: proxy, proxyPort: proxyPort, local: local, open: map[io.Closer]struct{}{}}
	b.wg.Add(1)
	go b.accept()
	return b, nil
}

// track keeps c to close at close; false when the bridge is closed (c is
// closed then).
func (b *bridge) track(c io.Closer) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		c.Close()
		return false
	}
	b.open[c] = struct{}{}
	return true
}

func (b *bridge) untrack(c io.Closer) {
	b.mu.Lock()
	delete(b.open, c)
	b.mu.Unlock()
	c.Close()
}

func (b *bridge) accept() {
	defer b.wg.Done()
	for {
		c, err := b.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if !b.track(c) {
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer b.untrack(c)
			b.launch(c)
		}()
	}
}

// launch serves one launch: it takes the listeners, answers "ok", serves
// them until the launcher's end of c closes, then closes them.
func (b *bridge) launch(c *net.UnixConn) {
	lns, err := b.receive(c)
	if err != nil {
		c.Write([]byte("no"))
		return
	}
	for i, l := range lns {
		if !b.track(l.ln) { // the bridge is closing: close the rest too
			for _, rest := range lns[i+1:] {
				rest.ln.Close()
			}
			return
		}
		defer b.untrack(l.ln)
	}
	if _, err := c.Write([]byte("ok")); err != nil {
		return
	}
	for _, l := range lns {
		if l.port == b.proxyPort && b.proxy != nil {
			b.proxy.Serve(l.ln)
			continue
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.relay(l.ln, l.port)
		}()
	}
	c.SetReadDeadline(time.Time{})
	var buf [16]byte
	for {
		if _, err := c.Read(buf[:]); err != nil {
			return // the sandbox ended (or the bridge closed)
		}
	}
}

type portListener struct {
	port int
	ln   net.Listener
}

// receive reads and checks a launcher's message: the hello, this wrap's
// token, the ports (the wrap's and no other), one listening TCP socket
// per port.
func (b *bridge) receive(c *net.UnixConn) ([]portListener, error) {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4*(maxLocalPorts+1)))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if rights, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, rights...)
			}
		}
	}
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "bridge-listener")
	}
	defer func() {
		for _, f := range files {
			f.Close() // FileListener made a copy of those it took
		}
	}()
	fields := strings.Fields(string(buf[:n]))
	if len(fields) < 2 || fields[0] != vocab.BridgeHello || subtle.ConstantTimeCompare([]byte(fields[1]), []byte(b.token)) != 1 {
		return nil, errors.New("bridge: not this wrap's launcher")
	}
	want := append([]int{}, b.local...)
	if b.proxy != nil {
		want = append([]int{b.proxyPort}, want...)
	}
	ports := fields[2:]
	if len(ports) != len(want) || len(files) != len(want) {
		return nil, errors.New("bridge: the ports or descriptors are not the wrap's")
	}
	var out []portListener
	fail := func(err error) ([]portListener, error) {
		for _, l := range out {
			l.ln.Close()
		}
		return nil, err
	}
	for i, ps := range ports {
		port, err := strconv.Atoi(ps)
		if err != nil || port != want[i] {
			return fail(errors.New("bridge: the ports are not the wrap's"))
		}
		if err := isTCPListener(int(files[i].Fd())); err != nil {
			return fail(err)
		}
		ln, err := net.FileListener(files[i])
		if err != nil {
			return fail(err)
		}
		out = append(out, portListener{port, ln})
	}
	return out, nil
}

// isTCPListener checks that fd is a listening IPv4 TCP socket.
func isTCPListener(fd int) error {
	dom, err1 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	typ, err2 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	acc, err3 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	if err := errors.Join(err1, err2, err3); err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	if dom != unix.AF_INET || typ != unix.SOCK_STREAM || acc != 1 {
		return errors.New("bridge: a descriptor is not a listening TCP socket")
	}
	return nil
}

// relay passes each connection ln accepts to the host's 127.0.0.1:port.
func (b *bridge) relay(ln net.Listener, port int) {
	target := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for {
		in, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if !b.track(in) {
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer b.untrack(in)
			out, err := net.DialTimeout("tcp", target, 10*time.Second)
			if err != nil {
				return // the sandbox's client sees the connection closed
			}
			if !b.track(out) {
				return
			}
			defer b.untrack(out)
			netproxy.Splice(in, out)
		}()
	}
}

// close stops the bridge: no new launch, and every listener and relay of
// the earlier ones closed.
func (b *bridge) close() {
	b.mu.Lock()
	b.closed = true
	open := b.open
	b.open = map[io.Closer]struct{}{}
	b.mu.Unlock()
	b.ln.Close()
	for c := range open {
		c.Close()
	}
	b.wg.Wait()
	os.Remove(b.path)
}
