package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bo-agent/sandbox-local/internal/gocacheprog"
	"github.com/bo-agent/sandbox-local/internal/privdir"
	"github.com/bo-agent/sandbox-local/internal/selfexe"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// cacheMeta is the file beside a workspace's cache dir that says whose it
// is. It lies in the parent, which no command can write (only the cache
// dir itself is a writable root), so a command cannot forge it.
type cacheMeta struct {
	Workspace string    `json:"workspace"`
	LastUsed  time.Time `json:"last_used"`
}

// prepareCaches makes the plan's cache dir (private, checked against
// planted symlinks) and adds it to the writable roots. A default dir that
// cannot be made leaves the caches in the temp dir, and says why; a given
// one is INVALID_POLICY.
func prepareCaches(r *resolved) error {
	c := r.caches
	if c == nil || c.off || c.dir == "" {
		return nil
	}
	if c.given {
		if err := saneWritable("caches dir", c.dir); err != nil {
			return err // before anything is made
		}
		if err := os.MkdirAll(c.dir, 0o700); err != nil {
			return &Error{Code: CodeInvalidPolicy, Reason: fmt.Sprintf("caches dir %q", c.dir), Err: err}
		}
		real, err := existingDir("caches dir", c.dir)
		if err == nil {
			err = saneWritable("caches dir", real)
		}
		if err == nil {
			if _, rerr := resolveOutside(c.dir, r.writableRoots); rerr != nil {
				err = &Error{Code: CodeInvalidPolicy, Reason: fmt.Sprintf("caches dir %q", c.dir), Err: rerr}
			}
		}
		if err != nil {
			return err
		}
		c.dir = real
		r.writableRoots = appendRoot(r.writableRoots, real)
		return nil
	}
	real, err := ensureCacheDir(c.dir, r.writableRoots)
	if err != nil {
		c.baseNote = "the caches are in the temp dir: " + err.Error()
		c.dir, c.meta = "", ""
		return nil
	}
	c.dir = real
	r.writableRoots = appendRoot(r.writableRoots, real)
	writeCacheMeta(c.meta, cacheMeta{Workspace: r.workspace, LastUsed: time.Now().UTC()})
	return nil
}

// ensureCacheDir creates the default cache dir and its two parents, each
// a private directory of this user, and returns its real path. A symlink
// on the way inside a writable root (planted by an earlier command) is
// refused.
func ensureCacheDir(dir string, writable []string) (string, error) {
	if err := reachableByOwnerBits(dir); err != nil {
		return "", err
	}
	root := filepath.Dir(dir)
	for _, d := range []string{filepath.Dir(root), root, dir} {
		if err := privdir.Ensure(d); err != nil {
			return "", err
		}
	}
	real, err := resolveOutside(dir, writable)
	if err != nil {
		return "", err
	}
	if err := saneWritable("caches dir", real); err != nil {
		return "", err
	}
	return real, nil
}

func appendRoot(roots []string, d string) []string {
	for _, r := range roots {
		if r == d {
			return roots
		}
	}
	return append(roots, d)
}

// metaFresh is how recent a cache dir's last use may be for a wrap to
// leave its metadata file as it is: pruning counts in days, and a write
// and a rename per command are a tenth of a Wrap.
const metaFresh = time.Hour

// writeCacheMeta replaces the metadata file, unless it already names the
// workspace and a use within metaFresh; a failure only costs the listing
// its workspace name.
func writeCacheMeta(p string, m cacheMeta) {
	if b, err := os.ReadFile(p); err == nil {
		var old cacheMeta
		if json.Unmarshal(b, &old) == nil && old.Workspace == m.Workspace && m.LastUsed.Sub(old.LastUsed) < metaFresh {
			return
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".meta-")
	if err != nil {
		return
	}
	_, werr := f.Write(append(b, '\n'))
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), p) != nil {
		os.Remove(f.Name())
	}
}

// CacheDir is one workspace's cache dir, as ListCaches finds it.
type CacheDir struct {
	// Dir is the cache dir.
	Dir string `json:"dir"`
	// Workspace is the workspace it belongs to, "" when unknown.
	Workspace string `json:"workspace"`
	// WorkspaceGone says the workspace no longer exists.
	WorkspaceGone bool `json:"workspace_gone,omitempty"`
	// LastUsed is when a wrap last used it (zero when unknown).
	LastUsed time.Time `json:"last_used"`
	// Size is the bytes of its files and of its Go module overlay's
	// (symlinks not followed).
	Size int64 `json:"size"`
}

// CachesRoot is the directory holding every workspace's default cache dir
// for the caller's environment env (nil: the process's), "" when there
// is no user cache directory.
func CachesRoot(env []string) string {
	if env == nil {
		env = os.Environ()
	}
	base, ok := userCacheBase(env)
	if !ok {
		return ""
	}
	return filepath.Join(base, "sandbox-local", "caches")
}

// ListCaches lists the default cache dirs under root (CachesRoot), by
// workspace.
func ListCaches(root string) ([]CacheDir, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list caches: %w", err)
	}
	var out []CacheDir
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasSuffix(e.Name(), overlaySuffix) {
			continue
		}
		d := CacheDir{Dir: filepath.Join(root, e.Name())}
		d.Size = treeSize(d.Dir) + treeSize(d.Dir+overlaySuffix)
		var m cacheMeta
		if b, err := os.ReadFile(d.Dir + ".json"); err == nil && json.Unmarshal(b, &m) == nil {
			d.Workspace, d.LastUsed = m.Workspace, m.LastUsed
		}
		if d.Workspace == "" {
			d.WorkspaceGone = true
		} else if _, err := os.Stat(d.Workspace); errors.Is(err, fs.ErrNotExist) {
			d.WorkspaceGone = true
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastUsed.After(out[j].LastUsed) })
	return out, nil
}

// treeSize adds up the sizes of the files below dir, following no link.
func treeSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// PruneCaches removes the default cache dirs under root (CachesRoot) whose
// workspace is gone or unknown, or that no wrap used for unused (0: every
// one), and returns those it removed. A wrap running meanwhile with one
// of them loses what it cached (its tools make the dirs again).
func PruneCaches(root string, unused time.Duration) ([]CacheDir, error) {
	all, err := ListCaches(root)
	if err != nil {
		return nil, err
	}
	var gone []CacheDir
	var errs []error
	for _, d := range all {
		if !d.WorkspaceGone && unused > 0 && time.Since(d.LastUsed) < unused {
			continue
		}
		if err := errors.Join(removeTemp(d.Dir+overlaySuffix), removeTemp(d.Dir)); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d.Dir, err))
			continue
		}
		os.Remove(d.Dir + ".json")
		gone = append(gone, d)
	}
	return gone, errors.Join(errs...)
}

// cacheVars sets w.CacheDir, w.Caches and w.CacheNote for the wrap's plan
// and returns the variables to set: the cache dir the plan made, or one
// below the temp dir (read-only mode, or no usable default).
func (w *Wrapped) cacheVars(r *resolved, spec vocab.Spec) []string {
	c := r.caches
	if c == nil || c.off {
		return nil
	}
	dir := c.dir
	if dir == "" {
		if w.TempDir == "" {
			return nil
		}
		dir = filepath.Join(w.TempDir, "cache")
	}
	warm, prog := "", ""
	writable := append(append([]string{dir}, spec.Writable...), w.TempDir)
	if c.goWarm != "" {
		warm, _ = goWarmUsable(c.goWarm, writable, r.denyRead)
	}
	// A workspace whose cache a whole run found complete needs the user's
	// no more (internal/gocacheprog.WarmMarker).
	_, warmed := os.Lstat(filepath.Join(dir, "go-build", gocacheprog.WarmMarker))
	if c.goBuild != "" && warmed != nil {
		if real, ok := goWarmUsable(c.goBuild, writable, r.denyRead); ok && goCacheHolds(real) {
			// The program is this binary, run inside the sandbox: it must
			// be readable there.
			if self, err := selfexe.Path(); err == nil && !underAny(self, r.denyRead) {
				c.goBuild = real
				prog = goCacheProg(self, real)
			}
		}
	}
	ovl := ""
	if spec.Overlay != "" {
		ovl = c.goMod
	}
	vars, uses := c.cacheEnv(dir, warm, prog, ovl, r.env)
	w.CacheDir, w.Caches, w.CacheNote = dir, uses, c.baseNote
	return vars
}
