package sandbox

import (
	"strconv"

	"github.com/bo-agent/sandbox-local/internal/netproxy"
	"github.com/bo-agent/sandbox-local/internal/vocab"
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
// encodes spec: the proxy for NetworkProxied (its port first in
// spec.Ports, then the allowed local ports), the bridge for a runner that
// bridges them (portsBridged), and the proxy's variables; Cleanup stops
// them.
func startNetwork(run runner, r *resolved, spec *vocab.Spec, w *Wrapped, resolver Resolver) error {
	w.Network = r.networkMode
	if !r.network.needsPorts() {
		return nil
	}
	ports := run.traits().ports
	if ports == portsNone {
		return unavailable(run.name(), "this runner cannot yet hold a command to the domain proxy or to local ports", nil)
	}
	n := &wrapNet{}
	proxyPort := 0
	if r.network.proxied {
		cfg := netproxy.Config{Rules: r.network.rules}
		if resolver != nil {
			cfg.Resolver = resolver
		}
		px, err := netproxy.Start(cfg)
		if err != nil {
			return unavailable(run.name(), "cannot start the domain proxy", err)
		}
		n.proxy = px
		proxyPort = px.Addr().Port
		spec.Network = vocab.NetworkProxied
		spec.Ports = append(spec.Ports, proxyPort)
		w.Proxy = "http://127.0.0.1:" + strconv.Itoa(proxyPort)
		w.netVars = proxyEnv(proxyPort, func(name string) string { return envValue(r.env, name) })
	}
	spec.Ports = append(spec.Ports, r.network.localPorts...)
	if ports == portsBridged {
		b, err := startBridge(bridgePath(w.TempDir), spec.Token, n.proxy, proxyPort, r.network.localPorts)
		if err != nil {
			n.close()
			return unavailable(run.name(), "cannot start the loopback bridge", err)
		}
		n.bridge = b
		spec.Bridge = b.path
	}
	w.net = n
	return nil
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
