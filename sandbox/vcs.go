package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// vcsSurface is, for a version-control system other than git, the
// directory that marks its repository at the top of a writable root and
// the files in it through which a write runs a program on the user's next
// command there. docs/policy.md ("Other version-control systems") gives
// each file's source.
type vcsSurface struct {
	dir string
	// files, relative to dir, are protected whether they exist or not
	// (one that does not is guarded), once dir is a directory: a
	// repository the command creates itself is its own, as with git.
	files []string
	// shared names the file that points the repository at another one
	// whose config it reads (Mercurial's and Sapling's sharedpath).
	shared string
	// hgrc: files holds configs in Mercurial's syntax, whose includes and
	// program paths are followed (hgrcTargets).
	hgrc bool
}

var vcsSurfaces = []vcsSurface{
	// Mercurial: hgrc and hgrc-not-shared hold [hooks] and [extensions];
	// sharedpath, with "shared" in requires, makes hg read another
	// repository's hgrc (share-safe).
	{dir: ".hg", files: []string{"hgrc", "hgrc-not-shared", "sharedpath"}, shared: "sharedpath", hgrc: true},
	// Sapling: config (hooks, extensions) and the dynamic config it
	// caches beside it; in a git checkout Sapling keeps them in .git/sl.
	{dir: ".sl", files: []string{"config", "hgrc.dynamic", "sharedpath"}, shared: "sharedpath", hgrc: true},
	{dir: ".git/sl", files: []string{"config", "hgrc.dynamic"}, hgrc: true},
	// Darcs: defaults sets any command's options (--posthook, --prehook
	// and the like run programs); prefs holds the test command.
	{dir: "_darcs", files: []string{"prefs/defaults", "prefs/prefs"}},
	// Pijul: config holds [hooks] run on record; hooks/ is the older
	// layout's hook scripts.
	{dir: ".pijul", files: []string{"config", "hooks"}},
	// Breezy (Bazaar): branch.conf's post_commit is Python that brz
	// commit evaluates; a branch whose format says it is a reference
	// reads its branch.conf from the branch location names.
	{dir: ".bzr", files: []string{"branch/branch.conf", "branch/location", "branch/format"}},
}

// vcsProtected returns the protected paths of the other version-control
// systems' repositories at the top of root (git's are gitProtected's).
func vcsProtected(fsys fileSystem, root string, roots []string) []string {
	var out []string
	for _, v := range vcsSurfaces {
		dir := filepath.Join(root, v.dir)
		fi, err := fsys.Lstat(dir)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			// The tool follows it: protected as the link, whose target
			// linkWalk keeps read-only where a writable root holds it.
			out = append(out, dir)
			continue
		}
		if !fi.IsDir() {
			continue
		}
		dirs := []string{dir}
		if v.shared != "" {
			if src := sharedSource(fsys, dir, v.shared); src != "" && underAny(src, roots) {
				dirs = append(dirs, src)
			}
		}
		for _, d := range dirs {
			for _, f := range v.files {
				out = append(out, filepath.Join(d, f))
				if v.hgrc && f != v.shared {
					out = append(out, hgrcTargets(fsys, root, filepath.Join(d, f))...)
				}
			}
		}
	}
	return append(out, jjProtected(fsys, root, roots)...)
}

// sharedSource reads a Mercurial share's pointer file: the source
// repository's .hg directory, absolute or (relshared) relative to dir.
func sharedSource(fsys fileSystem, dir, name string) string {
	b, err := fsys.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	p := strings.TrimSpace(string(b))
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// jjProtected is Jujutsu's surface in root/.jj: the workspace's config
// and the repository's. Since jj 0.37 each is a config-id file naming a
// config kept in the user's config directory, and the older config.toml
// in .jj is read (and moved there) while no config-id exists. In a
// secondary workspace .jj/repo is a file naming the repository directory
// (relative to .jj): protected itself, and the configs of the repository
// it names where a writable root holds it.
func jjProtected(fsys fileSystem, root string, roots []string) []string {
	jj := filepath.Join(root, ".jj")
	if !isDir(fsys, jj) {
		return nil
	}
	out := jjConfig(fsys, jj, "workspace-config-id", "workspace-config.toml")
	repo := filepath.Join(jj, "repo")
	fi, err := fsys.Lstat(repo)
	switch {
	case err != nil:
		out = append(out, repo) // guarded: no pointer can be made
	case fi.IsDir():
		out = append(out, jjRepo(fsys, repo)...)
	default:
		out = append(out, repo)
		if target := sharedSource(fsys, jj, "repo"); target != "" && underAny(target, roots) && isDir(fsys, target) {
			out = append(out, jjRepo(fsys, target)...)
		}
	}
	return out
}

// jjRepo is the surface of a jj repository directory (.jj/repo): its
// config, and the git repository its git backend keeps: jj runs git in it
// to fetch and push, and git reads that repository's config and runs its
// hooks; store/git_target names where it is.
func jjRepo(fsys fileSystem, repo string) []string {
	out := jjConfig(fsys, repo, "config-id", "config.toml")
	if t := filepath.Join(repo, "store", "git_target"); exists(fsys, t) {
		out = append(out, t)
	}
	if g := filepath.Join(repo, "store", "git"); isDir(fsys, g) {
		out = append(out, surfaceOf(g)...)
	}
	return out
}

// jjConfig returns a jj config pair of dir: the config-id file, and the
// older config file, except where that is a symlink beside an existing
// config-id: jj then reads the config-id only, and the link (jj's own,
// for older versions) names the config in the user's config directory,
// outside every writable root.
func jjConfig(fsys fileSystem, dir, id, legacy string) []string {
	out := []string{filepath.Join(dir, id)}
	l := filepath.Join(dir, legacy)
	if fi, err := fsys.Lstat(l); err == nil && fi.Mode()&fs.ModeSymlink != 0 && exists(fsys, out[0]) {
		return out
	}
	return append(out, l)
}

// isDir says whether p is a directory, a final symlink not followed.
func isDir(fsys fileSystem, p string) bool {
	fi, err := fsys.Lstat(p)
	return err == nil && fi.IsDir()
}

// vcsDirNames are the directories of the version-control systems above
// whose files run programs; a writable root may not lie in one.
var vcsDirNames = []string{".hg", ".sl", ".jj", "_darcs", ".pijul", ".bzr"}

// vcsInterior refuses a writable root that lies inside a repository's own
// directory where the protected paths, computed from the top of each root,
// would miss files that run programs: in a .hg (or another system's
// directory, itself included), or inside a git directory (a .git, or a
// bare repository: HEAD with objects/ beside it) at or below one of its
// hooks, config, commondir, config.worktree, worktrees, modules or sl. A
// root that is a git directory itself is allowed (its surface is protected:
// rootIsGitDir), and so is one elsewhere inside a git directory (a
// checkout kept in .git/checkouts/x, or objects/), which holds none of it.
func vcsInterior(what, d string) error {
	for dir, child := d, ""; ; {
		base := filepath.Base(dir)
		switch {
		case slices.Contains(vcsDirNames, base):
			return invalidf("%s %q lies in the repository directory %q, whose configs run programs on the next version-control command there: give the working tree instead", what, d, dir)
		case dir != d && slices.Contains(gitDirEntries, child) && (base == ".git" || bareGitDir(dir)):
			return invalidf("%s %q lies in %s of the git directory %q, which runs programs on the next git command: give the repository's working tree, or the git directory itself", what, d, child, dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir, child = parent, base
	}
}

// gitDirEntries are the entries of a git directory that hold (or are)
// what runs programs: its surface, the git dirs of its linked worktrees
// and submodules, and Sapling's config in a git checkout.
var gitDirEntries = append([]string{"worktrees", "modules", "sl"}, gitSurface...)

// bareGitDir says whether dir looks like a git directory: a HEAD file (or
// link) with an objects directory beside it.
func bareGitDir(dir string) bool {
	head, err := os.Lstat(filepath.Join(dir, "HEAD"))
	if err != nil || !(head.Mode().IsRegular() || head.Mode()&fs.ModeSymlink != 0) {
		return false
	}
	obj, err := os.Lstat(filepath.Join(dir, "objects"))
	return err == nil && obj.IsDir()
}

// hgrcTargets returns what a Mercurial (or Sapling) config names that hg
// reads as config or runs: the files of %include (relative to the
// including file, followed to a small depth), the program of a [hooks]
// shell command named by a path and the file of a python:PATH:function
// hook (relative to the repository's root, where hg runs hooks), an
// extension loaded from a path (relative to the root, where the user
// runs hg), and the program of the other keys that run one (hgProgram).
// Protecting the config alone would leave those writable. Lines are read
// as Mercurial's config parser reads them: a line that starts with
// whitespace continues the value above it (a key with an empty value
// followed by an indented line is set to that line), a comment (# or ;
// in the first column) does not end a value, an empty line does. At most
// maxConfigFiles files are read.
func hgrcTargets(fsys fileSystem, root, config string) []string {
	seen := map[string]bool{}
	var out []string
	var read func(string, int)
	read = func(file string, depth int) {
		if depth > 4 || seen[file] || len(seen) >= maxConfigFiles {
			return
		}
		seen[file] = true
		b, err := fsys.ReadFile(file)
		if err != nil {
			return
		}
		for _, e := range parseHgrc(string(b)) {
			if e.include {
				inc := resolveGitPath(e.value, filepath.Dir(file))
				out = append(out, inc)
				read(inc, depth+1)
				continue
			}
			if e.value == "" || strings.IndexByte(e.value, 0) >= 0 {
				continue
			}
			// Each line of a shell command is a command of its own.
			for _, line := range strings.Split(e.value, "\n") {
				if line = strings.TrimSpace(line); line == "" {
					continue
				}
				if p := hgProgram(e.section, e.key, line, root); p != "" && p != root {
					out = append(out, p)
				}
			}
		}
	}
	read(config, 0)
	return out
}

// hgrcEntry is one setting of a Mercurial config (section and key as
// written, value with its continuation lines joined by newlines), or an
// %include (include set, value the file named).
type hgrcEntry struct {
	section, key, value string
	include             bool
}

// parseHgrc reads a Mercurial config as mercurial/config.py does: a
// byte-order mark; while a value is open, a comment line is skipped and
// a line starting with whitespace and holding text continues the value;
// otherwise %include, an empty or comment line, [section], or key = value
// (the key starts with neither = nor whitespace). %unset and lines hg
// refuses carry nothing.
func parseHgrc(text string) []hgrcEntry {
	var out []hgrcEntry
	section := ""
	open := -1 // the entry a continuation line extends
	// Python's splitlines ends a line at \r too.
	text = strings.ReplaceAll(strings.ReplaceAll(strings.TrimPrefix(text, "\ufeff"), "\r\n", "\n"), "\r", "\n")
	for _, l := range strings.Split(text, "\n") {
		if open >= 0 {
			if l != "" && (l[0] == '#' || l[0] == ';') {
				continue
			}
			if l != "" && hgSpace(l[0]) && strings.TrimSpace(l) != "" {
				out[open].value += "\n" + strings.TrimSpace(l)
				continue
			}
			open = -1
		}
		trimmed := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "%include") && len(l) > len("%include") && hgSpace(l[8]) && trimmed != "%include":
			out = append(out, hgrcEntry{value: strings.TrimSpace(l[8:]), include: true})
		case trimmed == "" || l[0] == '#' || l[0] == ';':
		case l[0] == '[':
			if end := strings.IndexByte(l, ']'); end > 1 && !strings.Contains(l[1:end], "[") {
				section = l[1:end]
			}
		case l[0] != '=' && !hgSpace(l[0]):
			key, value, ok := strings.Cut(l, "=")
			if !ok {
				continue
			}
			out = append(out, hgrcEntry{section: section, key: strings.TrimSpace(key), value: strings.TrimSpace(value)})
			open = len(out) - 1
		}
	}
	return out
}

// hgSpace is whitespace as Python's bytes patterns see it (\s).
func hgSpace(c byte) bool { return strings.IndexByte(" \t\r\n\f\v", c) >= 0 }

// hgProgram is the file a Mercurial setting that runs a program names by
// a path (relative to the root), or "": a [hooks] command or
// python:PATH:function hook, an [extensions] module loaded from a path,
// and the settings hgCommandKey lists.
func hgProgram(section, key, value, root string) string {
	switch section {
	case "hooks":
		if rest, ok := strings.CutPrefix(value, "python:"); ok {
			if i := strings.LastIndexByte(rest, ':'); i > 0 && (strings.ContainsRune(rest[:i], '/') || strings.HasSuffix(rest[:i], ".py")) {
				return resolveGitPath(rest[:i], root)
			}
			return ""
		}
		return programPath(value, root)
	case "extensions":
		if value[0] == '!' || !strings.ContainsRune(value, '/') {
			return "" // disabled, or a module found on Python's path
		}
		return resolveGitPath(value, root)
	}
	if hgCommandKey(section, key, value) {
		return programPath(value, root)
	}
	return ""
}

// hgCommandKey reports whether a Mercurial setting other than [hooks] and
// [extensions] names a program hg runs: ui.editor, ui.merge, ui.patch,
// ui.ssh, pager.pager, email.method, gpg.cmd, rhg.fallback-executable, a
// shell alias, [merge-patterns], a merge tool's executable ([merge-tools]
// and [partial-merge-tools] x.executable), an extdiff command and a fix
// tool's command ([fix] x:command). (hg help config; [web], read by hg
// serve, names none.)
func hgCommandKey(section, key, value string) bool {
	switch section + "." + key {
	case "ui.editor", "ui.merge", "ui.patch", "ui.ssh", "pager.pager", "email.method", "gpg.cmd", "rhg.fallback-executable":
		return true
	}
	switch section {
	case "alias":
		return value[0] == '!' // a shell alias; others are hg commands
	case "merge-patterns": // a merge tool's name, or its program
		return true
	case "merge-tools", "partial-merge-tools":
		return strings.HasSuffix(key, ".executable")
	case "extdiff":
		return !strings.HasPrefix(key, "opts.") && !strings.HasPrefix(key, "gui.")
	case "fix":
		return strings.HasSuffix(key, ":command")
	}
	return false
}
