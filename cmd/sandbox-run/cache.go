package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bo-agent/sandbox-local/internal/privdir"
)

// The runner verdict cache. A provider probes every candidate once per
// lifetime, and each sandbox-run is a new provider: with two Linux
// candidates that is a namespaces probe (one sandbox launch) before every
// command. sandbox-run therefore remembers, for an hour, that the preferred
// runner passed its probe, keyed by everything that decides it: this
// binary (path, size, modification time), the kernel and its boot, the
// user.
//
// The cache can only ever skip the probe of the preferred runner, never
// choose another: a command that can write the cache (a writable
// ~/.cache) could otherwise downgrade every later run to a weaker runner.
// A stale entry runs nothing unconfined either: the preferred runner's
// readiness check still runs, and if it cannot confine, its launcher fails
// closed (exit 125 with its fatal line). The cache directory must be a
// real directory of this user with no access for others, or it is not
// used.
const cacheTTL = time.Hour

type cacheEntry struct {
	Key    string    `json:"key"`
	Runner string    `json:"runner"`
	Time   time.Time `json:"time"`
}

// cacheDir returns the cache directory, creating it 0700, or an error when
// it is not a private directory of this user (a symlink planted there would
// let the CLI create and remove files elsewhere).
func cacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "sandbox-local")
	if err := privdir.Ensure(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// cacheKey describes what the verdict depends on.
func cacheKey() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", err
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("%s|%d|%d|%s|%s|%d", exe, fi.Size(), fi.ModTime().UnixNano(),
		strings.TrimSpace(string(kernel)), strings.TrimSpace(string(boot)), os.Getuid()), nil
}

// cachedRunner returns preferred if the cache says it passed its probe
// here, or "".
func cachedRunner(preferred string) string {
	dir, err := cacheDir()
	if err != nil {
		return ""
	}
	key, err := cacheKey()
	if err != nil {
		return ""
	}
	b, err := readNoFollow(filepath.Join(dir, "runner.json"))
	if err != nil {
		return ""
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || e.Key != key || e.Runner != preferred ||
		time.Since(e.Time) > cacheTTL || time.Until(e.Time) > time.Minute {
		return ""
	}
	return preferred
}

// rememberRunner stores that runner passed its probe; errors only cost the
// next run a probe.
func rememberRunner(runner string) {
	dir, err := cacheDir()
	if err != nil {
		return
	}
	key, err := cacheKey()
	if err != nil {
		return
	}
	b, _ := json.Marshal(cacheEntry{Key: key, Runner: runner, Time: time.Now()})
	tmp, err := os.CreateTemp(dir, ".runner-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	// rename replaces a planted symlink itself, never its target.
	if os.Rename(tmp.Name(), filepath.Join(dir, "runner.json")) != nil {
		os.Remove(tmp.Name())
	}
}

// forgetRunner drops the cache after the cached runner failed.
func forgetRunner() {
	if dir, err := cacheDir(); err == nil {
		os.Remove(filepath.Join(dir, "runner.json")) // removes a symlink itself, not its target
	}
}
