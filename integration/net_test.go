//go:build linux

package integration

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// tcpListener accepts on 127.0.0.1 and reports whether anything connected.
func tcpListener(t *testing.T) (addr string, connected func() bool) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String(), func() bool {
		ln.(*net.TCPListener).SetDeadline(time.Now().Add(300 * time.Millisecond))
		c, err := ln.Accept()
		if err == nil {
			c.Close()
			return true
		}
		return false
	}
}

// udpListener reads on 127.0.0.1 and reports whether a datagram arrived.
func udpListener(t *testing.T) (addr string, received func() bool) {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc.LocalAddr().String(), func() bool {
		pc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		buf := make([]byte, 16)
		n, _, err := pc.ReadFrom(buf)
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("udp read: %v", err)
		}
		return err == nil && string(buf[:n]) == "ping"
	}
}

func TestNetworkDeny(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		deny := s.policy()
		allow := s.policy()
		allow.Network = sandbox.NetworkAllow

		tcp, tcpConnected := tcpListener(t)
		wantDenied(t, "tcp connect under deny", s.tool(deny, "connect-tcp", tcp), "EACCES", "EPERM", "ECONNREFUSED", "ENETUNREACH")
		if tcpConnected() {
			t.Error("the host listener accepted a connection from a network-deny sandbox")
		}
		wantOK(t, "tcp connect under allow", s.tool(allow, "connect-tcp", tcp))
		if !tcpConnected() {
			t.Error("control: the listener saw no connection under network allow")
		}

		udp, udpReceived := udpListener(t)
		got := s.tool(deny, "send-udp", udp)
		if !s.traits().ownNetwork || got != "ok" { // in a private namespace the datagram goes to its own loopback
			wantDenied(t, "udp send under deny", got, "EACCES", "EPERM", "ENETUNREACH", "ECONNREFUSED")
		}
		if udpReceived() {
			t.Error("the host received a datagram from a network-deny sandbox")
		}
		wantOK(t, "udp send under allow", s.tool(allow, "send-udp", udp))
		if !udpReceived() {
			t.Error("control: no datagram arrived under network allow")
		}

		// UNIX sockets reach host daemons (D-Bus, systemd --user, Docker):
		// refused under deny; socketpair stays usable.
		wantDenied(t, "unix socket under deny", s.tool(deny, "socket-unix"), "EACCES", "EPERM")
		wantOK(t, "unix socket under allow", s.tool(allow, "socket-unix"))
		wantOK(t, "socketpair under deny", s.tool(deny, "socketpair"))
	})
}
