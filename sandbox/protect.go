package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/nativepath"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// gitSurface are the entries of a git directory through which a write turns
// into code execution on the user's next git command: hooks, and config
// (core.hooksPath, core.fsmonitor, aliases, filters, ...), commondir,
// which, once written, points git at another directory's config and hooks,
// and config.worktree, which git reads once extensions.worktreeConfig is
// set (git-worktree(1) tells users to set it, and nothing creates the file
// until a per-worktree setting is made). Each is protected whether it
// exists or not: one that does not is guarded.
var gitSurface = []string{"hooks", "config", "commondir", "config.worktree"}

// DefaultReadOnlySubpaths returns the subpaths kept read-only under every
// writable root; the policy's own ReadOnlySubpaths are added to these, never
// replace them:
//
//   - .git/hooks, .git/config, .git/commondir and .git/config.worktree,
//     whether they exist or not. A main repository has no commondir, and
//     most have no config.worktree; a mount namespace cannot cover a name
//     that does not exist, so the namespaces runner's guard refuses
//     creating it (docs/runners/namespaces.md), and the landlock runner
//     reports it as a gap;
//   - a writable root that is itself a git directory (a bare repository,
//     or a repository's .git given as the workspace): the same surface in
//     the root (see rootIsGitDir);
//   - the files of other version-control systems that run programs
//     (vcsProtected: Mercurial's .hg/hgrc, Jujutsu's .jj config, ...);
//   - the same inside every submodule git dir (.git/modules/**) and every
//     linked worktree's git dir (.git/worktrees/*);
//   - a .git that is a file (a worktree or submodule checkout): the file
//     itself, so it cannot be pointed elsewhere, and the same surface in the
//     git dir it names;
//   - the .git file of every submodule checked out at Wrap (named by a
//     module git dir's core.worktree or by .gitmodules), so that git status
//     at the top cannot be led to another git dir (checkoutPointers);
//   - what a protected config points at: core.hooksPath (husky keeps hooks
//     in the worktree) and the files of include.path and includeIf.*.path,
//     and a program a config command names by a path (alias.x =
//     !./tools/x.sh, core.fsmonitor, filters, diff and merge drivers,
//     editors, credential helpers);
//   - husky's directory whole where core.hooksPath is DIR/_ (husky v9's
//     stubs run DIR/<hook>);
//   - what protected paths point to where a writable root holds it: the
//     target of every symlink in a hooks directory (a linked directory
//     whole, and walked the same way) and of a protected path that is a
//     symlink. The walk is bounded; past the bound the report says so.
//
// git add and git commit keep working: objects, refs, the index and logs
// stay writable. A writable root without a .git gets nothing: a repository
// the command creates there is its own (see the README's limitations). The
// list describes the defaults, which always apply; it is not meant to be
// passed back as ReadOnlySubpaths (its patterns are not expanded there).
func DefaultReadOnlySubpaths() []string {
	return []string{".git/hooks", ".git/config", ".git/commondir", ".git/config.worktree",
		".git/modules/**/{hooks,config,commondir,config.worktree}", ".git/worktrees/*/{hooks,config,commondir,config.worktree}",
		".hg/{hgrc,hgrc-not-shared,sharedpath}", ".sl/{config,hgrc.dynamic,sharedpath}", ".git/sl/{config,hgrc.dynamic}",
		".jj/{workspace-config.toml,workspace-config-id,repo}", ".jj/repo/{config.toml,config-id}",
		"_darcs/prefs/{defaults,prefs}", ".pijul/{config,hooks}", ".bzr/branch/{branch.conf,location,format}"}
}

// fileSystem is the part of the filesystem the expansion reads; tests
// replace it.
type fileSystem interface {
	Lstat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	// ReadDirN reads at most n entries of a directory, in directory order.
	ReadDirN(name string, n int) ([]fs.DirEntry, error)
	ReadFile(name string) ([]byte, error)
}

type osFS struct{}

// The files Wrap reads in a workspace were left there by earlier commands:
// every one is opened without blocking (a FIFO named .git/commondir would
// otherwise hold Wrap, and every later command, forever), then must be
// what was asked for, a regular file of at most maxGitFile bytes or a
// directory, before anything is read.

// maxGitFile bounds a git config, pointer or commondir file Wrap reads.
const maxGitFile = 1 << 20

func (osFS) Lstat(n string) (fs.FileInfo, error) { return os.Lstat(n) }

func (osFS) ReadFile(n string) ([]byte, error) {
	f, err := os.OpenFile(n, os.O_RDONLY|oNoBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxGitFile {
		return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", n, maxGitFile)
	}
	return io.ReadAll(io.LimitReader(f, maxGitFile))
}

// ReadDir reads a whole directory, sorted by name as os.ReadDir does.
func (fsys osFS) ReadDir(n string) ([]fs.DirEntry, error) {
	ents, err := fsys.ReadDirN(n, -1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

func (osFS) ReadDirN(name string, n int) ([]fs.DirEntry, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|oNoBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", name)
	}
	ents, err := f.ReadDir(n)
	if errors.Is(err, io.EOF) {
		err = nil // an empty directory
	}
	return ents, err
}

// maxGitDirs bounds how many nested git dirs (submodules, worktrees) one
// root contributes, so a hostile tree cannot make Wrap walk forever.
const maxGitDirs = 256

// protectedPaths expands the default surface (git's, and the tool configs,
// names relative to each root protected only where they exist, like
// optionalSurface) and the caller's extras into concrete absolute paths
// under the writable roots. Paths are never resolved
// through a final symlink: a protected path that is a symlink is protected
// as the link itself (the path it replaces), never followed to its target.
//
// The directories above a protected path are resolved, though: the
// namespaces launcher refuses a symlink among them at launch (another
// sandbox could have swapped one to move the read-only binds onto a
// decoy), so one that is there at Wrap time is resolved here, and a path
// that then lies outside every writable root needs no protection. Paths
// inside a root's .git are the exception: they were built from directories
// gitProtected found real a moment ago, and resolving them again would
// follow a .git swapped for a symlink in between; the launcher refuses
// that one instead.
//
// absent lists the tool configs that do not exist in a root: what the
// namespaces runner's guard keeps the command from creating
// (vocab.Spec.Guarded). A root's own symlinks were resolved with the roots.
func protectedPaths(fsys fileSystem, roots, configs, extra []string) (ro, absent []string, gaps []Gap) {
	var out pathList
	dirs := dirCache{}
	add := func(p string) {
		if !insideGitDir(p, roots) {
			p = dirs.resolveDirs(p)
		}
		if underAny(p, roots) {
			out.add(p)
		}
	}
	var hooks []string
	for _, root := range roots {
		for _, p := range gitProtected(fsys, root, roots, &hooks) {
			add(p)
		}
		if rootIsGitDir(fsys, root) {
			for _, p := range gitDirProtected(fsys, root, gitDirWorktree(root), &hooks) {
				add(p)
			}
		}
		for _, p := range vcsProtected(fsys, root, roots) {
			add(p)
		}
		for _, c := range configs {
			// A config that is not there is not protected: no Linux runner
			// can yet stop its creation without leaving a placeholder
			// behind (see DefaultToolConfigs). It is listed apart, each
			// name looked up once for both lists.
			if p := filepath.Join(root, c); exists(fsys, p) {
				add(p)
			} else {
				absent = append(absent, p)
			}
		}
		for _, e := range extra {
			if !filepath.IsAbs(e) {
				add(filepath.Join(root, e))
			}
		}
	}
	for _, e := range extra {
		if filepath.IsAbs(e) {
			add(e)
		}
	}
	lw := linkWalk{fsys: fsys, roots: roots, out: &out, add: add, entries: maxHookEntries, links: maxHookLinks}
	lw.run(hooks)
	return out.list, absent, lw.gaps
}

// gitProtected returns the protected paths of the .git entry of root.
// The hooks directories among them (and core.hooksPath) are added to
// hooks: the links in those are followed (linkWalk).
func gitProtected(fsys fileSystem, root string, roots []string, hooks *[]string) []string {
	dotgit := filepath.Join(root, ".git")
	fi, err := fsys.Lstat(dotgit)
	switch {
	case err != nil:
		return nil // no repository here
	case fi.Mode()&fs.ModeSymlink != 0, fi.Mode().IsRegular():
		// A pointer (gitdir: file or symlink): protect the pointer itself,
		// and the surface of the git dir it names when that is writable.
		out := []string{dotgit}
		if gd := gitdirOf(fsys, root, dotgit, fi); gd != "" && underAny(gd, roots) {
			out = append(out, surfaceOf(gd)...)
			out = append(out, commonSurface(fsys, gd)...)
			out = append(out, configTargets(fsys, root, filepath.Join(gd, "config"), 0, hooks)...)
			out = append(out, configTargets(fsys, root, filepath.Join(gd, "config.worktree"), 0, hooks)...)
			out = append(out, userConfigTargets(fsys, root, hooks)...)
		}
		return hooksOf(out, hooks)
	case fi.IsDir():
		return gitDirProtected(fsys, dotgit, root, hooks)
	}
	return []string{dotgit}
}

// gitDirProtected returns the protected paths of the git directory gitdir,
// whose worktree (where relative paths in its config start) is worktree:
// its surface, what its configs point at, and the surface of its
// submodules' and linked worktrees' git dirs.
func gitDirProtected(fsys fileSystem, gitdir, worktree string, hooks *[]string) []string {
	out := surfaceOf(gitdir)
	out = append(out, configTargets(fsys, worktree, filepath.Join(gitdir, "config"), 0, hooks)...)
	out = append(out, configTargets(fsys, worktree, filepath.Join(gitdir, "config.worktree"), 0, hooks)...)
	out = append(out, userConfigTargets(fsys, worktree, hooks)...)
	budget := maxGitDirs
	out = append(out, nestedGitDirs(fsys, filepath.Join(gitdir, "modules"), &budget, 0)...)
	out = append(out, checkoutPointers(fsys, filepath.Join(worktree, ".gitmodules"), "submodule", "path", worktree)...)
	if ents, err := fsys.ReadDir(filepath.Join(gitdir, "worktrees")); err == nil {
		for _, e := range ents {
			if e.IsDir() && budget > 0 {
				budget--
				out = append(out, surfaceOf(filepath.Join(gitdir, "worktrees", e.Name()))...)
			}
		}
	}
	return hooksOf(out, hooks)
}

// rootIsGitDir reports whether a writable root is itself a git directory:
// named .git (a repository's git dir given as the workspace), or holding a
// HEAD (a bare repository, or a directory one mkdir away from being one:
// git takes a directory with HEAD, objects/ and refs/ for a git dir, and
// the command could make the other two). The protected paths of a
// repository are computed from its worktree; without this, hooks/ and
// config of such a root would be writable.
func rootIsGitDir(fsys fileSystem, root string) bool {
	if filepath.Base(root) == ".git" {
		return true
	}
	fi, err := fsys.Lstat(filepath.Join(root, "HEAD"))
	return err == nil && (fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0)
}

// gitDirWorktree is where git runs hooks and resolves relative config
// paths for the git directory gitdir: the directory above a .git, the git
// directory itself for a bare repository.
func gitDirWorktree(gitdir string) string {
	if filepath.Base(gitdir) == ".git" {
		return filepath.Dir(gitdir)
	}
	return gitdir
}

// hooksOf adds the hooks directories of a git dir surface to hooks.
func hooksOf(surface []string, hooks *[]string) []string {
	for _, p := range surface {
		if filepath.Base(p) == "hooks" {
			*hooks = append(*hooks, p)
		}
	}
	return surface
}

// exists says whether p is there, a final symlink not followed.
func exists(fsys fileSystem, p string) bool {
	_, err := fsys.Lstat(p)
	return err == nil
}

func surfaceOf(gitdir string) []string {
	out := make([]string, 0, len(gitSurface))
	for _, s := range gitSurface {
		out = append(out, filepath.Join(gitdir, s))
	}
	return out
}

// nestedGitDirs walks .git/modules: every directory holding a HEAD file is a
// submodule's git dir (submodules nest, so the walk goes on below it). Where
// the walk stops short (too deep, or too many git dirs), the directory it
// did not look into is protected whole: fail closed, at the price of
// writes to those submodules.
func nestedGitDirs(fsys fileSystem, dir string, budget *int, depth int) []string {
	if depth > 16 || *budget <= 0 {
		return []string{dir}
	}
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if *budget <= 0 {
			out = append(out, sub)
			continue
		}
		if fi, err := fsys.Lstat(filepath.Join(sub, "HEAD")); err == nil && fi.Mode().IsRegular() {
			*budget--
			out = append(out, surfaceOf(sub)...)
			out = append(out, checkoutPointers(fsys, filepath.Join(sub, "config"), "core", "worktree", sub)...)
			out = append(out, nestedGitDirs(fsys, filepath.Join(sub, "modules"), budget, depth+1)...)
			continue
		}
		out = append(out, nestedGitDirs(fsys, sub, budget, depth+1)...)
	}
	return out
}

// checkoutPointers returns the .git pointer files (a file or a symlink;
// a .git directory is a repository of its own, not covered) of the
// checkouts that the git config file config names by section.key
// (relative to base), where they exist, at most maxGitDirs of them. A
// submodule's git dir names its checkout by core.worktree (relative to
// the git dir), and .gitmodules by submodule.NAME.path (relative to the
// superproject's worktree), for a git dir without core.worktree. git
// follows that pointer from the superproject (git status looks into
// every checked-out submodule), so a command that re-pointed it at a
// copy of the git dir with a config of its own would have the user's
// next git status run that config's programs. One that does not exist is
// left alone: git submodule update --init makes it.
func checkoutPointers(fsys fileSystem, config, section, key, base string) []string {
	b, err := fsys.ReadFile(config)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range parseGitConfig(string(b)) {
		if e.section != section || e.key != key || len(out) >= maxGitDirs {
			continue
		}
		p := filepath.Join(resolveGitPath(e.value, base), ".git")
		if fi, err := fsys.Lstat(p); err == nil && (fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0) {
			out = append(out, p)
		}
	}
	return out
}

// gitdirOf reads where a .git pointer leads: the "gitdir: PATH" line of a
// .git file, or nothing for a symlink (its own path is already protected and
// the link is not followed).
func gitdirOf(fsys fileSystem, root, dotgit string, fi fs.FileInfo) string {
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return ""
	}
	b, err := fsys.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	gd = strings.TrimSpace(gd)
	if gd == "" || strings.IndexByte(gd, 0) >= 0 {
		return ""
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(root, gd)
	}
	return filepath.Clean(gd)
}

// commonSurface follows a linked worktree's "commondir" file to the main git
// dir, whose hooks and config the worktree uses.
func commonSurface(fsys fileSystem, gitdir string) []string {
	b, err := fsys.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil || len(b) > 4096 {
		return nil
	}
	cd := strings.TrimSpace(string(b))
	if cd == "" || strings.IndexByte(cd, 0) >= 0 {
		return nil
	}
	if !filepath.IsAbs(cd) {
		cd = filepath.Join(gitdir, cd)
	}
	return surfaceOf(filepath.Clean(cd))
}

// resolveDirs resolves the symlinks in the directories above p, keeping
// p's last element as it is. Where those directories do not all exist,
// the longest existing ancestor is resolved (the rest is missing: the path
// is reported, and the launcher finds nothing there).
func resolveDirs(p string) string { return dirCache{}.resolveDirs(p) }

// dirCache resolves directories once for one Wrap: its many paths share
// their directories (the home directory, ~/.config, a root's .git), and
// each distinct directory costs one lstat.
type dirCache map[string]dirReal

type dirReal struct {
	path string
	ok   bool
}

// eval is filepath.EvalSymlinks of the directory dir, memoized.
func (c dirCache) eval(dir string) (string, bool) {
	if r, hit := c[dir]; hit {
		return r.path, r.ok
	}
	var r dirReal
	if parent := filepath.Dir(dir); parent == dir {
		r = dirReal{dir, true}
	} else if pr, ok := c.eval(parent); ok {
		full := filepath.Join(pr, filepath.Base(dir))
		fi, err := os.Lstat(full)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(full)
			r = dirReal{real, err == nil}
		default:
			r = dirReal{full, true}
		}
	}
	c[dir] = r
	return r.path, r.ok
}

// resolveDirs is the package's resolveDirs, with c's memory.
func (c dirCache) resolveDirs(p string) string {
	dir, rest := filepath.Dir(p), filepath.Base(p)
	for {
		if real, ok := c.eval(dir); ok {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// insideGitDir reports whether p lies inside the .git of one of roots.
func insideGitDir(p string, roots []string) bool {
	for _, r := range roots {
		if dotgit := filepath.Join(r, ".git"); p != dotgit && nativepath.Within(p, dotgit) {
			return true
		}
	}
	return false
}

// underAny reports whether p is one of roots or beneath one of them
// (nativepath.Within).
func underAny(p string, roots []string) bool {
	for _, r := range roots {
		if nativepath.Within(p, r) {
			return true
		}
	}
	return false
}

// configTargets returns what a protected git config points at that git
// will execute or read as config: core.hooksPath (husky and the like keep
// hooks inside the worktree, relative to its top) and the files of
// include.path / includeIf.*.path (relative to the including file), followed
// to a small depth. Protecting the config file alone would leave those
// writable. Every file is read once per call, and at most maxConfigFiles
// of them: a config that includes itself many times (under a condition
// that never holds, so git does not mind) would otherwise make Wrap read
// exponentially many.
func configTargets(fsys fileSystem, worktree, config string, depth int, hooks *[]string) []string {
	r := configReader{fsys: fsys, worktree: worktree, hooks: hooks, seen: map[string]bool{}}
	return r.read(config, depth)
}

// maxConfigFiles bounds the git config files one configTargets call reads.
const maxConfigFiles = 32

type configReader struct {
	fsys     fileSystem
	worktree string
	hooks    *[]string
	seen     map[string]bool
}

func (r *configReader) read(config string, depth int) []string {
	if depth > 4 || r.seen[config] || len(r.seen) >= maxConfigFiles {
		return nil
	}
	r.seen[config] = true
	fi, err := r.fsys.Lstat(config)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return nil
	}
	b, err := r.fsys.ReadFile(config)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range parseGitConfig(string(b)) {
		switch {
		case e.section == "core" && e.key == "hookspath":
			h := resolveGitPath(e.value, r.worktree)
			*r.hooks = append(*r.hooks, h)
			out = append(out, h)
			out = append(out, huskyTargets(r.fsys, r.worktree, h, r.hooks)...)
		case commandKey(e.section, e.key):
			if prog := programPath(e.value, r.worktree); prog != "" {
				out = append(out, prog)
			}
		case (e.section == "include" || e.section == "includeif") && e.key == "path":
			inc := resolveGitPath(e.value, filepath.Dir(config))
			out = append(out, inc)
			out = append(out, r.read(inc, depth+1)...)
		}
	}
	return out
}

// gitConfigEntry is one key = value of a git config: section lowercased
// (its subsection dropped), key lowercased, value as git reads it.
type gitConfigEntry struct{ section, key, value string }

// parseGitConfig reads a git config as git does, for what Wrap needs: a
// byte-order mark, comments (# and ;) at the start of a line or after a
// value outside quotes, quoted parts of a value (where # and ; are
// text), the escapes \" \\ \n \t \b, and a backslash that continues the
// value on the next line. Section headers are [section], [section
// "subsection"] and [section.subsection]; a key = value may follow a
// header on its line. A key with no value (a boolean) is skipped.
func parseGitConfig(text string) []gitConfigEntry {
	lines := strings.Split(strings.TrimPrefix(text, "\ufeff"), "\n")
	var out []gitConfigEntry
	section := ""
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimSpace(line[1:end]), " ")
			name, _, _ = strings.Cut(name, ".")
			section = strings.ToLower(name)
			line = strings.TrimSpace(line[end+1:])
			if line == "" || line[0] == '#' || line[0] == ';' {
				continue
			}
		}
		key, raw, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		// A value ending in a lone backslash goes on on the next line.
		for strings.HasSuffix(raw, "\\") && !strings.HasSuffix(raw, "\\\\") && i+1 < len(lines) {
			i++
			raw = raw[:len(raw)-1] + lines[i]
		}
		value, ok := gitConfigValue(raw)
		if !ok || value == "" || strings.IndexByte(value, 0) >= 0 {
			continue
		}
		out = append(out, gitConfigEntry{section, strings.ToLower(strings.TrimSpace(key)), value})
	}
	return out
}

// gitConfigValue is the value git reads from the text after "=": quotes
// removed (their content kept as it is), escapes undone, a comment outside
// quotes dropped, surrounding blanks trimmed (those inside quotes kept).
func gitConfigValue(raw string) (string, bool) {
	var b strings.Builder
	quoted := false
	pending := "" // blanks outside quotes, written only if text follows
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '\\':
			if i+1 >= len(raw) {
				return "", false
			}
			i++
			b.WriteString(pending)
			pending = ""
			switch raw[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case '"', '\\':
				b.WriteByte(raw[i])
			default:
				return "", false // git refuses an unknown escape
			}
		case c == '"':
			b.WriteString(pending)
			pending = ""
			quoted = !quoted
		case !quoted && (c == '#' || c == ';'):
			return strings.TrimSpace(b.String()), !quoted
		case !quoted && (c == ' ' || c == '\t'):
			if b.Len() > 0 {
				pending += string(c)
			}
		default:
			b.WriteString(pending)
			pending = ""
			b.WriteByte(c)
		}
	}
	return b.String(), !quoted
}

// userConfigTargets is configTargets for the git configs outside the
// repository that git reads for it too: the user's (~/.gitconfig and
// $XDG_CONFIG_HOME/git/config, or $GIT_CONFIG_GLOBAL) and the system's
// (/etc/gitconfig, or $GIT_CONFIG_SYSTEM). A relative core.hooksPath
// there (a team's ".githooks") or a relative program names a file in
// this worktree, which the user's next git runs.
func userConfigTargets(fsys fileSystem, worktree string, hooks *[]string) []string {
	var configs []string
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		configs = append(configs, g)
	} else if home, ok := realHome(); ok {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if !filepath.IsAbs(xdg) {
			xdg = filepath.Join(home, ".config")
		}
		configs = append(configs, filepath.Join(home, ".gitconfig"), filepath.Join(xdg, "git", "config"))
	}
	if g := os.Getenv("GIT_CONFIG_SYSTEM"); g != "" {
		configs = append(configs, g)
	} else {
		configs = append(configs, "/etc/gitconfig")
	}
	var out []string
	for _, c := range configs {
		if filepath.IsAbs(c) {
			out = append(out, configTargets(fsys, worktree, c, 0, hooks)...)
		}
	}
	return out
}

// resolveGitPath resolves a path from a git config: ~/ against the home
// directory, a relative one against base.
func resolveGitPath(v, base string) string {
	if rest, ok := strings.CutPrefix(v, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	return filepath.Join(base, v)
}

// huskyTargets: husky (v9) sets core.hooksPath to DIR/_, whose stubs
// source the dispatcher DIR/_/h, which runs DIR/<hook>: the scripts the
// project keeps in DIR (.husky), which often source others kept beside
// them. So a hooks path named "_" protects its parent whole, and that
// parent's links are followed like a hooks directory's. Where the parent is
// the worktree itself (husky installed into "."), only the scripts named
// like a stub in _ are protected, so the worktree stays writable. The
// dispatcher also sources the user's husky init.sh, protected where a
// writable root holds it. Husky v5 to v8 set DIR itself as the hooks path:
// protected whole like any hooks path.
func huskyTargets(fsys fileSystem, worktree, hooksPath string, hooks *[]string) []string {
	if filepath.Base(hooksPath) != "_" {
		return nil
	}
	var out []string
	if home, err := os.UserHomeDir(); err == nil {
		cfg := os.Getenv("XDG_CONFIG_HOME")
		if !filepath.IsAbs(cfg) {
			cfg = filepath.Join(home, ".config")
		}
		out = append(out, filepath.Join(cfg, "husky", "init.sh"), filepath.Join(home, ".huskyrc"))
	}
	dir := filepath.Dir(hooksPath)
	if dir != filepath.Clean(worktree) {
		*hooks = append(*hooks, dir)
		return append(out, dir)
	}
	ents, err := fsys.ReadDirN(hooksPath, maxHookLinks) // husky writes 13 stubs
	if err != nil {
		return out
	}
	for _, e := range ents {
		if n := e.Name(); n[0] != '.' && n != "h" && n != "husky.sh" {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// Bounds on linkWalk: a tree with thousands of entries or links in its
// hooks directories must not make Wrap slow. What was not examined is
// reported.
const (
	maxHookEntries = 8192 // directory entries read, all hooks directories together (256 submodules' samples fit)
	maxHookLinks   = 256  // symlinks followed
	maxHookDepth   = 8    // directories below a hooks directory
)

// linkWalk protects what the protected paths point to. git runs a hook
// that is a symlink by following it, so every symlink in a hooks directory
// (.git/hooks, core.hooksPath, husky's directory) or below it, and every
// protected path that is itself a symlink, has its target kept read-only
// too where a writable root holds it (a hook linked to
// scripts/pre-commit.sh would otherwise run whatever the command wrote
// there); a target that is a directory is protected whole and walked the
// same way. A symlink on the way that lies in a writable directory, which
// the command could re-point, is listed as well: the runner reports it as
// a symlink it cannot cover. A file in a hooks directory with more than
// one hard link is listed by its own name, so the runner reports it
// (another name for it may be writable). Targets outside every writable
// root are read-only already.
type linkWalk struct {
	fsys           fileSystem
	roots          []string
	out            *pathList
	add            func(string)
	entries, links int
	seen           map[string]bool
	fixed          []string // directories known read-only: a link in them cannot be re-pointed
	gaps           []Gap
}

func (w *linkWalk) run(hooks []string) {
	w.seen = map[string]bool{}
	for _, h := range hooks {
		w.walk(h, h, 0)
	}
	for _, p := range append([]string(nil), w.out.list...) {
		if fi, err := w.fsys.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 && !w.seen[p] {
			if w.links <= 0 {
				w.truncated(p)
				return
			}
			w.links--
			if real, ok := w.resolve(p); ok && underAny(real, w.roots) {
				w.add(real)
			}
		}
	}
}

// walk protects what the entries of the hooks directory dir (found from
// the hooks directory top) point to.
func (w *linkWalk) walk(top, dir string, depth int) {
	fi, err := w.fsys.Lstat(dir)
	if err != nil || depth > maxHookDepth {
		return
	}
	// A real directory inside a .git was built from directories found
	// real (gitProtected); anything else is resolved, link by link.
	real := dir
	if !fi.IsDir() || !insideGitDir(dir, w.roots) {
		var ok bool
		if real, ok = w.resolve(dir); !ok {
			return
		}
		if fi, err = w.fsys.Lstat(real); err != nil {
			return
		}
	}
	if w.seen[real] || !fi.IsDir() {
		return
	}
	w.seen[dir], w.seen[real] = true, true
	if real != dir && underAny(real, w.roots) {
		w.add(real) // a linked directory: the link is listed, its target protected
	}
	w.fixed = append(w.fixed, real)
	// One entry more than the budget: a directory that has it is
	// reported without reading the rest.
	ents, err := w.fsys.ReadDirN(real, w.entries+1)
	if err != nil {
		return
	}
	for _, e := range ents {
		if w.entries <= 0 {
			w.truncated(top)
			return
		}
		w.entries--
		p := filepath.Join(real, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			if w.links <= 0 {
				w.truncated(top)
				return
			}
			w.links--
			t, ok := w.resolve(p)
			if !ok {
				continue // a loop: git cannot run it either
			}
			w.seen[p] = true
			if slices.Contains(w.roots, t) {
				// Protecting a whole writable root would make the
				// workspace read-only: say what stays open instead.
				w.gaps = append(w.gaps, Gap{Area: AreaFS, Reason: fmt.Sprintf("%s in a hooks directory links to the writable root %s, which is not made read-only: what a hook reads through it stays writable", p, t)})
				continue
			}
			if underAny(t, w.roots) {
				w.add(t) // where missing, reported: the command could create it
			}
			if fi, err := w.fsys.Lstat(t); err == nil && fi.IsDir() {
				w.walk(top, t, depth+1)
			}
		case e.IsDir():
			w.walk(top, p, depth+1)
		case e.Type().IsRegular() && !strings.HasSuffix(e.Name(), ".sample"):
			// git never runs a .sample: a deduplicated copy is no gap.
			if fi, err := w.fsys.Lstat(p); err == nil && vocab.LinkCount(fi) > 1 {
				w.add(p)
			}
		}
	}
}

// resolve follows p to what it names, listing the symlinks on the way that
// the command could re-point (inside a writable root, outside every
// directory known read-only).
func (w *linkWalk) resolve(p string) (string, bool) {
	hops := 0
	real, err := resolveFrom("/", p, func(link string) error {
		if underAny(link, w.roots) && !underAny(link, w.fixed) {
			w.add(link)
		}
		return nil
	}, &hops)
	return real, err == nil
}

func (w *linkWalk) truncated(top string) {
	if len(w.gaps) == 0 {
		w.gaps = append(w.gaps, Gap{Area: AreaFS, Reason: fmt.Sprintf("the hooks directories and protected links of this wrap hold more than %d entries or %d symlinks (the walk stopped in %s): the rest were not examined, so a hook there may run a file the command can write", maxHookEntries, maxHookLinks, top)})
	}
}

// commandKey reports whether the config key section.key (subsection
// dropped) names a command git runs: its program, when named by a path
// inside a writable root, is protected like a hook.
func commandKey(section, key string) bool {
	switch section + "." + key {
	case "core.fsmonitor", "core.sshcommand", "core.editor", "core.pager", "core.askpass", "core.gitproxy",
		"sequence.editor", "diff.external", "diff.textconv", "diff.command", "gpg.program",
		"filter.clean", "filter.smudge", "filter.process", "merge.driver", "credential.helper",
		"interactive.difffilter", "difftool.cmd", "mergetool.cmd", "browser.cmd", "web.browser",
		"man.cmd", "sendemail.sendmailcmd", "sendemail.smtpserver", "uploadpack.packobjectshook",
		"remote.uploadpack", "remote.receivepack", "alias." + key, "pager." + key:
		return true
	}
	return false
}

// programPath returns the program a command value from a git config names
// by a path (relative to the worktree's top, where git runs it), or "": a
// bare name is looked up in PATH, and a shell command beyond its first word
// is not parsed (README: what stays open).
func programPath(value, worktree string) string {
	fields := strings.Fields(strings.TrimPrefix(value, "!"))
	if len(fields) == 0 || !strings.ContainsRune(fields[0], '/') {
		return ""
	}
	return resolveGitPath(strings.Trim(fields[0], `'"`), worktree)
}
