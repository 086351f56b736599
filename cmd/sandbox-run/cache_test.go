package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRunnerCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if got := cachedRunner("namespaces"); got != "" {
		t.Fatalf("empty cache gave %q", got)
	}
	rememberRunner("namespaces")
	if got := cachedRunner("namespaces"); got != "namespaces" {
		t.Fatalf("cachedRunner = %q, want namespaces", got)
	}
	dir, _ := cacheDir()
	p := filepath.Join(dir, "runner.json")
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
		// A command that can write the cache must not downgrade the runner.
		"a weaker runner": func(e *cacheEntry) { e.Runner = "landlock" },
	} {
		rememberRunner("namespaces")
		edit(f)
		if got := cachedRunner("namespaces"); got != "" {
			t.Errorf("%s: cachedRunner = %q, want none", name, got)
		}
	}
	os.WriteFile(p, []byte("not json"), 0o600)
	if got := cachedRunner("namespaces"); got != "" {
		t.Errorf("garbage cache gave %q", got)
	}
	rememberRunner("namespaces")
	forgetRunner()
	if got := cachedRunner("namespaces"); got != "" {
		t.Errorf("after forgetRunner: %q", got)
	}
}

func TestRunnerCacheRefusesAPlantedDirectory(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", base)
	victim := t.TempDir()
	if err := os.Symlink(victim, filepath.Join(base, "sandbox-local")); err != nil {
		t.Fatal(err)
	}
	rememberRunner("namespaces")
	forgetRunner()
	if ents, _ := os.ReadDir(victim); len(ents) != 0 {
		t.Fatalf("the cache wrote through a planted symlink: %v", ents)
	}
	os.Remove(filepath.Join(base, "sandbox-local"))
	os.Mkdir(filepath.Join(base, "sandbox-local"), 0o777)
	os.Chmod(filepath.Join(base, "sandbox-local"), 0o777)
	rememberRunner("namespaces")
	if got := cachedRunner("namespaces"); got != "" {
		t.Fatalf("a world-writable cache directory was trusted")
	}
}
