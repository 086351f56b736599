//go:build !linux

package sandbox

import (
	"errors"

	"github.com/bo-agent/sandbox-local/internal/netproxy"
)

// bridge exists on Linux only: no other runner bridges loopback ports.
type bridge struct{ path string }

func bridgePath(tempDir string) string { return tempDir + ".bridge" }

func startBridge(string, string, *netproxy.Proxy, int, []int) (*bridge, error) {
	return nil, errors.New("no loopback bridge on this platform")
}

func (*bridge) close() {}
