package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The runner verdict cache. A provider probes every candidate once per
// lifetime, and each sandbox-run is a new provider: with two Linux
// candidates that is a namespaces probe (one sandbox launch) before every
// command. sandbox-run therefore remembers the runner auto-selection chose,
// for an hour, keyed by everything that decides it: this binary (path,
// size, modification time), the kernel and its boot, the user. A cached
// runner is then taken as the sole candidate (its cheap readiness check
// still runs: user-namespace sysctls, Landlock, seccomp). A stale entry
// cannot run anything unconfined: the cached runner fails closed (exit 125
// with its fatal line) and is not trusted past an hour.
const cacheTTL = time.Hour

type cacheEntry struct {
	Key    string    `json:"key"`
	Runner string    `json:"runner"`
	Time   time.Time `json:"time"`
}

func cachePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "sandbox-local", "runner.json"), nil
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

// cachedRunner returns the remembered runner, or "".
func cachedRunner() string {
	p, err := cachePath()
	if err != nil {
		return ""
	}
	key, err := cacheKey()
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || e.Key != key || time.Since(e.Time) > cacheTTL || time.Until(e.Time) > time.Minute {
		return ""
	}
	return e.Runner
}

// rememberRunner stores runner for the next sandbox-run; errors only cost
// the next run a probe.
func rememberRunner(runner string) {
	p, err := cachePath()
	if err != nil {
		return
	}
	key, err := cacheKey()
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return
	}
	b, _ := json.Marshal(cacheEntry{Key: key, Runner: runner, Time: time.Now()})
	tmp, err := os.CreateTemp(filepath.Dir(p), ".runner-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}

// forgetRunner drops the cache after the cached runner failed.
func forgetRunner() {
	if p, err := cachePath(); err == nil {
		os.Remove(p)
	}
}
