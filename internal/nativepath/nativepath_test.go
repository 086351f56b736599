package nativepath

import (
	"runtime"
	"testing"
)

func TestWithin(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("slash paths")
	}
	cases := []struct {
		p, root string
		want    bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/bc", "/a/b", false},
		{"/a", "/a/b", false},
		{"/anything", "/", true},
		{"/a/b/", "/a/b", true},      // cleaned first
		{"/a/b/c", "/a/b/", true},    // cleaned first
		{"/a/b/../c", "/a/b", false}, // cleaned first
		{"/a/..b", "/a", true},       // a name starting with dots
	}
	for _, c := range cases {
		if got := Within(c.p, c.root); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.p, c.root, got, c.want)
		}
	}
}
