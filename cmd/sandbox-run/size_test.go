package main

import "testing"

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"4096", 4096, true}, {"64M", 64 << 20, true}, {"64m", 64 << 20, true},
		{"8K", 8 << 10, true}, {"2G", 2 << 30, true}, {"1T", 1 << 40, true},
		{"", 0, false}, {"M", 0, false}, {"-1", 0, false}, {"1.5G", 0, false}, {"64MB", 0, false},
		{"9999999999999T", 0, false},
	} {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
