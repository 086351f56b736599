//go:build linux

package integration

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
			if control := hostTool(t, "socket", args...); control != "ok" {
				t.Logf("%s: cannot be made here even unconfined (%s): nothing to deny", name, control)
				continue
			}
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

const noCaps = "0000000000000000/0000000000000000/0000000000000000/0000000000000000"

func TestNoCapabilitiesInside(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		if got := s.tool(s.policy(), "caps"); got != noCaps {
			t.Errorf("capabilities inside (inh/prm/eff/amb): %s, want none", got)
		}
	})
	if os.Geteuid() == 0 {
		if got := hostTool(t, "caps"); got == noCaps {
			t.Errorf("control: root outside has no capabilities either (%s)", got)
		}
	}
}

// TestNoCapabilitiesFromACallerWithoutSetpcap: a caller that cannot empty
// the bounding set (no CAP_SETPCAP) must still pass no capability on. Only
// a root caller has capabilities to pass.
func TestNoCapabilitiesFromACallerWithoutSetpcap(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Logf("uid %d holds no capabilities: the root run proves this", os.Geteuid())
		return
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		w := s.wrap(s.policy(), self(t), toolArg, "caps")
		r := s.spawn(w, func(c *exec.Cmd) {
			c.Path = self(t)
			c.Args = append([]string{self(t), toolArg, "exec-without-setpcap", w.Path}, w.Args...)
		})
		if got := strings.TrimSpace(r.stdout); got != noCaps {
			t.Errorf("capabilities inside, caller without CAP_SETPCAP (inh/prm/eff/amb): %q (stderr %q), want none", got, r.stderr)
		}
	})
}
