package sandbox

import (
	"strconv"

	"github.com/bo-agent/sandbox-local/internal/netproxy"
)

// wrapNet is what a wrap with loopback ports runs in the provider's
// process until Cleanup: the proxy, and the bridge.
type wrapNet struct {
	proxy  *netproxy.Proxy
	bridge *bridge
}

func (n *wrapNet) close() {
	if n.bridge != nil {
		n.bridge.close()
	}
	if n.proxy != nil {
		n.proxy.Close()
	}
}

// startNetwork starts what the policy's network needs before the runner
// encodes the Spec: the proxy for NetworkProxied (its port first in the
// ports, then the allowed local ports), the bridge for a runner that
// bridges them (portsBridged), and the proxy's variables; Cleanup stops
// them. It returns the network's part of the Spec.
func startNetwork(run runner, r *resolved, token string, w *Wrapped, resolver Resolver) (netPart, error) {
	w.Network = r.network.mode
	part := netPart{mode: r.network.launcherMode()}
	if !r.network.needsPorts() {
		return part, nil
	}
	ports := run.traits().ports
	if ports == portsNone {
		return netPart{}, unavailable(run.name(), "this runner cannot yet hold a command to the domain proxy or to local ports", nil)
	}
	n := &wrapNet{}
	proxyPort := 0
	if r.network.proxied() {
		cfg := netproxy.Config{Rules: r.network.rules}
		if resolver != nil {
			cfg.Resolver = resolver
		}
		px, err := netproxy.Start(cfg)
		if err != nil {
			return netPart{}, unavailable(run.name(), "cannot start the domain proxy", err)
		}
		n.proxy = px
		proxyPort = px.Addr().Port
		part.ports = append(part.ports, proxyPort)
		w.Proxy = "http://127.0.0.1:" + strconv.Itoa(proxyPort)
		w.netVars = proxyEnv(proxyPort, func(name string) string { return envValue(r.env, name) })
	}
	part.ports = append(part.ports, r.network.localPorts...)
	if ports == portsBridged {
		b, err := startBridge(bridgePath(w.TempDir), token, n.proxy, proxyPort, r.network.localPorts)
		if err != nil {
			n.close()
			return netPart{}, unavailable(run.name(), "cannot start the loopback bridge", err)
		}
		n.bridge = b
		part.bridge = b.path
	}
	w.net = n
	return part, nil
}

// envValue is the value of name in env, "" when unset.
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := cutVar(env[i], name); ok {
			return v
		}
	}
	return ""
}

func cutVar(kv, name string) (string, bool) {
	if len(kv) > len(name) && kv[:len(name)] == name && kv[len(name)] == '=' {
		return kv[len(name)+1:], true
	}
	return "", false
}

// Blocked returns the destinations the proxy refused so far (NetworkProxied;
// nil otherwise), sorted by host and port: what to ask the user to allow.
// It stays readable after Cleanup.
func (w *Wrapped) Blocked() []BlockedRequest {
	if w.net == nil || w.net.proxy == nil {
		return nil
	}
	var out []BlockedRequest
	for _, b := range w.net.proxy.Blocked() {
		out = append(out, BlockedRequest{Host: b.Host, Port: b.Port, Count: b.Count, Reason: b.Reason})
	}
	return out
}
