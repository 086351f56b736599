package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bo-agent/sandbox-local/internal/selfexe"
)

// The runner verdict cache (Config.VerdictCache). A provider probes its
// candidates once per lifetime; a short-lived consumer (a CLI that wraps
// one command) is a new provider every time, and the namespaces probe is a
// whole sandbox launch. With the cache, the provider remembers for an hour
// that its preferred runner passed its probe, keyed by everything the
// verdict depends on: the binary (path, size, modification time), the
// kernel and its boot, the user, and the knobs that switch user namespaces
// off.
//
// The cache can only ever skip the preferred runner's probe, never choose
// another runner, and it lives where no wrap can write: in the per-user
// private temp parent (<TMPDIR>/sandbox-local-<uid>, owner-checked; see
// tempdir.go), whose only entries a command can write are its own wrap
// dir, and which no writable root may contain (makeTemp refuses such a
// policy). An entry forged from inside would otherwise make every later
// run fail at launch for an hour, on a machine where the preferred runner
// does not work (an agent then tends to retry unconfined). A verdict that
// turns out wrong all the same (the machine changed in a way the key does
// not see) fails closed at launch, and Classify, seeing that runner
// failure on a wrap selected from the cache, drops the entry.
const verdictTTL = time.Hour

const verdictFile = "verdict.json"

type verdictEntry struct {
	Key    string    `json:"key"`
	Runner string    `json:"runner"`
	Time   time.Time `json:"time"`
}

// usernsKnobs are the sysctls that turn unprivileged user namespaces off
// (an admin, a hardening script): part of the key, so flipping one
// invalidates the verdict at once.
var usernsKnobs = []string{"/proc/sys/user/max_user_namespaces", "/proc/sys/kernel/unprivileged_userns_clone",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_userns"}

// verdictKey describes what a verdict depends on.
func verdictKey() (string, error) {
	exe, err := selfexe.Path()
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", err
	}
	read := func(p string) string {
		b, _ := os.ReadFile(p)
		return strings.TrimSpace(string(b))
	}
	parts := []string{exe, fmt.Sprint(fi.Size()), fmt.Sprint(fi.ModTime().UnixNano()),
		read("/proc/sys/kernel/osrelease"), read("/proc/sys/kernel/random/boot_id"), fmt.Sprint(os.Getuid())}
	for _, k := range usernsKnobs {
		parts = append(parts, read(k))
	}
	return strings.Join(parts, "|"), nil
}

// cachedVerdict reports whether the cache says preferred passed its probe
// here.
func cachedVerdict(preferred string) bool {
	parent, err := tempParent()
	if err != nil {
		return false
	}
	key, err := verdictKey()
	if err != nil {
		return false
	}
	b, err := readNoFollow(filepath.Join(parent, verdictFile))
	if err != nil {
		return false
	}
	var e verdictEntry
	return json.Unmarshal(b, &e) == nil && e.Key == key && e.Runner == preferred &&
		time.Since(e.Time) <= verdictTTL && time.Until(e.Time) <= time.Minute
}

// rememberVerdict stores that runner passed its probe; errors only cost a
// later provider a probe.
func rememberVerdict(runner string) {
	parent, err := tempParent()
	if err != nil {
		return
	}
	key, err := verdictKey()
	if err != nil {
		return
	}
	b, _ := json.Marshal(verdictEntry{Key: key, Runner: runner, Time: time.Now()})
	tmp, err := os.CreateTemp(parent, ".verdict-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	// rename replaces a planted symlink itself, never its target.
	if os.Rename(tmp.Name(), filepath.Join(parent, verdictFile)) != nil {
		os.Remove(tmp.Name())
	}
}

// forgetVerdict drops the cached verdict (a symlink there is removed
// itself, never followed).
func forgetVerdict() {
	if parent, err := tempParent(); err == nil {
		os.Remove(filepath.Join(parent, verdictFile))
	}
}

// readNoFollow reads a small regular file without following a final
// symlink.
func readNoFollow(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return io.ReadAll(io.LimitReader(f, 4096))
}
