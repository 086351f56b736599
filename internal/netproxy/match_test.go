package netproxy

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParsePattern(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Pattern
		err  string
	}{
		{in: "example.com", want: Pattern{Host: "example.com"}},
		{in: "Example.COM.", want: Pattern{Host: "example.com"}},
		{in: "*.example.com", want: Pattern{Host: "example.com", Wildcard: true}},
		{in: "registry.npmjs.org:443", want: Pattern{Host: "registry.npmjs.org", Port: 443}},
		{in: "*.pypi.org:8443", want: Pattern{Host: "pypi.org", Wildcard: true, Port: 8443}},
		{in: "10.1.2.3", want: Pattern{Host: "10.1.2.3"}},
		{in: "10.1.2.3:80", want: Pattern{Host: "10.1.2.3", Port: 80}},
		{in: "::1", want: Pattern{Host: "::1"}},
		{in: "[::1]:8080", want: Pattern{Host: "::1", Port: 8080}},
		{in: "under_score.example", want: Pattern{Host: "under_score.example"}},
		{in: "", err: "empty"},
		{in: "https://example.com", err: `not a https URL: give "example.com"`},
		{in: "http://example.com:8080/path", err: `not a http URL: give "example.com:8080"`},
		{in: "fe80::1%lo", err: "zone"},
		{in: "[fe80::1%lo]:443", err: "zone"},
		{in: "*", err: "label"},
		{in: "*.", err: "character '*'"},
		{in: "*..", err: "empty name"},
		{in: "a.*.com", err: "character '*'"},
		{in: "**.com", err: "character '*'"},
		{in: "example.com:0", err: "port"},
		{in: "example.com:65536", err: "port"},
		{in: "example.com:08", err: "port"},
		{in: "example.com:", err: "port"},
		{in: "exa mple.com", err: "character ' '"},
		{in: "-a.com", err: "starts or ends"},
		{in: "a..com", err: "1 to 63"},
		{in: strings.Repeat("a", 64) + ".com", err: "1 to 63"},
		{in: strings.Repeat("a.", 130) + "com", err: "253"},
		{in: "[::1", err: "unclosed"},
		{in: "[1.2.3.4]", err: "IPv6"},
		{in: "http://example.com", err: "port"},
	} {
		got, err := ParsePattern(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParsePattern(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParsePattern(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if again, err := ParsePattern(got.String()); err != nil || again != got {
			t.Errorf("ParsePattern(%q.String() = %q) = %+v, %v", tc.in, got.String(), again, err)
		}
	}
}

func mustPatterns(t testing.TB, ss ...string) []Pattern {
	t.Helper()
	var out []Pattern
	for _, s := range ss {
		p, err := ParsePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestDecide(t *testing.T) {
	r := Rules{
		Allow: mustPatterns(t, "example.com", "*.npmjs.org", "api.test:8443", "10.0.0.7", "*.corp.test", "*.0.2.2"),
		Deny:  mustPatterns(t, "evil.corp.test", "*.secret.corp.test"),
	}
	for _, tc := range []struct {
		host   string
		port   int
		ok     bool
		reason string
	}{
		{"example.com", 443, true, ""},
		{"EXAMPLE.com.", 80, true, ""},
		{"www.example.com", 443, false, "allow-domains"},
		{"registry.npmjs.org", 443, true, ""},
		{"a.b.npmjs.org", 443, true, ""},
		{"npmjs.org", 443, false, "allow-domains"},
		{"evilnpmjs.org", 443, false, "allow-domains"},
		{"api.test", 8443, true, ""},
		{"api.test", 443, false, "allow-domains"},
		{"10.0.0.7", 22, true, ""},
		{"[10.0.0.7]", 22, true, ""},
		{"10.0.0.8", 22, false, "IP address"},
		{"::ffff:10.0.0.7", 22, true, ""},
		{"git.corp.test", 443, true, ""},
		{"evil.corp.test", 443, false, "deny-domains (evil.corp.test)"},
		{"x.secret.corp.test", 443, false, "deny-domains"},
		{"bad name", 443, false, "not a valid"},
		// An address with a zone that ends like an allowed suffix is an
		// address, not a name (a way past a wildcard).
		{"2001:db8::5%.corp.test", 443, false, "zone"},
		{"[2001:db8::5%.corp.test]", 443, false, "zone"},
		{"::1%.corp.test", 443, false, "zone"},
		{"fe80::1%eth0", 443, false, "zone"},
		{"2001:db8::5%25.corp.test", 443, false, "zone"},
		// A wildcard never matches an IP literal.
		{"192.0.2.2", 443, false, "IP address"},
		{"1.0.2.2", 80, false, "IP address"},
		{"[::1]x", 443, false, "malformed"},
	} {
		d := r.Decide(tc.host, tc.port)
		if d.Allowed != tc.ok || !strings.Contains(d.Reason, tc.reason) {
			t.Errorf("Decide(%q, %d) = %+v; want allowed %v, reason with %q", tc.host, tc.port, d, tc.ok, tc.reason)
		}
	}
}

func TestPrivate(t *testing.T) {
	for _, tc := range []struct {
		a    string
		want bool
	}{
		{"127.0.0.1", true}, {"127.8.9.1", true}, {"10.1.1.1", true}, {"172.16.0.1", true},
		{"192.168.1.1", true}, {"169.254.169.254", true}, {"100.64.0.1", true}, {"0.0.0.0", true},
		{"::1", true}, {"fe80::1", true}, {"fd00::1", true}, {"::ffff:127.0.0.1", true}, {"::", true},
		{"224.0.0.1", true}, {"8.8.8.8", false}, {"93.184.216.34", false}, {"2606:4700::1111", false},
		{"64:ff9b::a00:5", true}, {"2002:a00:5::1", true}, {"fec0::1", true},
	} {
		if got := Private(netip.MustParseAddr(tc.a)); got != tc.want {
			t.Errorf("Private(%s) = %v, want %v", tc.a, got, tc.want)
		}
	}
}
