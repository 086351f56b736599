package main

import (
	"encoding/json"
	"os"
	"testing"
	"time"
)

func TestRunnerCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if got := cachedRunner(); got != "" {
		t.Fatalf("empty cache gave %q", got)
	}
	rememberRunner("landlock")
	if got := cachedRunner(); got != "landlock" {
		t.Fatalf("cachedRunner = %q, want landlock", got)
	}
	p, _ := cachePath()
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file %v %v, want mode 0600", fi, err)
	}
	edit := func(f func(*cacheEntry)) {
		b, _ := os.ReadFile(p)
		var e cacheEntry
		json.Unmarshal(b, &e)
		f(&e)
		b, _ = json.Marshal(e)
		os.WriteFile(p, b, 0o600)
	}
	for name, f := range map[string]func(*cacheEntry){
		"another binary or boot": func(e *cacheEntry) { e.Key += "x" },
		"older than the TTL":     func(e *cacheEntry) { e.Time = time.Now().Add(-2 * cacheTTL) },
		"from the future":        func(e *cacheEntry) { e.Time = time.Now().Add(time.Hour) },
	} {
		rememberRunner("landlock")
		edit(f)
		if got := cachedRunner(); got != "" {
			t.Errorf("%s: cachedRunner = %q, want none", name, got)
		}
	}
	os.WriteFile(p, []byte("not json"), 0o600)
	if got := cachedRunner(); got != "" {
		t.Errorf("garbage cache gave %q", got)
	}
	rememberRunner("namespaces")
	forgetRunner()
	if got := cachedRunner(); got != "" {
		t.Errorf("after forgetRunner: %q", got)
	}
}
