// Package netproxy is the proxy of a proxied network policy: an HTTP
// forward proxy (plain http://), CONNECT tunnels and SOCKS5 with domain
// names, all on one loopback port, that lets a command reach only the
// domains a policy allows. It resolves every name itself, dials exactly
// the address it checked (so a name cannot be re-resolved to another one
// after the check), refuses IP literals and private destinations unless
// allowed, never decrypts TLS, and records what it refused.
package netproxy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Pattern is one domain rule: an exact name ("example.com"), a wildcard
// ("*.example.com": every name beneath example.com, not example.com
// itself), or an IP literal; Port 0 means any port.
type Pattern struct {
	// Host is the lower-case name without the "*." of a wildcard, or the
	// IP literal in its canonical form.
	Host string
	// Wildcard says the pattern matches the names beneath Host.
	Wildcard bool
	// Port, when not 0, is the only port the pattern matches.
	Port int
}

// String returns the pattern as ParsePattern takes it.
func (p Pattern) String() string {
	h := p.Host
	if p.Wildcard {
		h = "*." + h
	}
	if p.Port == 0 {
		return h
	}
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h + ":" + strconv.Itoa(p.Port)
}

// IsIP says whether the pattern names an IP literal.
func (p Pattern) IsIP() bool {
	_, err := netip.ParseAddr(p.Host)
	return err == nil
}

// ParsePattern parses "name", "*.name", "name:port", "1.2.3.4",
// "[::1]:443" and the like. Names are DNS names (letters, digits, '-' and
// '_' in labels of 1 to 63 characters, at most 253 in all); a wildcard
// only as the whole first label.
func ParsePattern(s string) (Pattern, error) {
	var p Pattern
	orig := s
	if s == "" {
		return p, fmt.Errorf("empty domain pattern")
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		// A URL where a host name belongs: say what is wanted, naming
		// the host the user most likely meant.
		host, _, _ := strings.Cut(rest, "/")
		return p, fmt.Errorf("domain pattern %q: a host name (with an optional :port) is wanted, not a %s URL: give %q", orig, scheme, host)
	}
	host := s
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return p, fmt.Errorf("domain pattern %q: unclosed [", orig)
		}
		host = s[1:end]
		rest := s[end+1:]
		if rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return p, fmt.Errorf("domain pattern %q: junk after ]", orig)
			}
			port, err := parsePort(rest[1:])
			if err != nil {
				return p, fmt.Errorf("domain pattern %q: %w", orig, err)
			}
			p.Port = port
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return p, fmt.Errorf("domain pattern %q: not an IPv6 address (without a zone) in brackets", orig)
		}
		p.Host = a.String()
		return p, nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		if a.Zone() != "" {
			return p, fmt.Errorf("domain pattern %q: an IPv6 zone is not a destination", orig)
		}
		if a.Is6() {
			p.Host = a.String()
			return p, nil
		}
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		port, err := parsePort(s[i+1:])
		if err != nil {
			return p, fmt.Errorf("domain pattern %q: %w", orig, err)
		}
		p.Port = port
		host = s[:i]
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Is6() || a.Zone() != "" {
			return p, fmt.Errorf("domain pattern %q: an IPv6 address with a port goes in brackets", orig)
		}
		p.Host = a.String()
		return p, nil
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if strings.HasPrefix(host, "*.") {
		p.Wildcard = true
		host = host[2:]
	}
	if err := checkName(host); err != nil {
		return p, fmt.Errorf("domain pattern %q: %w", orig, err)
	}
	p.Host = host
	return p, nil
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return n, nil
}

// checkName accepts a lower-case DNS name.
func checkName(h string) error {
	if h == "" {
		return fmt.Errorf("empty name")
	}
	if len(h) > 253 {
		return fmt.Errorf("name longer than 253 characters")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("label %q must have 1 to 63 characters", label)
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("label %q starts or ends with '-'", label)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("label %q has the character %q", label, c)
			}
		}
	}
	return nil
}

// matches says whether p matches the normalised host and port; isIP says
// the host is an IP literal, which only an exact pattern matches (a
// wildcard is about names: "*.2.2" must not match 192.0.2.2).
func (p Pattern) matches(host string, isIP bool, port int) bool {
	if p.Port != 0 && p.Port != port {
		return false
	}
	if p.Wildcard {
		return !isIP && strings.HasSuffix(host, "."+p.Host)
	}
	return host == p.Host
}

// Rules is what the proxy lets through.
type Rules struct {
	// Allow are the destinations the proxy connects to.
	Allow []Pattern
	// Deny wins over Allow.
	Deny []Pattern
	// AllowPrivate lets a destination be a loopback, private, link-local
	// or otherwise non-public address. Off, a name that resolves to one is
	// refused (DNS rebinding), and so is an allowed IP literal of one.
	AllowPrivate bool
}

// Decision is the proxy's word on one destination before resolution.
type Decision struct {
	// Allowed says whether the name may be resolved and dialled.
	Allowed bool
	// Reason says why not.
	Reason string
}

// normalise lower-cases host, drops a trailing dot and brackets, and
// canonicalises an IP literal; ip says whether it is one. An address with
// a zone ("fe80::1%eth0", or "2001:db8::5%.example.com", which a suffix
// match would take for a name) is an IP literal too, kept with its zone so
// that no pattern matches it and Decide refuses it.
func normalise(host string) (string, bool) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String(), true
	}
	if strings.ContainsAny(host, "%:") {
		return host, true // not a name: an IP literal in a form netip refuses
	}
	return strings.ToLower(strings.TrimSuffix(host, ".")), false
}

// Decide says whether host:port may be reached, by the patterns only
// (the addresses it resolves to are checked when it is dialled).
func (r Rules) Decide(host string, port int) Decision {
	h, isIP := normalise(host)
	if isIP {
		if a, err := netip.ParseAddr(h); err != nil || a.Zone() != "" {
			return Decision{Reason: "an IP address with a zone, or malformed: not a destination"}
		}
	}
	for _, p := range r.Deny {
		if p.matches(h, isIP, port) {
			return Decision{Reason: "denied by the policy's deny-domains (" + p.String() + ")"}
		}
	}
	for _, p := range r.Allow {
		if p.matches(h, isIP, port) {
			return Decision{Allowed: true}
		}
	}
	if isIP {
		return Decision{Reason: "an IP address, not a name the policy allows"}
	}
	if !isIP && checkName(h) != nil {
		return Decision{Reason: "not a valid domain name"}
	}
	return Decision{Reason: "not in the policy's allow-domains"}
}

// privatePrefixes are the non-public ranges netip has no predicate for.
var privatePrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	// NAT64 (RFC 6052) and 6to4 embed an IPv4 address, a private one
	// included; site-local is deprecated but still routed on some networks.
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("fec0::/10"),
}

// Private says whether a is loopback, private, link-local, multicast,
// unspecified or another range that is not the public internet.
func Private(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsMulticast() || a.IsUnspecified() || a.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range privatePrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
