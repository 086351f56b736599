package netproxy

// NoProxy is the NO_PROXY a proxied command gets: loopback only, so an
// allowed local port (or a server the command starts itself) is reached
// directly. It must never name a domain the policy decides on: a client
// sends a NO_PROXY name around the proxy.
const NoProxy = "localhost,127.0.0.1,::1"

// ClientEnv is what points the common clients at a proxy listening at
// addr (host:port), as NAME=value: http_proxy, https_proxy, all_proxy
// (socks5h, so the client sends the name) and no_proxy in both cases
// (curl reads only the lower-case http_proxy, others the upper case),
// npm's npm_config_proxy and npm_config_https_proxy, PIP_PROXY and
// CARGO_HTTP_PROXY (the tools' own settings, which win over their config
// files). integration/netclients_test.go shows which client reads which.
func ClientEnv(addr string) []string {
	httpURL, socksURL := "http://"+addr, "socks5h://"+addr
	return []string{
		"http_proxy=" + httpURL, "HTTP_PROXY=" + httpURL,
		"https_proxy=" + httpURL, "HTTPS_PROXY=" + httpURL,
		"all_proxy=" + socksURL, "ALL_PROXY=" + socksURL,
		"no_proxy=" + NoProxy, "NO_PROXY=" + NoProxy,
		"npm_config_proxy=" + httpURL, "npm_config_https_proxy=" + httpURL,
		"PIP_PROXY=" + httpURL,
		"CARGO_HTTP_PROXY=" + httpURL,
	}
}
