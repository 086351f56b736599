//go:build linux

package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

func gitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", dir}, {"-C", dir, "config", "user.name", "t"}, {"-C", dir, "config", "user.email", "t@example.com"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func TestGitSurface(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		pol := s.policy()
		w := s.wrap(pol, "true")
		protected := []string{filepath.Join(s.ws, ".git/hooks"), filepath.Join(s.ws, ".git/config")}

		if !s.traits().enforcesReadOnly {
			if w.Enforcement != sandbox.Partial {
				t.Fatalf("enforcement %q, want partial", w.Enforcement)
			}
			for _, p := range protected {
				found := false
				for _, g := range w.Gaps {
					found = found || g.Area == "fs" && strings.Contains(g.Reason, p)
				}
				if !found {
					t.Errorf("no gap names %s: %v", p, w.Gaps)
				}
			}
			full := pol
			full.RequireFull = true
			_, err := s.p.Wrap(t.Context(), sandbox.Request{Argv: []string{"true"}, Policy: full})
			if !errors.Is(err, sandbox.ErrUnavailable) {
				t.Fatalf("RequireFull with read-only subpaths on %s: %v, want SANDBOX_UNAVAILABLE", s.runner, err)
			}
			if !strings.Contains(err.Error(), ".git/hooks") {
				t.Errorf("the refusal does not say why: %v", err)
			}
		} else {
			hook := filepath.Join(s.ws, ".git/hooks/pre-commit")
			wantDenied(t, "plant a hook", s.tool(pol, "write", hook))
			wantAbsent(t, hook)
			wantDenied(t, "rewrite .git/config", s.tool(pol, "append", filepath.Join(s.ws, ".git/config")))
		}

		// git add and git commit work inside the workspace either way.
		r := s.run(pol, "/bin/sh", "-c", "echo hello > f && git add f && git commit -qm 'from the sandbox' && git log --oneline | wc -l")
		if r.code != 0 || strings.TrimSpace(r.stdout) != "1" {
			t.Fatalf("git add/commit in the sandbox: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
		out, err := exec.Command("git", "-C", s.ws, "log", "--format=%s").Output()
		if err != nil || strings.TrimSpace(string(out)) != "from the sandbox" {
			t.Fatalf("commit not visible on the host: %q %v", out, err)
		}
		if _, err := os.Stat(filepath.Join(s.ws, ".git/hooks/pre-commit")); err == nil {
			t.Fatal("a hook appeared")
		}
	})
}

func TestReadOnlySubpathsOfTheCaller(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		write(t, filepath.Join(s.ws, ".env"), "TOKEN=1\n")
		pol := s.policy()
		pol.ReadOnlySubpaths = []string{".env"}
		w := s.wrap(pol, "true")
		if !s.traits().enforcesReadOnly {
			found := false
			for _, g := range w.Gaps {
				found = found || strings.Contains(g.Reason, filepath.Join(s.ws, ".env"))
			}
			if !found || w.Enforcement != sandbox.Partial {
				t.Fatalf("caller's read-only subpath not reported: %s %v", w.Enforcement, w.Gaps)
			}
			return
		}
		wantDenied(t, "write a caller-protected file", s.tool(pol, "append", filepath.Join(s.ws, ".env")))
		wantContent(t, filepath.Join(s.ws, ".env"), "TOKEN=1\n")
	})
}

// TestGitDirCannotBeSwapped: moving .git away (taking its read-only hooks
// and config with it) and building a look-alike with a planted config must
// fail; and .git/commondir, which would point git at another config and
// hooks, is reported where it cannot be covered (landlock) and guarded
// where it is (namespaces: TestGuardRefusesAbsentNames).
func TestGitDirCannotBeSwapped(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		write(t, filepath.Join(s.ws, ".agent/settings.json"), "{}\n")
		pol := s.policy()
		pol.ReadOnlySubpaths = []string{".agent/settings.json"}
		w := s.wrap(pol, "true")
		commondir := filepath.Join(s.ws, ".git/commondir")
		found := false
		for _, g := range w.Gaps {
			found = found || strings.Contains(g.Reason, commondir)
		}
		if !s.traits().enforcesReadOnly {
			if !found || w.Enforcement != sandbox.Partial {
				t.Errorf("no gap names the absent %s: %s %v", commondir, w.Enforcement, w.Gaps)
			}
			return
		}
		if found || w.Enforcement != sandbox.Full {
			t.Errorf("the guarded %s is reported: %s %v", commondir, w.Enforcement, w.Gaps)
		}
		deny := []string{"EBUSY", "EACCES", "EROFS", "EPERM", "EXDEV"}
		wantDenied(t, "move .git away", s.tool(pol, "rename", filepath.Join(s.ws, ".git"), filepath.Join(s.ws, ".git-old")), deny...)
		wantDenied(t, "move .agent away", s.tool(pol, "rename", filepath.Join(s.ws, ".agent"), filepath.Join(s.ws, ".agent-old")), deny...)
		wantAbsent(t, filepath.Join(s.ws, ".git-old"))
		wantAbsent(t, filepath.Join(s.ws, ".agent-old"))
		r := s.run(pol, "/bin/sh", "-c", "echo hi > f && git add f && git commit -qm c && git log --oneline | wc -l")
		if r.code != 0 || strings.TrimSpace(r.stdout) != "1" {
			t.Errorf("git add/commit with the git dir pinned: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}

// TestHooksPathInsideTheWorktree: with core.hooksPath pointing into the
// worktree (husky's .husky/_), those hooks are as protected as .git/hooks,
// and so is husky's directory of hook scripts (TestHuskyHooks).
func TestHooksPathInsideTheWorktree(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		if out, err := exec.Command("git", "-C", s.ws, "config", "core.hooksPath", ".husky/_").CombinedOutput(); err != nil {
			t.Fatalf("git config: %v %s", err, out)
		}
		hooks := filepath.Join(s.ws, ".husky/_")
		os.MkdirAll(hooks, 0o755)
		w := s.wrap(s.policy(), "true")
		found := false
		for _, g := range w.Gaps {
			found = found || strings.Contains(g.Reason, hooks)
		}
		if !s.traits().enforcesReadOnly {
			if !found {
				t.Errorf("no gap names the hooks path %s: %v", hooks, w.Gaps)
			}
			return
		}
		wantDenied(t, "plant a hook in core.hooksPath", s.tool(s.policy(), "write", filepath.Join(hooks, "pre-commit")))
		wantAbsent(t, filepath.Join(hooks, "pre-commit"))
		wantOK(t, "control: the rest of the worktree is writable", s.tool(s.policy(), "write", filepath.Join(s.ws, "notes")))
	})
}

// TestDeeplyNestedSubmoduleGitDir: a protected path far below its root
// (many directories to pin) is enforced like any other.
func TestDeeplyNestedSubmoduleGitDir(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		deep := filepath.Join(s.ws, ".git", "modules")
		for i := range 20 {
			deep = filepath.Join(deep, "m"+strconv.Itoa(i))
		}
		write(t, filepath.Join(deep, "HEAD"), "ref: refs/heads/main\n")
		write(t, filepath.Join(deep, "config"), "[core]\n")
		os.MkdirAll(filepath.Join(deep, "hooks"), 0o755)
		r := s.run(s.policy(), "/bin/sh", "-c", "echo ok")
		if r.code != 0 || r.stdout != "ok\n" {
			t.Fatalf("command under a deep protected path: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
		if s.traits().enforcesReadOnly {
			wantDenied(t, "plant a hook in a deep submodule", s.tool(s.policy(), "write", filepath.Join(deep, "hooks", "pre-commit")))
			wantAbsent(t, filepath.Join(deep, "hooks", "pre-commit"))
		}
	})
}

// TestHooksPathFromTheUsersGitConfig: a team convention puts
// core.hooksPath = .githooks in the user's own ~/.gitconfig (or the
// system's), not in the repository's: git runs that worktree's .githooks
// on the user's next commit, so they are as protected as .git/hooks (a
// wrap that read only the repository's config let such a hook be
// rewritten). Controls: with no such setting .githooks is
// writable (it is the user's config that protects it), and the rest of
// the worktree stays writable.
func TestHooksPathFromTheUsersGitConfig(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		hooks := filepath.Join(s.ws, ".githooks")
		write(t, filepath.Join(hooks, "pre-commit"), "#!/bin/sh\nexit 0\n")
		home := filepath.Join(s.base, "home")
		os.MkdirAll(home, 0o755)
		t.Setenv("HOME", home)
		t.Setenv("XDG_CONFIG_HOME", "")
		t.Setenv("GIT_CONFIG_GLOBAL", "")
		if s.traits().enforcesReadOnly {
			wantOK(t, "control: without the setting, .githooks is writable", s.tool(s.policy(), "append", filepath.Join(hooks, "pre-commit")))
		}
		for where, text := range map[string]string{
			".gitconfig":         "[core]\n\thooksPath = .githooks\n",
			".config/git/config": "[core]\n\thooksPath = .githooks\n",
			// As git reads it: a comment after the value, a
			// byte-order mark, a line continued.
			".gitconfig, a comment": "[core]\n\thooksPath = .githooks  ; the team hooks\n",
			".gitconfig, a BOM":     "\ufeff[core]\n\thooksPath = .githooks\n",
			".gitconfig, continued": "[core]\n\thooksPath = .git\\\nhooks\n",
		} {
			t.Run(where, func(t *testing.T) {
				cfg := filepath.Join(home, strings.SplitN(where, ",", 2)[0])
				write(t, cfg, text)
				defer os.Remove(cfg)
				w := s.wrap(s.policy(), "true")
				if !s.traits().enforcesReadOnly {
					if gapNaming(w, hooks) == "" {
						t.Errorf("no gap names the hooks path %s from ~/%s: %v", hooks, where, w.Gaps)
					}
					return
				}
				wantDenied(t, "rewrite a hook of the user's hooks path", s.tool(s.policy(), "write", filepath.Join(hooks, "pre-commit")))
				wantDenied(t, "plant a hook in the user's hooks path", s.tool(s.policy(), "write", filepath.Join(hooks, "post-checkout")))
				wantAbsent(t, filepath.Join(hooks, "post-checkout"))
				wantOK(t, "control: the rest of the worktree is writable", s.tool(s.policy(), "write", filepath.Join(s.ws, "notes")))
			})
		}
	})
}

// TestConfigProgramsGitReads: a worktree's config.worktree (read when the
// repository enables extensions.worktreeConfig, as git sparse-checkout
// does) and a pager.<command> naming a worktree script are what git runs
// on the user's next command; both are protected like core.hooksPath (red
// team). Control: the rest of the worktree stays writable.
func TestConfigProgramsGitReads(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		git(t, s.ws, "config", "extensions.worktreeConfig", "true")
		git(t, s.ws, "config", "pager.log", "./tools/pager.sh")
		write(t, filepath.Join(s.ws, ".git", "config.worktree"), "[core]\n\thooksPath = .wthooks\n")
		write(t, filepath.Join(s.ws, ".wthooks", "pre-commit"), "#!/bin/sh\nexit 0\n")
		write(t, filepath.Join(s.ws, "tools", "pager.sh"), "#!/bin/sh\ncat\n")
		w := s.wrap(s.policy(), "true")
		for _, p := range []string{".wthooks", "tools/pager.sh"} {
			full := filepath.Join(s.ws, p)
			if !s.traits().enforcesReadOnly {
				if gapNaming(w, full) == "" {
					t.Errorf("no gap names %s: %v", full, w.Gaps)
				}
				continue
			}
			target := full
			if p == ".wthooks" {
				target = filepath.Join(full, "pre-commit")
			}
			wantDenied(t, "rewrite "+p, s.tool(s.policy(), "append", target))
		}
		wantOK(t, "control: the rest of the worktree is writable", s.tool(s.policy(), "write", filepath.Join(s.ws, "notes")))
	})
}

// TestGitSubmodulePointer: a checked-out submodule's .git is a file
// naming its git dir (.git/modules/sub), whose config is protected. A
// command that copies that git dir, sets core.fsmonitor in the copy and
// re-points sub/.git at it would have the user's next git status at the
// top (which looks into every checked-out submodule) run that program.
// Under namespaces sub/.git is read-only (EROFS) and git status runs
// nothing, while fetching and checking out in the submodule and
// committing the bump still work inside the sandbox (git submodule
// update does not: it rewrites core.worktree in the module's protected
// config); the positive control runs the same plant unconfined and git
// status runs the program. Under landlock sub/.git is a reported gap.
func TestGitSubmodulePointer(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		src := filepath.Join(s.base, "subsrc")
		gitRepo(t, src)
		git(t, src, "commit", "-q", "--allow-empty", "-m", "one")
		gitRepo(t, s.ws)
		git(t, s.ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub")
		git(t, s.ws, "commit", "-q", "-m", "add sub")
		git(t, src, "commit", "-q", "--allow-empty", "-m", "two")
		pointer := filepath.Join(s.ws, "sub", ".git")
		marker := filepath.Join(s.base, "fsmonitor-ran")
		plant := fmt.Sprintf("rm -rf sub/evil && mkdir sub/evil && cp -r .git/modules/sub/. sub/evil/ && "+
			"git config -f sub/evil/config core.fsmonitor 'touch %s; false' && "+
			"git config -f sub/evil/config core.worktree .. && echo 'gitdir: evil' > sub/.git", marker)
		pol := s.policy()
		if !s.traits().enforcesReadOnly {
			wantGaps(t, s, pol, pointer)
			return
		}
		before, _ := os.ReadFile(pointer)
		wantPlantRefused(t, s, pol, "re-point sub/.git", plant)
		wantContent(t, pointer, string(before))
		r := s.run(pol, "/bin/sh", "-c", "git -C sub fetch -q origin && git -C sub checkout -q FETCH_HEAD && "+
			"git -C sub log --oneline | wc -l && git add sub && git commit -qm bump && git log --oneline | wc -l")
		if r.code != 0 || r.stdout != "2\n2\n" {
			t.Fatalf("update the submodule and commit the bump in the sandbox: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
		wantNextCommandClean(t, s.ws, plant, "git status", marker)
	})
}
