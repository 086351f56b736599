package seatbelt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// FS is the part of a file system that canonicalisation reads. OSFS is the
// real one; tests use a fake, so the macOS resolution rules are proven on
// any platform.
type FS interface {
	// Lstat describes name without following a final symlink.
	Lstat(name string) (fs.FileInfo, error)
	// Readlink returns the target of the symlink name.
	Readlink(name string) (string, error)
	// ReadDirNames lists the entry names of the directory name, in any
	// order. It is used only to learn the on-disk letter case of a name.
	ReadDirNames(name string) ([]string, error)
}

// OSFS returns the operating system's file system.
func OSFS() FS { return osFS{} }

type osFS struct{}

func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (osFS) Readlink(name string) (string, error)   { return os.Readlink(name) }
func (osFS) ReadDirNames(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// Errors of canonicalisation. Build wraps them with the path and the field.
var (
	// ErrInvalidPath: a path is empty, relative or contains a NUL byte.
	ErrInvalidPath = errors.New("invalid path")
	// ErrSymlinkLoop: resolving a path followed more than 32 symlinks
	// (MAXSYMLINKS on darwin).
	ErrSymlinkLoop = errors.New("too many levels of symbolic links")
	// ErrInvalidPort: a loopback port is not 1 to 65535.
	ErrInvalidPort = errors.New("invalid port")
)

// maxSymlinkHops is darwin's MAXSYMLINKS.
const maxSymlinkHops = 32

// darwinAliases are the root symlinks every macOS has (SIP-protected, so
// they cannot be replaced): the kernel evaluates rules against the
// /private spelling, so that is the spelling a rule must use. They are
// applied whatever the FS says, so a path is spelled the macOS way even
// when it does not exist yet.
var darwinAliases = map[string]string{
	"tmp": "private/tmp",
	"var": "private/var",
	"etc": "private/etc",
}

// dataVolume is where the writable half of the macOS system volume group is
// mounted; its firmlinked top-level entries appear to processes (and to the
// sandbox's path checks) at their firmlinked spelling: /System/Volumes/Data/Users
// is /Users.
const dataVolume = "/System/Volumes/Data"

// firmlinked are the entries of /usr/share/firmlinks that a command's paths
// can name; a canonical path uses the spelling without dataVolume.
var firmlinked = []string{"Applications", "Library", "Users", "Volumes", "cores", "opt", "private", "usr/local"}

// resolution is one canonicalised path.
type resolution struct {
	// path is the canonical spelling: absolute, clean, every symlink on the
	// way resolved (the final one only when following), /tmp, /var and /etc
	// spelled under /private, and existing names in their on-disk case.
	path string
	// links are the canonical spellings of the symlinks followed on the
	// way. Replacing one of them would change what the path means.
	links []string
	// existing is the deepest ancestor of path known to exist, in the
	// canonical spelling, and missing the components of path below it;
	// both empty when path exists.
	existing string
	missing  []string
}

// resolver canonicalises paths the way macOS resolves them. It caches
// directory listings for the duration of one Build.
type resolver struct {
	fsys  FS
	names map[string][]string
}

func newResolver(fsys FS) *resolver {
	return &resolver{fsys: fsys, names: map[string][]string{}}
}

// checkPath rejects paths that cannot be canonicalised or passed as an
// argument: empty, relative, or holding a NUL byte.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path: %w", ErrInvalidPath)
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("path %q contains a NUL byte: %w", p, ErrInvalidPath)
	case p[0] != '/':
		return fmt.Errorf("path %q is not absolute: %w", p, ErrInvalidPath)
	}
	return nil
}

// resolve canonicalises the absolute path p. With followFinal, a final
// symlink is resolved too (the object the path reaches); without it, the
// final component is kept as named (the entry the path is), with every
// parent resolved. A missing component ends resolution: the rest is
// appended as spelled, so paths that do not exist yet still canonicalise.
// ".." goes to the parent of what has been resolved so far, as the kernel
// does, not of the spelling.
func (r *resolver) resolve(p string, followFinal bool) (resolution, error) {
	if err := checkPath(p); err != nil {
		return resolution{}, err
	}
	var res resolution
	cur := "/"
	pending := splitPath(p)
	exists := true
	lastExisting := ""
	hops := 0
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		if name == ".." {
			cur = parentOf(cur)
			continue
		}
		if cur == "/" {
			if alias, ok := darwinAliases[name]; ok {
				pending = append(splitPath(alias), pending...)
				continue
			}
		}
		next := joinPath(cur, name)
		if !exists {
			cur = next
			continue
		}
		fi, err := r.fsys.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				exists = false
				lastExisting = cur
				cur = next
				continue
			}
			return resolution{}, fmt.Errorf("resolve %q: lstat %s: %w", p, next, err)
		}
		next = joinPath(cur, r.onDiskName(cur, name))
		if fi.Mode()&fs.ModeSymlink != 0 && (len(pending) > 0 || followFinal) {
			hops++
			if hops > maxSymlinkHops {
				return resolution{}, fmt.Errorf("resolve %q: at %s: %w", p, next, ErrSymlinkLoop)
			}
			target, err := r.fsys.Readlink(next)
			if err != nil {
				return resolution{}, fmt.Errorf("resolve %q: readlink %s: %w", p, next, err)
			}
			if target == "" || strings.IndexByte(target, 0) >= 0 {
				return resolution{}, fmt.Errorf("resolve %q: symlink %s has an unusable target %q: %w", p, next, target, ErrInvalidPath)
			}
			res.links = append(res.links, stripDataVolume(next))
			if target[0] == '/' {
				cur = "/"
			}
			pending = append(splitPath(target), pending...)
			continue
		}
		cur = next
	}
	res.path = stripDataVolume(cur)
	if !exists {
		res.existing = commonAncestor(res.path, stripDataVolume(lastExisting))
		if res.existing != res.path {
			res.missing = splitPath(res.path[len(res.existing):])
		} else {
			res.existing = "" // ".." climbed back to a directory that exists
		}
	}
	return res, nil
}

// commonAncestor returns the deepest path that is a or an ancestor of a and
// also b or an ancestor of b (clean absolute paths).
func commonAncestor(a, b string) string {
	for !vocab.Within(a, b) && !vocab.Within(b, a) {
		b = parentOf(b)
	}
	if vocab.Within(a, b) {
		return b
	}
	return a
}

// onDiskName returns name as the directory dir spells it. On a
// case-insensitive volume "/users/ME" reaches "/Users/me", and a rule must
// use the on-disk spelling to match. An exact entry wins; otherwise a single
// entry equal under case folding; otherwise (unreadable directory, or
// ambiguous) name itself.
func (r *resolver) onDiskName(dir, name string) string {
	names, ok := r.names[dir]
	if !ok {
		var err error
		names, err = r.fsys.ReadDirNames(dir)
		if err != nil {
			names = nil
		}
		r.names[dir] = names
	}
	match := ""
	for _, n := range names {
		if n == name {
			return name
		}
		if strings.EqualFold(n, name) {
			if match != "" {
				return name
			}
			match = n
		}
	}
	if match != "" {
		return match
	}
	return name
}

// splitPath splits p into its components, dropping empty ones and ".".
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// parentOf returns the parent of the clean absolute path p ("/" for "/").
func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// ancestors returns the proper ancestors of the clean absolute path p,
// nearest first, without "/".
func ancestors(p string) []string {
	var out []string
	for a := parentOf(p); a != "/"; a = parentOf(a) {
		out = append(out, a)
	}
	return out
}

// stripDataVolume spells a path under a firmlinked entry of the data volume
// the way processes see it.
func stripDataVolume(p string) string {
	rest, ok := strings.CutPrefix(p, dataVolume+"/")
	if !ok {
		return p
	}
	for _, f := range firmlinked {
		if rest == f || strings.HasPrefix(rest, f+"/") {
			return "/" + rest
		}
	}
	return p
}
