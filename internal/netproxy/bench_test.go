package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// byteServer answers each connection's first line with one byte, then
// sends N bytes when the line is "N\n".
func byteServer(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					return
				}
				n, _ := strconv.ParseInt(line[:len(line)-1], 10, 64)
				if n <= 1 {
					c.Write([]byte{'x'})
					return
				}
				// ReadFrom a LimitedReader of /dev/zero: the kernel's sendfile/splice where it can.
				io.CopyN(c, zero{}, n)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

type zero struct{}

var zeros = make([]byte, 1<<20)

func (zero) Read(b []byte) (int, error) {
	n := copy(b, zeros)
	return n, nil
}

// connectTunnel opens a CONNECT tunnel to allowed.test:port.
func connectTunnel(tb testing.TB, proxy string, port int) net.Conn {
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		tb.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", port, port)
	// "HTTP/1.1 200 Connection established\r\n\r\n" is 39 bytes.
	var b [39]byte
	if _, err := io.ReadFull(c, b[:]); err != nil || string(b[9:12]) != "200" {
		tb.Fatalf("CONNECT: %q %v", b, err)
	}
	return c
}

// BenchmarkFirstByte is the time from dialling to the first byte of the
// answer, once directly and once through a CONNECT tunnel.
func BenchmarkFirstByte(b *testing.B) {
	port := byteServer(b)
	p := startProxy(b, Rules{Allow: mustPatterns(b, "allowed.test"), AllowPrivate: true})
	one := func(c net.Conn) {
		c.Write([]byte("1\n"))
		var x [1]byte
		if _, err := io.ReadFull(c, x[:]); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				b.Fatal(err)
			}
			one(c)
		}
	})
	b.Run("connect", func(b *testing.B) {
		for b.Loop() {
			one(connectTunnel(b, p.Addr().String(), port))
		}
	})
	b.Run("socks5", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", p.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			c.Write([]byte{5, 1, 0, 5, 1, 0, 3, 12})
			c.Write([]byte("allowed.test"))
			c.Write([]byte{byte(port >> 8), byte(port)})
			var r [12]byte
			if _, err := io.ReadFull(c, r[:]); err != nil || r[3] != 0 {
				b.Fatalf("socks: %v %v", r, err)
			}
			one(c)
		}
	})
}

// BenchmarkTunnelThroughput moves 1 GiB through one CONNECT tunnel (and
// directly, for comparison); b.SetBytes makes go test print MB/s.
func BenchmarkTunnelThroughput(b *testing.B) {
	const size = 1 << 30
	port := byteServer(b)
	p := startProxy(b, Rules{Allow: mustPatterns(b, "allowed.test"), AllowPrivate: true})
	run := func(b *testing.B, dial func() net.Conn) {
		b.SetBytes(size)
		for b.Loop() {
			c := dial()
			fmt.Fprintf(c, "%d\n", size)
			n, err := io.Copy(io.Discard, c)
			c.Close()
			if err != nil || n != size {
				b.Fatalf("got %d bytes, %v", n, err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		run(b, func() net.Conn {
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				b.Fatal(err)
			}
			return c
		})
	})
	b.Run("connect", func(b *testing.B) {
		run(b, func() net.Conn { return connectTunnel(b, p.Addr().String(), port) })
	})
}

// TestIdleConnectionMemory measures the proxy's heap and goroutine stacks
// per idle CONNECT tunnel and per idle client connection that has sent
// nothing yet; it logs the numbers (go test -v -run IdleConnectionMemory)
// and fails only past a generous bound.
func TestIdleConnectionMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	port := byteServer(t)
	p := startProxy(t, Rules{Allow: mustPatterns(t, "allowed.test"), AllowPrivate: true})
	const n = 500
	measure := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	before := measure()
	var conns []net.Conn
	for range n {
		conns = append(conns, connectTunnel(t, p.Addr().String(), port))
	}
	time.Sleep(100 * time.Millisecond)
	// Each tunnel costs the proxy and this test's server; the server's
	// goroutine (one, blocked in a read) is subtracted below.
	tunnels := measure()
	for _, c := range conns {
		c.Close()
	}
	conns = conns[:0]
	time.Sleep(100 * time.Millisecond)
	mid := measure()
	for range n {
		c, err := net.Dial("tcp", p.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	time.Sleep(100 * time.Millisecond)
	idle := measure()
	for _, c := range conns {
		c.Close()
	}
	perTunnel := (int64(tunnels) - int64(before)) / n
	perIdle := (int64(idle) - int64(mid)) / n
	t.Logf("per idle CONNECT tunnel (proxy's two goroutines + the test server's one): %d bytes; per idle client connection: %d bytes", perTunnel, perIdle)
	if perTunnel > 64<<10 || perIdle > 64<<10 {
		t.Errorf("more than 64 KiB per idle connection")
	}
}
