package sandbox

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// TestValidateNetwork: what the proxied network and the local ports keep
// of a valid policy.
func TestValidateNetwork(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pol         Policy
		proxied     bool
		allow, deny int
		local       []int
	}{
		{"deny", Policy{}, false, 0, 0, nil},
		{"deny with local ports", Policy{AllowLocalPorts: []int{5432, 3000, 5432}}, false, 0, 0, []int{5432, 3000}},
		{"proxied, nothing allowed", Policy{Network: NetworkProxied}, true, 0, 0, nil},
		{"proxied", Policy{Network: NetworkProxied, AllowDomains: []string{"*.github.com", "proxy.golang.org:443", "10.0.0.1"},
			DenyDomains: []string{"gist.github.com"}, AllowPrivateDestinations: true, AllowLocalPorts: []int{8080}}, true, 3, 1, []int{8080}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := validateNetwork(tc.pol)
			if err != nil {
				t.Fatal(err)
			}
			if n.proxied() != tc.proxied || len(n.rules.Allow) != tc.allow || len(n.rules.Deny) != tc.deny ||
				!slices.Equal(n.localPorts, tc.local) || n.rules.AllowPrivate != tc.pol.AllowPrivateDestinations {
				t.Errorf("got %+v", n)
			}
			if n.needsPorts() != (tc.proxied || len(tc.local) > 0) {
				t.Errorf("needsPorts %v", n.needsPorts())
			}
		})
	}
}

// TestProxyEnv: every client family is pointed at the proxy, in both
// cases where clients differ; the caller's JAVA_TOOL_OPTIONS are kept.
func TestProxyEnv(t *testing.T) {
	env := proxyEnv(41234, func(name string) string {
		if name == "JAVA_TOOL_OPTIONS" {
			return "-Xmx1g"
		}
		return ""
	})
	want := map[string]string{
		"http_proxy": "http://127.0.0.1:41234", "HTTP_PROXY": "http://127.0.0.1:41234",
		"https_proxy": "http://127.0.0.1:41234", "HTTPS_PROXY": "http://127.0.0.1:41234",
		"all_proxy": "socks5h://127.0.0.1:41234", "ALL_PROXY": "socks5h://127.0.0.1:41234",
		"no_proxy": "localhost,127.0.0.1,::1", "NO_PROXY": "localhost,127.0.0.1,::1",
		"npm_config_proxy": "http://127.0.0.1:41234", "npm_config_https_proxy": "http://127.0.0.1:41234",
		"PIP_PROXY": "http://127.0.0.1:41234", "CARGO_HTTP_PROXY": "http://127.0.0.1:41234",
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	java := got["JAVA_TOOL_OPTIONS"]
	if !strings.HasPrefix(java, "-Xmx1g ") || !strings.Contains(java, "-Dhttps.proxyPort=41234") || !strings.Contains(java, "-Dhttp.proxyHost=127.0.0.1") {
		t.Errorf("JAVA_TOOL_OPTIONS = %q", java)
	}
}

// TestProxyAliasesIn: the caller's other spellings of npm's and yarn's
// proxy settings are unset, the wrap's own and every other variable kept.
func TestProxyAliasesIn(t *testing.T) {
	set := proxyEnv(41234, func(string) string { return "" })
	env := []string{"NPM_CONFIG_HTTPS_PROXY=http://corp:3128", "Npm_Config_Proxy=http://corp:3128",
		"yarn_https_proxy=http://corp:3128", "YARN_PROXY=http://corp:3128", "npm_config_registry=https://r",
		"yarn_cache_folder=/c", "PATH=/bin", "npm_config_https_proxy=http://corp:3128"}
	got := setVars(env, set, proxyAliasesIn(env, set))
	want := append([]string{"npm_config_registry=https://r", "yarn_cache_folder=/c", "PATH=/bin"}, set...)
	if !slices.Equal(got, want) {
		t.Errorf("setVars with proxyAliasesIn = %q, want %q", got, want)
	}
}

// plainRunner confines no loopback ports (its traits say portsNone).
type plainRunner struct{ fakeRunner }

// TestPortsNeedAPortRunner: a runner that cannot hold a command to the
// proxy's port is SANDBOX_UNAVAILABLE for the proxied network and local
// ports, never a wider network; the same runner wraps network deny.
func TestPortsNeedAPortRunner(t *testing.T) {
	run := &plainRunner{fakeRunner{n: "plain"}}
	for _, pol := range []Policy{{Network: NetworkProxied}, {AllowLocalPorts: []int{5432}}} {
		r, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: ReadOnly, Workspace: t.TempDir(), Network: pol.Network, AllowLocalPorts: pol.AllowLocalPorts}})
		if err != nil {
			t.Fatal(err)
		}
		part, err := startNetwork(run, r, "", &Wrapped{}, nil)
		if !errors.Is(err, ErrUnavailable) || len(part.ports) != 0 {
			t.Errorf("%+v: %v, ports %v; want SANDBOX_UNAVAILABLE", pol, err, part.ports)
		}
	}
	r, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: ReadOnly, Workspace: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if part, err := startNetwork(run, r, "", &Wrapped{}, nil); err != nil || part.mode != vocab.NetworkDeny {
		t.Errorf("control, network deny: %v, mode %v", err, part.mode)
	}
}
