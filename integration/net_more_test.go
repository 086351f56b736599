//go:build linux

package integration

import (
	"net"
	"os"
	"strconv"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
	"golang.org/x/sys/unix"
)

func TestNetworkDenyEverySocketKind(t *testing.T) {
	ln6, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Fatalf("this host has no IPv6 loopback: %v", err)
	}
	defer ln6.Close()
	wantOK(t, "control: the host reaches its own ::1 listener", hostTool(t, "connect-tcp6", ln6.Addr().String()))
	forEachRunner(t, func(t *testing.T, s *sbx) {
		deny := s.policy()
		allow := s.policy()
		allow.Network = sandbox.NetworkAllow
		wantDenied(t, "tcp6 connect to ::1", s.tool(deny, "connect-tcp6", ln6.Addr().String()), "EACCES", "ECONNREFUSED", "ENETUNREACH", "EADDRNOTAVAIL")
		wantOK(t, "control: tcp6 under allow", s.tool(allow, "connect-tcp6", ln6.Addr().String()))

		kinds := map[string][3]int{
			"raw icmp":  {unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP},
			"packet":    {unix.AF_PACKET, unix.SOCK_RAW, 0},
			"netlink":   {unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE},
			"udp6":      {unix.AF_INET6, unix.SOCK_DGRAM, 0},
			"vsock":     {unix.AF_VSOCK, unix.SOCK_STREAM, 0},
			"bluetooth": {unix.AF_BLUETOOTH, unix.SOCK_RAW, 0},
		}
		for name, k := range kinds {
			args := []string{strconv.Itoa(k[0]), strconv.Itoa(k[1]), strconv.Itoa(k[2])}
			got := s.tool(deny, "socket", args...)
			ownNS := k[0] == unix.AF_NETLINK || (k[0] == unix.AF_INET || k[0] == unix.AF_INET6) && k[1] != unix.SOCK_RAW
			if s.traits().ownNetwork && ownNS && got == "ok" {
				continue // a socket of the sandbox's own network namespace, which holds only loopback
			}
			wantDenied(t, name+" socket under deny", got, "EACCES", "EPERM", "EAFNOSUPPORT", "EPROTONOSUPPORT")
		}
		wantDenied(t, "io_uring under deny", s.tool(deny, "io_uring"), "EACCES", "EPERM")
	})
}

func TestNoCapabilitiesInside(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		if got := s.tool(s.policy(), "caps"); got != "0000000000000000" {
			t.Errorf("effective capabilities inside: %s, want none", got)
		}
	})
	if os.Geteuid() == 0 {
		if got := hostTool(t, "caps"); got == "0000000000000000" {
			t.Errorf("control: root outside has no capabilities either (%s)", got)
		}
	}
}
