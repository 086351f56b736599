//go:build linux

package integration

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// gapNaming returns the first gap whose reason names p (and every one of
// words), or "".
func gapNaming(w *sandbox.Wrapped, p string, words ...string) string {
	for _, g := range w.Gaps {
		ok := g.Area == "fs" && strings.Contains(g.Reason, p)
		for _, word := range words {
			ok = ok && strings.Contains(g.Reason, word)
		}
		if ok {
			return g.Reason
		}
	}
	return ""
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestGitHookLinkedIntoTheWorkspace: a hook (or a hooks directory) that is
// a symlink into the workspace, the common way to share hooks. The link
// sits in a read-only directory, but what it points to must be read-only
// too, or the command edits the script the user's next git commit runs.
func TestGitHookLinkedIntoTheWorkspace(t *testing.T) {
	cases := []struct {
		name   string
		layout func(t *testing.T, ws string)
		// protected are the files (relative to ws) the command must not
		// change; writable is a sibling that stays writable.
		protected []string
		writable  string
	}{
		{"hook links to a script", func(t *testing.T, ws string) {
			write(t, filepath.Join(ws, "scripts/pre-commit.sh"), "#!/bin/sh\nexit 0\n")
			symlink(t, "../../scripts/pre-commit.sh", filepath.Join(ws, ".git/hooks/pre-commit"))
		}, []string{"scripts/pre-commit.sh"}, "scripts/other.sh"},
		{"hook links to a directory of scripts", func(t *testing.T, ws string) {
			write(t, filepath.Join(ws, "tools/hooklib/common.sh"), "true\n")
			symlink(t, "../../tools/hooklib", filepath.Join(ws, ".git/hooks/lib"))
		}, []string{"tools/hooklib/common.sh", "tools/hooklib/new.sh"}, "tools/other.sh"},
		{"the hooks directory is a link", func(t *testing.T, ws string) {
			if err := os.RemoveAll(filepath.Join(ws, ".git/hooks")); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(ws, "scripts/pc.sh"), "#!/bin/sh\nexit 0\n")
			symlink(t, "../scripts/pc.sh", filepath.Join(ws, "githooks/pre-commit"))
			symlink(t, "../githooks", filepath.Join(ws, ".git/hooks"))
		}, []string{"githooks/pre-commit", "githooks/post-merge", "scripts/pc.sh"}, "scripts/other.sh"},
		{"core.hooksPath holds links", func(t *testing.T, ws string) {
			git(t, ws, "config", "core.hooksPath", ".githooks")
			write(t, filepath.Join(ws, "ci/lint.sh"), "#!/bin/sh\nexit 0\n")
			symlink(t, "../ci/lint.sh", filepath.Join(ws, ".githooks/pre-push"))
		}, []string{"ci/lint.sh", ".githooks/pre-commit"}, "ci/other.sh"},
		{"a config command names a workspace script", func(t *testing.T, ws string) {
			git(t, ws, "config", "alias.lint", "!./tools/lint.sh --fix")
			git(t, ws, "config", "core.fsmonitor", "tools/fsmon.sh")
			write(t, filepath.Join(ws, "tools/lint.sh"), "#!/bin/sh\nexit 0\n")
			write(t, filepath.Join(ws, "tools/fsmon.sh"), "#!/bin/sh\nexit 0\n")
		}, []string{"tools/lint.sh", "tools/fsmon.sh"}, "tools/other.sh"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachRunner(t, func(t *testing.T, s *sbx) {
				gitRepo(t, s.ws)
				c.layout(t, s.ws)
				pol := s.policy()
				w := s.wrap(pol, "true")
				if !s.traits().enforcesReadOnly {
					// Landlock cannot narrow a root: the report must name
					// what the hooks run.
					for _, p := range c.protected {
						if _, err := os.Lstat(filepath.Join(s.ws, p)); err != nil {
							continue // a name that is not there: under its protected directory
						}
						if gapNaming(w, filepath.Join(s.ws, p)) == "" && gapNaming(w, filepath.Join(s.ws, filepath.Dir(p))) == "" {
							t.Errorf("no gap names %s: %v", p, w.Gaps)
						}
					}
					return
				}
				for _, p := range c.protected {
					abs := filepath.Join(s.ws, p)
					before, _ := os.ReadFile(abs)
					verb := "append"
					if before == nil {
						verb = "write"
					}
					wantDenied(t, "change "+p, s.tool(pol, verb, abs), "EACCES", "EROFS", "ENOENT")
					if after, _ := os.ReadFile(abs); string(after) != string(before) {
						t.Errorf("%s changed: %q", p, after)
					}
				}
				wantOK(t, "control: a sibling stays writable", s.tool(pol, "write", filepath.Join(s.ws, c.writable)))
			})
		})
	}
}

// TestGitHookLinkChainThroughTheWorkspace: a hook links to a link inside
// the workspace. That second link can be re-pointed by the command (its
// directory is writable), so it is reported, by name; its current target
// is still kept read-only.
func TestGitHookLinkChainThroughTheWorkspace(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		write(t, filepath.Join(s.ws, "scripts/real.sh"), "#!/bin/sh\nexit 0\n")
		symlink(t, "real.sh", filepath.Join(s.ws, "scripts/current"))
		symlink(t, "../../scripts/current", filepath.Join(s.ws, ".git/hooks/commit-msg"))
		w := s.wrap(s.policy(), "true")
		link := filepath.Join(s.ws, "scripts/current")
		if gapNaming(w, link) == "" {
			t.Errorf("no gap names the re-pointable link %s: %v", link, w.Gaps)
		}
		if !s.traits().enforcesReadOnly {
			return
		}
		wantDenied(t, "change the chain's target", s.tool(s.policy(), "append", filepath.Join(s.ws, "scripts/real.sh")))
		wantContent(t, filepath.Join(s.ws, "scripts/real.sh"), "#!/bin/sh\nexit 0\n")
	})
}

// TestGitHookLinksBounded: a hooks directory holding thousands of links
// costs Wrap a bounded amount of work, and what was not examined is
// reported.
func TestGitHookLinksBounded(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		os.MkdirAll(filepath.Join(s.ws, "many"), 0o755)
		for i := range 3000 {
			name := "h" + strings.Repeat("x", i%7) + strconv.Itoa(i)
			symlink(t, "../../many/"+name, filepath.Join(s.ws, ".git/hooks", name))
		}
		w := s.wrap(s.policy(), "true")
		if gapNaming(w, filepath.Join(s.ws, ".git/hooks"), "not examined") == "" {
			t.Errorf("no gap says the hooks were not all examined: %v", w.Gaps)
		}
		if w.Enforcement != sandbox.Partial {
			t.Errorf("enforcement %s, want partial", w.Enforcement)
		}
	})
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestGitConfigHardLinked: an earlier command ran git init and then made a
// second name for .git/config. The next wrap binds .git/config read-only,
// but the other name writes the same inode: the report must name it (the
// gap is real: the alias is writable), and RequireFull must refuse.
func TestGitConfigHardLinked(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		pol := s.policy()
		// The earlier command: a repository of its own, and an alias.
		r := s.run(pol, "/bin/sh", "-c", "git init -q . && ln .git/config keep")
		if r.code != 0 {
			t.Fatalf("git init + ln inside: exit %d stderr %q", r.code, r.stderr)
		}
		config, alias := filepath.Join(s.ws, ".git/config"), filepath.Join(s.ws, "keep")
		w := s.wrap(pol, "true")
		if !s.traits().enforcesReadOnly {
			if gapNaming(w, config) == "" {
				t.Errorf("no gap names %s: %v", config, w.Gaps)
			}
			return
		}
		if gapNaming(w, config, "2 hard links") == "" {
			t.Errorf("no gap names the hard-linked %s: %v", config, w.Gaps)
		}
		wantDenied(t, "write .git/config by its name", s.tool(pol, "append", config))
		wantOK(t, "the gap is real: the alias writes the protected inode", s.tool(pol, "append", alias))
		if b, _ := os.ReadFile(config); !strings.HasSuffix(string(b), "appended\n") {
			t.Errorf(".git/config did not change through its alias: %q", b)
		}
		full := pol
		full.RequireFull = true
		_, err := s.p.Wrap(t.Context(), sandboxRequest(full, "true"))
		if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "hard links") {
			t.Errorf("RequireFull with a hard-linked protected file: %v, want SANDBOX_UNAVAILABLE naming the hard links", err)
		}
	})
}

// TestGitPlainRepoHasNoHardLinkGap: the positive control: a plain
// repository reports no hard-link gap, and its protection is as before.
func TestGitPlainRepoHasNoHardLinkGap(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		w := s.wrap(s.policy(), "true")
		for _, g := range w.Gaps {
			if strings.Contains(g.Reason, "hard link") {
				t.Errorf("a plain repository reports %q", g)
			}
		}
	})
}

// TestReadOnlyFileHardLinkedAfterWrap: a second name made between Wrap and
// launch: the launcher with -full refuses what it finds on the file it
// opened, not only what Wrap saw.
func TestReadOnlyFileHardLinkedAfterWrap(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		if !s.traits().enforcesReadOnly {
			t.Skip("landlock reports every read-only subpath as a gap; -full refuses them all")
		}
		env := filepath.Join(s.ws, ".env")
		write(t, env, "TOKEN=1\n")
		pol := s.policy()
		pol.ReadOnlySubpaths = []string{".env"}
		marker := filepath.Join(s.ws, "ran")
		// Control: with nothing partial, -full runs the command.
		w := s.wrap(pol, self(t), toolArg, "write", marker)
		if len(w.Gaps) != 0 {
			t.Fatalf("control wrap is partial: %v", w.Gaps)
		}
		w.Args = withOptions(w.Args, "-full")
		if r := s.spawn(w, nil); r.code != 0 {
			t.Fatalf("control: -full with a plain read-only file: exit %d stderr %q", r.code, r.stderr)
		}
		os.Remove(marker)

		w = s.wrap(pol, self(t), toolArg, "write", marker)
		if err := os.Link(env, filepath.Join(s.ws, "env-alias")); err != nil {
			t.Fatal(err)
		}
		w.Args = withOptions(w.Args, "-full")
		r := s.spawn(w, nil)
		if r.code != 125 || !strings.HasPrefix(r.stderr, w.RunnerFailure.FatalPrefix) || !strings.Contains(r.stderr, "hard links") {
			t.Errorf("-full with a hard link made after Wrap: exit %d stderr %q, want 125 naming the hard links", r.code, r.stderr)
		}
		wantAbsent(t, marker)
	})
}

// TestHuskyHooks: husky v9 sets core.hooksPath to .husky/_, whose stubs
// source .husky/_/h, which runs .husky/<hook>: the scripts the user keeps
// (and commits) in .husky must be read-only, not only the stubs. Older
// husky (v5 to v8) used .husky itself as the hooks path. The fixture is
// husky's real layout, written by hand.
func TestHuskyHooks(t *testing.T) {
	layouts := []struct {
		name, hooksPath string
		files           map[string]string
	}{
		{"v9", ".husky/_", map[string]string{
			".husky/_/.gitignore": "*",
			".husky/_/h":          "#!/usr/bin/env sh\nn=$(basename \"$0\")\ns=$(dirname \"$(dirname \"$0\")\")/$n\n[ ! -f \"$s\" ] && exit 0\nsh -e \"$s\" \"$@\"\n",
			".husky/_/pre-commit": "#!/usr/bin/env sh\n. \"${0%/*}/h\"",
			".husky/_/commit-msg": "#!/usr/bin/env sh\n. \"${0%/*}/h\"",
			".husky/_/husky.sh":   "",
			".husky/pre-commit":   "npm test\n",
		}},
		{"v8", ".husky", map[string]string{
			".husky/_/.gitignore": "*",
			".husky/_/husky.sh":   "#!/usr/bin/env sh\n",
			".husky/pre-commit":   "#!/usr/bin/env sh\n. \"$(dirname -- \"$0\")/_/husky.sh\"\n\nnpm test\n",
		}},
	}
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			forEachRunner(t, func(t *testing.T, s *sbx) {
				gitRepo(t, s.ws)
				git(t, s.ws, "config", "core.hooksPath", l.hooksPath)
				for p, content := range l.files {
					write(t, filepath.Join(s.ws, p), content)
					if !strings.HasSuffix(p, ".gitignore") {
						os.Chmod(filepath.Join(s.ws, p), 0o755)
					}
				}
				pol := s.policy()
				husky := filepath.Join(s.ws, ".husky")
				w := s.wrap(pol, "true")
				if !s.traits().enforcesReadOnly {
					if gapNaming(w, husky) == "" {
						t.Errorf("no gap names %s: %v", husky, w.Gaps)
					}
					return
				}
				wantDenied(t, "edit the husky pre-commit script", s.tool(pol, "append", filepath.Join(husky, "pre-commit")))
				wantContent(t, filepath.Join(husky, "pre-commit"), l.files[".husky/pre-commit"])
				wantDenied(t, "add a husky commit-msg script", s.tool(pol, "write", filepath.Join(husky, "commit-msg")))
				wantAbsent(t, filepath.Join(husky, "commit-msg"))
				wantDenied(t, "move .husky away", s.tool(pol, "rename", husky, filepath.Join(s.ws, "husky-old")), "EBUSY", "EACCES", "EROFS", "EPERM", "EXDEV")
				wantAbsent(t, filepath.Join(s.ws, "husky-old"))
				wantOK(t, "control: the worktree stays writable", s.tool(pol, "write", filepath.Join(s.ws, "src.js")))
				// git commit still works, and runs the (read-only) hook.
				r := s.run(pol, "/bin/sh", "-c", "echo x > f && git add f && git -c core.hooksPath=/nonexistent commit -qm c && echo done")
				if r.code != 0 || r.stdout != "done\n" {
					t.Errorf("git commit with husky's layout: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
				}
			})
		})
	}
}

// TestPlantedFIFONeverHoldsTheNextWrap: Wrap reads the git files a command
// may have left in the workspace (a .git pointer, the commondir it names,
// a config, the hooks directory). A FIFO in one of those places held Wrap
// in open(2) forever, and every command after it. Each layout
// is planted by a command under the runner, then the next Wrap and its
// command must finish; the control is the same layout with regular files.
func TestPlantedFIFONeverHoldsTheNextWrap(t *testing.T) {
	layouts := []struct{ name, plant string }{
		{"pointer to a git dir whose commondir is a FIFO", `mkdir sub && printf 'gitdir: sub\n' > .git && mkfifo sub/commondir`},
		{"hooks path whose husky directory is a FIFO", `mkdir -p .git && printf '[core]\n\thooksPath = .husky/_\n' > .git/config && mkdir .husky && mkfifo .husky/_`},
		{"the git config itself is a FIFO", `mkdir -p .git && mkfifo .git/config`},
		{"a worktrees directory that is a FIFO", `mkdir -p .git && mkfifo .git/worktrees`},
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		for _, l := range layouts {
			t.Run(l.name, func(t *testing.T) {
				s := newSbx(t, s.runner)
				if r := s.run(s.policy(), "/bin/sh", "-c", l.plant); r.code != 0 {
					t.Fatalf("control: planting: exit %d, %s", r.code, r.stderr)
				}
				done := make(chan ran, 1)
				go func() { done <- s.run(s.policy(), "/bin/sh", "-c", "echo next-command-ran") }()
				select {
				case r := <-done:
					if r.code != 0 || !strings.Contains(r.stdout, "next-command-ran") {
						t.Fatalf("the next command: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("the next Wrap and command did not finish in 20 s: a planted FIFO holds Wrap")
				}
			})
		}
	})
}

// TestRootCannotBecomeAGitDirectory: git looks at a directory's
// .git first and, when that is no repository, at the directory itself. A
// command that breaks .git (a corrupt .git/HEAD; .git/hooks and
// .git/config stay read-only) and writes HEAD, objects/, refs/ and a
// config at the workspace's root would make the root the repository the
// user's next git status reads, config and core.fsmonitor included. HEAD
// at the root is guarded under namespaces (sandbox.DefaultToolConfigs):
// creating it fails with EROFS and git finds no repository there. The
// positive control releases HEAD: the same script then makes the root a
// git directory, as git itself reports.
func TestRootCannotBecomeAGitDirectory(t *testing.T) {
	s, pol := guardWorld(t)
	git(t, s.ws, "commit", "-q", "--allow-empty", "-m", "first")
	script := `echo garbage > .git/HEAD || exit 3
mkdir objects refs || exit 4
printf '[core]\n\tbare = false\n\tworktree = %s\n' "$PWD" > config || exit 5
echo 'ref: refs/heads/master' > HEAD`
	gitDir := func() string {
		out, _ := exec.Command("git", "-C", s.ws, "rev-parse", "--absolute-git-dir").CombinedOutput()
		return strings.TrimSpace(string(out))
	}

	r := s.run(pol, "/bin/sh", "-c", script)
	if r.code == 0 || !strings.Contains(r.stderr, "cannot create HEAD: Read-only file system") {
		t.Fatalf("plant HEAD at the root: exit %d stderr %q, want a failure, Read-only file system", r.code, r.stderr)
	}
	wantAbsent(t, filepath.Join(s.ws, "HEAD"))
	if got := gitDir(); got == s.ws {
		t.Fatalf("git takes the workspace root for the repository: %s", got)
	}

	released := pol
	released.WritableConfigs = []string{"HEAD"}
	if r := s.run(released, "/bin/sh", "-c", "rm -rf objects refs config && "+script); r.code != 0 {
		t.Fatalf("positive control, HEAD released: exit %d stderr %q", r.code, r.stderr)
	}
	if got := gitDir(); got != s.ws {
		t.Fatalf("positive control: git's directory is %q, want the root %s (the attack's premise)", got, s.ws)
	}
}
