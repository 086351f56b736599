package sandbox

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bo-agent/sandbox-local/internal/privdir"
)

// Private temp dirs live in one parent per user, <TMPDIR>/sandbox-local-<uid>,
// each named wrap-<pid>-<random> after the process that made it. Cleanup
// removes a wrap's own; a process that died before Cleanup (killed, or
// crashed) leaves its dirs to the next provider of the same user, which
// removes those whose process is gone. Only the parent is read for that, never all of /tmp.

var sweepOnce sync.Once

// tempParent returns the per-user parent, creating it 0700. It refuses a
// parent that is not a real directory owned by this user with no access for
// others: on a shared /tmp another user could have planted it. Then it
// falls back to a parent of its own that cannot be squatted:
// sandbox-local-<uid>-<random>, made by mkdir (which fails on an existing
// name) and found again by later providers among the names with that
// prefix as the first that is a private directory of this user (another
// user can create such a name, but not one this user owns).
func tempParent() (string, error) {
	base := os.TempDir()
	name := "sandbox-local-" + strconv.Itoa(os.Getuid())
	parent := filepath.Join(base, name)
	err := privdir.Ensure(parent)
	if err == nil || !errors.Is(err, privdir.ErrNotPrivate) {
		return parent, err
	}
	squatted := err
	if cands, gerr := filepath.Glob(filepath.Join(base, name+"-*")); gerr == nil {
		sort.Strings(cands)
		for _, c := range cands {
			if privdir.Check(c) == nil {
				return c, nil
			}
		}
	}
	fallback, merr := os.MkdirTemp(base, name+"-")
	if merr == nil {
		merr = privdir.Check(fallback)
	}
	if merr != nil {
		return "", fmt.Errorf("%w; and no private fallback could be made beside it: %w (remove %s, or set TMPDIR to a directory only you can write)", squatted, merr, parent)
	}
	return fallback, nil
}

// newPrivateTemp creates a wrap's private temp dir, and once per process
// starts removing the dirs of processes that are gone.
func newPrivateTemp() (string, error) {
	parent, err := tempParent()
	if err != nil {
		return "", err
	}
	sweepOnce.Do(func() { go sweepStale(parent, math.MaxInt) })
	dir, err := os.MkdirTemp(parent, "wrap-"+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("create private temp dir: %w", err)
	}
	// Resolved like every other path the launcher gets: it refuses a
	// symlink anywhere on the temp dir's path (another sandbox could have
	// planted one), so a TMPDIR reached through a symlink must not look
	// like one.
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("resolve private temp dir: %w", err)
	}
	return real, nil
}

// SweepStale removes, now and in this goroutine, up to max private temp
// dirs of this user's processes that are gone, and returns how many it
// removed. A provider does this on its own in the background; a
// short-lived process (a CLI that wraps one command, and may end before a
// background sweep is done) calls it first, before its first Wrap.
func SweepStale(max int) int {
	parent, err := tempParent()
	if err != nil {
		return 0
	}
	n := 0
	sweepOnce.Do(func() { n = sweepStale(parent, max) })
	return n
}

// sweepStale removes up to max wrap dirs in parent whose process no longer
// exists. A reused pid keeps a dir until that process is gone too: never
// too early. The parent is private to this user and no wrap can write it
// (a wrap writes only inside its own dir, and no writable root may hold
// the temp directory), and RemoveAll follows no symlink, so nothing a
// command left in its dir steers the removal.
func sweepStale(parent string, max int) int {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if n >= max {
			break
		}
		pid, ok := wrapPID(e.Name())
		if !ok || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if removeTemp(filepath.Join(parent, e.Name())) == nil {
			n++
		}
	}
	return n
}

// wrapPID reads the pid out of a "wrap-<pid>-<random>" name.
func wrapPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "wrap-")
	if !ok {
		return 0, false
	}
	p, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	return pid, err == nil && pid > 0
}

// removeTemp removes a wrap's private temp dir. A command being killed (by
// Cleanup, or by its launcher's death a moment before) may still create a
// file there while the tree is removed: it is tried again, for a bounded
// time.
func removeTemp(dir string) error {
	var err error
	for try := 0; try < 20; try++ {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		if try == 0 {
			makeRemovable(dir) // read-only directories (a Go module cache)
			continue
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}
