package sandbox

import (
	"context"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/netproxy"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// Resolver resolves the names the proxy of NetworkProxied connects to;
// net.DefaultResolver is one. Tests give their own (Config.Resolver) to
// map test names to servers on the machine.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// BlockedRequest is one destination the proxy refused during a wrap, and
// how often: what an agent asks its user to allow (Policy.AllowDomains).
type BlockedRequest struct {
	// Host is the name (or IP literal) the command asked for.
	Host string `json:"host"`
	// Port is the port it asked for.
	Port int `json:"port"`
	// Count is how many requests were refused.
	Count int `json:"count"`
	// Reason is why the first one was.
	Reason string `json:"reason"`
}

// maxLocalPorts bounds Policy.AllowLocalPorts (the namespaces launcher
// passes one descriptor per port in a single message).
const maxLocalPorts = 64

// netPolicy is the validated network part of a policy that needs loopback
// ports: the proxy's rules when proxied, and the local ports.
type netPolicy struct {
	mode       NetworkMode // deny, allow or proxied: never ""
	rules      netproxy.Rules
	localPorts []int
}

// proxied reports whether the network is the domain proxy's.
func (n netPolicy) proxied() bool { return n.mode == NetworkProxied }

// launcherMode is the mode on the launcher's wire.
func (n netPolicy) launcherMode() vocab.NetMode {
	switch n.mode {
	case NetworkAllow:
		return vocab.NetworkAllow
	case NetworkProxied:
		return vocab.NetworkProxied
	}
	return vocab.NetworkDeny
}

// needsPorts reports whether the command gets loopback ports: the proxy's,
// or allowed local ones.
func (n netPolicy) needsPorts() bool { return n.proxied() || len(n.localPorts) > 0 }

// validateNetwork checks the fields of NetworkProxied and AllowLocalPorts.
func validateNetwork(p Policy) (netPolicy, error) {
	n := netPolicy{mode: networkName(p.Network)}
	if !n.proxied() {
		switch {
		case len(p.AllowDomains) > 0:
			return n, invalidf("allow_domains needs network %q (it is %q)", NetworkProxied, networkName(p.Network))
		case len(p.DenyDomains) > 0:
			return n, invalidf("deny_domains needs network %q (it is %q)", NetworkProxied, networkName(p.Network))
		case p.AllowPrivateDestinations:
			return n, invalidf("allow_private_destinations needs network %q (it is %q)", NetworkProxied, networkName(p.Network))
		}
	}
	for _, list := range []struct {
		what string
		in   []string
		out  *[]netproxy.Pattern
	}{{"allow_domains", p.AllowDomains, &n.rules.Allow}, {"deny_domains", p.DenyDomains, &n.rules.Deny}} {
		for _, d := range list.in {
			if err := checkNUL(list.what+" entry", d); err != nil {
				return n, err
			}
			pat, err := netproxy.ParsePattern(d)
			if err != nil {
				return n, &Error{Code: CodeInvalidPolicy, Reason: list.what + " entry " + strconv.Quote(d), Err: err}
			}
			*list.out = append(*list.out, pat)
		}
	}
	n.rules.AllowPrivate = p.AllowPrivateDestinations
	if len(p.AllowLocalPorts) > 0 && p.Network == NetworkAllow {
		return n, invalidf("allow_local_ports under network %q, which reaches every port anyway", NetworkAllow)
	}
	for _, port := range p.AllowLocalPorts {
		if port < 1 || port > 65535 {
			return n, invalidf("allow_local_ports: %d is not a TCP port (1 to 65535)", port)
		}
		if !slices.Contains(n.localPorts, port) {
			n.localPorts = append(n.localPorts, port)
		}
	}
	if len(n.localPorts) > maxLocalPorts {
		return n, invalidf("allow_local_ports: %d ports, at most %d", len(n.localPorts), maxLocalPorts)
	}
	return n, nil
}

func networkName(m NetworkMode) NetworkMode {
	if m == "" {
		return NetworkDeny
	}
	return m
}

// proxyAliases are the proxy settings npm and yarn 1 read under other
// spellings than the ones proxyEnv sets: npm every npm_config_* variable
// in any case, yarn 1 every yarn_* one, over the npm_config_* ones. A
// caller's value names a proxy the command cannot reach, so under the
// proxied network the wrap drops them.
var proxyAliases = []string{"npm_config_proxy", "npm_config_https_proxy", "yarn_proxy", "yarn_https_proxy"}

// proxyAliasesIn names the variables of env that spell one of
// proxyAliases, in any case, other than the names set (the wrap's own,
// NAME=value) gives: what the wrap unsets.
func proxyAliasesIn(env, set []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if slices.ContainsFunc(proxyAliases, func(a string) bool { return strings.EqualFold(a, name) }) &&
			!slices.ContainsFunc(set, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
			out = append(out, name)
		}
	}
	return out
}

// proxyEnv is what the wrap sets so that the common clients use the proxy
// listening at 127.0.0.1:port (netproxy.ClientEnv), and JAVA_TOOL_OPTIONS:
// the JVM reads no variable, only system properties (Maven, Gradle); they
// are appended to the caller's options, prev being the value of a variable
// in the command's environment before these are set.
func proxyEnv(port int, prev func(string) string) []string {
	p := strconv.Itoa(port)
	java := "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=" + p +
		" -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=" + p +
		" -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]"
	if old := strings.TrimSpace(prev("JAVA_TOOL_OPTIONS")); old != "" {
		java = old + " " + java
	}
	return append(netproxy.ClientEnv("127.0.0.1:"+p), "JAVA_TOOL_OPTIONS="+java)
}
