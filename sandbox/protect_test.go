package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/nativepath"
)

func mkfile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestProtectedPaths(t *testing.T) {
	base := t.TempDir()
	// A repository with a nested submodule and a linked worktree.
	repo := filepath.Join(base, "repo")
	mkfile(t, filepath.Join(repo, ".git/HEAD"), "ref: refs/heads/main\n")
	mkfile(t, filepath.Join(repo, ".git/modules/lib/config.worktree"), "x")
	mkfile(t, filepath.Join(repo, ".git/modules/lib/HEAD"), "x")
	mkfile(t, filepath.Join(repo, ".git/modules/lib/modules/deep/HEAD"), "x")
	mkfile(t, filepath.Join(repo, ".git/modules/group/inner/HEAD"), "x")
	os.MkdirAll(filepath.Join(repo, ".git/worktrees/wt"), 0o755)
	// The checkouts of lib (its .git a pointer, found from core.worktree)
	// and of a module .gitmodules lists whose git dir has no core.worktree.
	mkfile(t, filepath.Join(repo, ".git/modules/lib/config"), "[core]\n\tworktree = ../../../lib\n")
	mkfile(t, filepath.Join(repo, "lib/.git"), "gitdir: ../.git/modules/lib\n")
	mkfile(t, filepath.Join(repo, ".gitmodules"), "[submodule \"g\"]\n\tpath = group/inner\n[submodule \"gone\"]\n\tpath = gone\n")
	mkfile(t, filepath.Join(repo, "group/inner/.git"), "gitdir: ../../.git/modules/group/inner\n")
	// A linked worktree checkout whose .git is a pointer file.
	wt := filepath.Join(base, "wt")
	mkfile(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(repo, ".git/worktrees/wt")+"\n")
	mkfile(t, filepath.Join(repo, ".git/worktrees/wt/commondir"), "../..\n")
	// A plain directory without a repository.
	plain := filepath.Join(base, "plain")
	os.Mkdir(plain, 0o755)
	// A pointer to a git dir outside every writable root.
	outside := filepath.Join(base, "outside-ptr")
	mkfile(t, filepath.Join(outside, ".git"), "gitdir: /elsewhere/.git\n")
	// .git as a symlink to a decoy: the link itself is protected, not followed.
	linked := filepath.Join(base, "linked")
	os.Mkdir(linked, 0o755)
	os.Symlink(filepath.Join(plain), filepath.Join(linked, ".git"))

	cases := []struct {
		name  string
		roots []string
		extra []string
		want  []string
	}{
		{"repo", []string{repo}, nil, []string{
			".git/hooks", ".git/config", ".git/commondir", ".git/config.worktree",
			".git/modules/lib/hooks", ".git/modules/lib/config", ".git/modules/lib/commondir", ".git/modules/lib/config.worktree",
			".git/modules/lib/modules/deep/hooks", ".git/modules/lib/modules/deep/config", ".git/modules/lib/modules/deep/commondir", ".git/modules/lib/modules/deep/config.worktree",
			".git/modules/group/inner/hooks", ".git/modules/group/inner/config", ".git/modules/group/inner/commondir", ".git/modules/group/inner/config.worktree",
			".git/worktrees/wt/hooks", ".git/worktrees/wt/config", ".git/worktrees/wt/commondir", ".git/worktrees/wt/config.worktree",
			"lib/.git", "group/inner/.git",
		}},
		{"no repository", []string{plain}, nil, nil},
		{"caller extras", []string{plain}, []string{".env", ".agent/config", filepath.Join(plain, "abs"), "/not/under/any/root"},
			[]string{".env", ".agent/config", "abs"}},
		{"symlinked .git", []string{linked}, nil, []string{".git"}},
		{"pointer outside roots", []string{outside}, nil, []string{".git"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, _ := protectedPaths(osFS{}, c.roots, nil, c.extra)
			var want []string
			for _, w := range c.want {
				want = append(want, filepath.Join(c.roots[0], w))
			}
			sort.Strings(got)
			sort.Strings(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}

	// The worktree checkout with both roots writable: its pointer, its git
	// dir's surface and the common dir's surface.
	got, _, _ := protectedPaths(osFS{}, []string{wt, repo}, nil, nil)
	for _, p := range []string{filepath.Join(wt, ".git"), filepath.Join(repo, ".git/worktrees/wt/config"), filepath.Join(repo, ".git/worktrees/wt/commondir"), filepath.Join(repo, ".git/hooks"), filepath.Join(repo, ".git/config")} {
		if !slices.Contains(got, p) {
			t.Errorf("worktree pointer: %q missing from %q", p, got)
		}
	}
}

func TestProtectedPathsBounded(t *testing.T) {
	repo := t.TempDir()
	for i := 0; i < maxGitDirs+50; i++ {
		mkfile(t, filepath.Join(repo, ".git/modules", "m"+itoa(i), "HEAD"), "x")
	}
	got, _, _ := protectedPaths(osFS{}, []string{repo}, nil, nil)
	// Past the budget, the git dirs not looked into are protected whole.
	whole := 0
	for _, p := range got {
		if filepath.Dir(p) == filepath.Join(repo, ".git/modules") {
			whole++
		}
	}
	if whole != 50 {
		t.Fatalf("%d submodule git dirs protected whole, want the 50 past the budget", whole)
	}
	// Each git dir's whole surface, present or not, the 50 past the
	// budget, and the modules directory of the last one looked into.
	if max := (maxGitDirs+1)*len(gitSurface) + 51; len(got) > max {
		t.Fatalf("%d protected paths, want at most %d", len(got), max)
	}
}

func TestProtectedPathsTooDeep(t *testing.T) {
	repo := t.TempDir()
	deep := filepath.Join(repo, ".git/modules")
	for i := range 20 {
		deep = filepath.Join(deep, "d"+itoa(i))
	}
	mkfile(t, filepath.Join(deep, "HEAD"), "x")
	got, _, _ := protectedPaths(osFS{}, []string{repo}, nil, nil)
	covered := false
	for _, p := range got {
		covered = covered || nativepath.Within(filepath.Join(deep, "hooks"), p)
	}
	if !covered {
		t.Fatalf("a git dir past the depth limit is not covered: %q", got)
	}
}

func itoa(i int) string {
	return string(rune('0'+i/100%10)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
}

func TestProtectedPathsFollowHooksPathAndIncludes(t *testing.T) {
	repo := t.TempDir()
	mkfile(t, filepath.Join(repo, ".git/HEAD"), "ref: refs/heads/main\n")
	mkfile(t, filepath.Join(repo, ".git/config"), "[core]\n\tbare = false\n\thooksPath = .husky/_\n[include]\n\tpath = ../shared.gitconfig\n[includeIf \"gitdir:/x/\"]\n\tpath = \"/elsewhere/conf\"\n[core]\n\tfsmonitor = tools/fsmon.sh\n\teditor = vim\n[alias]\n\tlint = !./tools/lint.sh --fix\n[diff \"img\"]\n\ttextconv = /usr/bin/exiftool\n")
	mkfile(t, filepath.Join(repo, "shared.gitconfig"), "[core]\n\thooksPath = tools/hooks\n[include]\n\tpath = more.gitconfig\n")
	got, _, _ := protectedPaths(osFS{}, []string{repo}, nil, nil)
	for _, want := range []string{".husky/_", ".husky", "shared.gitconfig", "tools/hooks", "more.gitconfig", "tools/fsmon.sh", "tools/lint.sh"} {
		if !slices.Contains(got, filepath.Join(repo, want)) {
			t.Errorf("%s is not protected: %q", want, got)
		}
	}
	if slices.Contains(got, "/elsewhere/conf") || slices.Contains(got, "/usr/bin/exiftool") || slices.Contains(got, filepath.Join(repo, "vim")) {
		t.Errorf("a path outside every writable root was listed: %q", got)
	}
}

// TestProtectedPathsResolveTheirDirectories: the launcher refuses a symlink
// above a protected path at launch, so one that is there at Wrap time is
// resolved here; the last element is kept as it is.
func TestProtectedPathsResolveTheirDirectories(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	mkfile(t, filepath.Join(ws, "conf/agent/settings.json"), "{}")
	os.Symlink("conf/agent", filepath.Join(ws, ".agent"))
	os.Symlink("settings.json", filepath.Join(ws, "conf/agent/link.json"))
	os.Symlink(base, filepath.Join(ws, "out"))
	got, _, _ := protectedPaths(osFS{}, []string{ws}, nil, []string{".agent/settings.json", ".agent/link.json", ".agent/missing/x", "out/x"})
	want := []string{filepath.Join(ws, "conf/agent/settings.json"), filepath.Join(ws, "conf/agent/link.json"), filepath.Join(ws, "conf/agent/missing/x")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("protectedPaths = %q, want %q", got, want)
	}
}

// TestProtectedPathsFollowLinks: what the protected paths point to is
// protected too, where a writable root holds it.
func TestProtectedPathsFollowLinks(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	type layout func(ws string)
	ln := func(target, link string) {
		os.MkdirAll(filepath.Dir(link), 0o755)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name      string
		layout    layout
		want, not []string // relative to ws
		gap       string
	}{
		{"hook linked to a script", func(ws string) {
			mkfile(t, filepath.Join(ws, "scripts/pre-commit.sh"), "x")
			ln("../../scripts/pre-commit.sh", filepath.Join(ws, ".git/hooks/pre-commit"))
		}, []string{"scripts/pre-commit.sh"}, []string{".git/hooks/pre-commit"}, ""},
		{"hook linked to a missing script", func(ws string) {
			ln("../../scripts/absent.sh", filepath.Join(ws, ".git/hooks/pre-push"))
		}, []string{"scripts/absent.sh"}, nil, ""},
		{"hook linked outside every root", func(ws string) {
			ln("/usr/bin/true", filepath.Join(ws, ".git/hooks/pre-push"))
		}, nil, []string{"/usr/bin/true"}, ""},
		{"hook linked to a directory, and links in it", func(ws string) {
			mkfile(t, filepath.Join(ws, "lib/x.sh"), "x")
			mkfile(t, filepath.Join(ws, "deeper/y.sh"), "y")
			ln("../deeper/y.sh", filepath.Join(ws, "lib/y.sh"))
			ln("../../lib", filepath.Join(ws, ".git/hooks/lib"))
		}, []string{"lib", "deeper/y.sh"}, []string{"lib/y.sh"}, ""},
		{"a chain through a writable link", func(ws string) {
			mkfile(t, filepath.Join(ws, "s/real.sh"), "x")
			ln("real.sh", filepath.Join(ws, "s/current"))
			ln("../../s/current", filepath.Join(ws, ".git/hooks/commit-msg"))
		}, []string{"s/current", "s/real.sh"}, nil, ""},
		{"the hooks directory is a link", func(ws string) {
			mkfile(t, filepath.Join(ws, "scripts/pc.sh"), "x")
			ln("../scripts/pc.sh", filepath.Join(ws, "githooks/pre-commit"))
			os.RemoveAll(filepath.Join(ws, ".git/hooks"))
			ln("../githooks", filepath.Join(ws, ".git/hooks"))
		}, []string{".git/hooks", "githooks", "scripts/pc.sh"}, nil, ""},
		{"the config is a link", func(ws string) {
			mkfile(t, filepath.Join(ws, "conf/gitconfig"), "[core]\n")
			os.Remove(filepath.Join(ws, ".git/config"))
			ln("../conf/gitconfig", filepath.Join(ws, ".git/config"))
		}, []string{".git/config", "conf/gitconfig"}, nil, ""},
		{"a hard-linked hook, a hard-linked sample", func(ws string) {
			mkfile(t, filepath.Join(ws, "pc.sh"), "x")
			os.Link(filepath.Join(ws, "pc.sh"), filepath.Join(ws, ".git/hooks/pre-commit"))
			os.Link(filepath.Join(ws, "pc.sh"), filepath.Join(ws, ".git/hooks/update.sample"))
		}, []string{".git/hooks/pre-commit"}, []string{".git/hooks/update.sample"}, ""},
		{"husky v9", func(ws string) {
			mkfile(t, filepath.Join(ws, ".git/config"), "[core]\n\thooksPath = .husky/_\n")
			mkfile(t, filepath.Join(ws, ".husky/_/pre-commit"), ". \"${0%/*}/h\"")
			mkfile(t, filepath.Join(ws, ".husky/pre-commit"), "npm test\n")
		}, []string{".husky", ".husky/_"}, nil, ""},
		{"husky installed at the top", func(ws string) {
			mkfile(t, filepath.Join(ws, ".git/config"), "[core]\n\thooksPath = _\n")
			mkfile(t, filepath.Join(ws, "_/pre-commit"), ". \"${0%/*}/h\"")
			mkfile(t, filepath.Join(ws, "_/h"), "")
			mkfile(t, filepath.Join(ws, "_/.gitignore"), "*")
		}, []string{"_", "pre-commit"}, []string{"", "h", ".gitignore"}, ""},
		{"a hook links to the workspace itself", func(ws string) {
			ln("../..", filepath.Join(ws, ".git/hooks/top"))
		}, nil, []string{""}, "links to the writable root"},
		{"too many links", func(ws string) {
			for i := range maxHookLinks + 10 {
				ln("../../t/"+itoa(i), filepath.Join(ws, ".git/hooks", "l"+itoa(i)))
			}
		}, nil, nil, "not examined"},
		{"too many entries", func(ws string) {
			for i := range maxHookEntries + 1 {
				if err := os.WriteFile(filepath.Join(ws, ".git/hooks", "s"+strconv.Itoa(i)+".sample"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}, nil, nil, "not examined"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := filepath.Join(base, "ws"+itoa(i))
			mkfile(t, filepath.Join(ws, ".git/HEAD"), "ref: refs/heads/main\n")
			mkfile(t, filepath.Join(ws, ".git/config"), "[core]\n")
			os.MkdirAll(filepath.Join(ws, ".git/hooks"), 0o755)
			c.layout(ws)
			got, _, gaps := protectedPaths(osFS{}, []string{ws}, nil, nil)
			abs := func(p string) string {
				if filepath.IsAbs(p) {
					return p
				}
				return filepath.Join(ws, p)
			}
			for _, p := range c.want {
				if !slices.Contains(got, abs(p)) {
					t.Errorf("%s is not protected: %q", p, got)
				}
			}
			for _, p := range c.not {
				if slices.Contains(got, abs(p)) {
					t.Errorf("%s is listed: %q", p, got)
				}
			}
			found := len(gaps) > 0 && strings.Contains(gaps[0].Reason, c.gap) && strings.Contains(gaps[0].Reason, filepath.Join(ws, ".git/hooks"))
			if c.gap == "" && len(gaps) > 0 || c.gap != "" && !found {
				t.Errorf("gaps %v, want one saying %q", gaps, c.gap)
			}
		})
	}
}

// TestToolConfigsWhereTheyExist: a default tool config is protected under
// every root where it is there, a symlink as the link itself and as the
// path it points to inside the root, and one that is not there is left
// out (nothing could cover it).
func TestToolConfigsWhereTheyExist(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	mkfile(t, filepath.Join(a, ".vscode/tasks.json"), "{}\n")
	mkfile(t, filepath.Join(b, ".npmrc"), "fund=false\n")
	if err := os.Symlink("elsewhere", filepath.Join(b, ".envrc")); err != nil {
		t.Fatal(err)
	}
	got, absent, _ := protectedPaths(osFS{}, []string{a, b}, []string{".vscode", ".npmrc", ".envrc", ".mcp.json"}, nil)
	want := []string{filepath.Join(a, ".vscode"), filepath.Join(b, ".npmrc"), filepath.Join(b, ".envrc"), filepath.Join(b, "elsewhere")}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// The absent ones, root by root in the configs' order, are what the
	// namespaces guard keeps from being created.
	wantAbsent := []string{filepath.Join(a, ".npmrc"), filepath.Join(a, ".envrc"), filepath.Join(a, ".mcp.json"),
		filepath.Join(b, ".vscode"), filepath.Join(b, ".mcp.json")}
	if !slices.Equal(absent, wantAbsent) {
		t.Errorf("absent: got %v, want %v", absent, wantAbsent)
	}
}

// TestParseGitConfig: values as git reads them, where Wrap's first reader
// kept a trailing comment, a byte-order mark or a continued line as part
// of a path (otherwise the real hooks path stayed writable).
func TestParseGitConfig(t *testing.T) {
	cases := []struct {
		name, text string
		want       []gitConfigEntry
	}{
		{"plain", "[core]\n\thooksPath = .githooks\n", []gitConfigEntry{{"core", "hookspath", ".githooks"}}},
		{"comment after the value", "[core]\n\thooksPath = .githooks  ; the team hooks\n", []gitConfigEntry{{"core", "hookspath", ".githooks"}}},
		{"hash comment", "[core]\nhooksPath = .githooks # x\n", []gitConfigEntry{{"core", "hookspath", ".githooks"}}},
		{"quoted then comment", "[core]\nhooksPath = \".githooks\" # x\n", []gitConfigEntry{{"core", "hookspath", ".githooks"}}},
		{"hash inside quotes", "[core]\nhooksPath = \"a#b;c\"\n", []gitConfigEntry{{"core", "hookspath", "a#b;c"}}},
		{"byte-order mark", "\ufeff[core]\nhooksPath = .githooks\n", []gitConfigEntry{{"core", "hookspath", ".githooks"}}},
		{"continued line", "[core]\nhooksPath = .git\\\nhooks\n", []gitConfigEntry{{"core", "hookspath", ".githooks"}}},
		{"escapes", "[core]\nhooksPath = \"a\\\\b\\\"c\"\n", []gitConfigEntry{{"core", "hookspath", `a\b"c`}}},
		{"subsection", "[pager \"log\"]\n[pager]\n\tlog = ./tools/pager.sh\n", []gitConfigEntry{{"pager", "log", "./tools/pager.sh"}}},
		{"dotted subsection", "[includeIf.gitdir:/x/]\npath = other\n", []gitConfigEntry{{"includeif", "path", "other"}}},
		{"key after the header", "[core] hooksPath = h\n", []gitConfigEntry{{"core", "hookspath", "h"}}},
		{"CRLF", "[core]\r\nhooksPath = h\r\n", []gitConfigEntry{{"core", "hookspath", "h"}}},
		{"boolean and comments skipped", "# c\n; c\n[core]\n\tbare\n", nil},
		{"unknown escape refused", "[core]\nhooksPath = a\\qb\n", nil},
		{"open quote refused", "[core]\nhooksPath = \"a\n", nil},
	}
	for _, c := range cases {
		if got := parseGitConfig(c.text); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestConfigIncludeBomb: a config that includes itself many times under
// a condition that never holds is read once, not exponentially often (red
// team: every later Wrap hung, then ran out of memory).
func TestConfigIncludeBomb(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, []byte("[core]\n"+strings.Repeat("[includeIf \"gitdir:/nonexistent/\"]\n\tpath = config\n", 60)), 0o644)
	counting := &countingFS{fileSystem: osFS{}}
	var hooks []string
	configTargets(counting, dir, cfg, 0, &hooks)
	if counting.reads > maxConfigFiles {
		t.Errorf("%d config reads, want at most %d", counting.reads, maxConfigFiles)
	}
}

type countingFS struct {
	fileSystem
	reads int
}

func (c *countingFS) ReadFile(n string) ([]byte, error) {
	c.reads++
	return c.fileSystem.ReadFile(n)
}
