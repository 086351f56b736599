//go:build linux

package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// needTool fails a case whose version-control system is not installed
// (.ci/run installs each): an attack that cannot start proves nothing, and
// a skip would hide that.
func needTool(t *testing.T, name, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is not installed (apt-get install %s): the attack cannot be run end to end", name, pkg)
	}
}

// onHost runs a shell script unconfined in dir: the user's next command,
// or an unconfined positive control.
func onHost(t *testing.T, dir, script string, env ...string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// wantNextCommandClean runs the user's next command (next) unconfined and
// asserts it ran nothing the sandboxed command planted (no marker); then
// the positive control: the same plant, unconfined, and next does run it.
func wantNextCommandClean(t *testing.T, dir, plant, next, marker string, env ...string) {
	t.Helper()
	onHost(t, dir, next, env...)
	if exists(marker) {
		t.Fatalf("the user's next %q ran what the command planted", next)
	}
	onHost(t, dir, plant)
	onHost(t, dir, next, env...)
	if !exists(marker) {
		t.Fatalf("control: planted unconfined, it did not run on %q (the attack's premise)", next)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// wantGaps asserts that a runner which cannot keep subpaths read-only
// names each of paths in a gap, reports partial enforcement, and that
// RequireFull refuses the wrap.
func wantGaps(t *testing.T, s *sbx, pol sandbox.Policy, paths ...string) {
	t.Helper()
	w := s.wrap(pol, "true")
	for _, p := range paths {
		if gapNaming(w, p) == "" {
			t.Errorf("no gap names %s: %v", p, w.Gaps)
		}
	}
	if w.Enforcement != sandbox.Partial {
		t.Errorf("enforcement %s, want partial", w.Enforcement)
	}
	full := pol
	full.RequireFull = true
	if _, err := s.p.Wrap(t.Context(), sandbox.Request{Argv: []string{"true"}, Policy: full}); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("RequireFull: %v, want SANDBOX_UNAVAILABLE", err)
	}
}

// TestMercurialHgrc: a Mercurial repository's .hg/hgrc holds [hooks] and
// [extensions]; written by the command, with no hgrc there before, the
// user's next hg status runs what it names. Under namespaces creating it
// fails (EROFS, nothing on the host), a plain hg repository stays full,
// hg add and commit work inside the sandbox, and the user's next hg status
// runs nothing; the positive control plants the same hgrc unconfined and
// hg status then runs the hook. Once present, the hgrc is read-only too.
// Under landlock each name is a reported gap.
func TestMercurialHgrc(t *testing.T) {
	needTool(t, "hg", "mercurial")
	forEachRunner(t, func(t *testing.T, s *sbx) {
		onHost(t, s.ws, "hg init && echo f > f")
		if !exists(filepath.Join(s.ws, ".hg")) {
			t.Fatal("hg init made no .hg")
		}
		hgrc := filepath.Join(s.ws, ".hg", "hgrc")
		marker := filepath.Join(s.base, "hook-ran")
		plant := fmt.Sprintf("printf '[hooks]\\npre-status = touch %s\\n' > .hg/hgrc", marker)
		pol := s.policy()
		if !s.traits().enforcesReadOnly {
			wantGaps(t, s, pol, hgrc, filepath.Join(s.ws, ".hg", "hgrc-not-shared"), filepath.Join(s.ws, ".hg", "sharedpath"))
			return
		}
		if w := s.wrap(pol, "true"); w.Enforcement != sandbox.Full {
			t.Errorf("a plain hg repository: enforcement %s, gaps %v; want full", w.Enforcement, w.Gaps)
		}
		r := s.run(pol, "/bin/sh", "-c", plant)
		if r.code == 0 || !strings.Contains(r.stderr, "Read-only file system") {
			t.Fatalf("plant .hg/hgrc: exit %d stderr %q, want Read-only file system", r.code, r.stderr)
		}
		wantAbsent(t, hgrc)
		wantDenied(t, "create .hg/hgrc-not-shared", s.tool(pol, "write", filepath.Join(s.ws, ".hg", "hgrc-not-shared")), "EROFS")
		wantDenied(t, "create .hg/sharedpath", s.tool(pol, "write", filepath.Join(s.ws, ".hg", "sharedpath")), "EROFS")

		r = s.run(pol, "/bin/sh", "-c", "hg add -q f && hg commit -q -u t -m from-the-sandbox && hg log -T '{desc}'")
		if r.code != 0 || r.stdout != "from-the-sandbox" {
			t.Fatalf("hg add/commit in the sandbox: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
		wantNextCommandClean(t, s.ws, plant, "hg status", marker)
		before, _ := os.ReadFile(hgrc)
		wantDenied(t, "rewrite a present .hg/hgrc", s.tool(pol, "append", hgrc), "EROFS", "EACCES")
		wantContent(t, hgrc, string(before))
	})
}

// hgScript is a script (tools/NAME.sh) an hgrc names, and the user's
// next command, which runs it.
type hgScript struct{ name, content, next string }

// wantHgScriptsProtected makes an hg repository in the workspace whose
// .hg/hgrc is hgrc, with each script executable, and asserts that each is
// read-only under namespaces: appending to it fails with EROFS and leaves
// it as it was, the rest of tools/ stays writable, and the user's next
// command runs nothing it wrote, while the same append unconfined does
// run (wantNextCommandClean). Under landlock each script, and each of
// also, is a reported gap. It returns whether the runner enforces.
func wantHgScriptsProtected(t *testing.T, s *sbx, hgrc string, scripts []hgScript, also ...string) bool {
	t.Helper()
	onHost(t, s.ws, "hg init && echo f > f && hg add -q f")
	write(t, filepath.Join(s.ws, ".hg", "hgrc"), hgrc)
	gaps := also
	for _, c := range scripts {
		p := filepath.Join(s.ws, "tools", c.name+".sh")
		write(t, p, c.content)
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
		gaps = append(gaps, p)
	}
	pol := s.policy()
	if !s.traits().enforcesReadOnly {
		wantGaps(t, s, pol, gaps...)
		return false
	}
	for _, c := range scripts {
		p := filepath.Join(s.ws, "tools", c.name+".sh")
		marker := filepath.Join(s.base, c.name+"-ran")
		plant := fmt.Sprintf("echo 'touch %s' >> %s", marker, p)
		before, _ := os.ReadFile(p)
		wantPlantRefused(t, s, pol, "append to tools/"+c.name+".sh", plant)
		wantContent(t, p, string(before))
		wantNextCommandClean(t, s.ws, plant, c.next, marker, "HGEDITOR=")
	}
	wantOK(t, "control: the rest of tools/ is writable", s.tool(pol, "write", filepath.Join(s.ws, "tools", "other.sh")))
	return true
}

// wantPlantRefused runs plant, a shell script, in the sandbox and asserts
// that it failed on a read-only file.
func wantPlantRefused(t *testing.T, s *sbx, pol sandbox.Policy, what, plant string) {
	t.Helper()
	r := s.run(pol, "/bin/sh", "-c", plant)
	if r.code == 0 || !strings.Contains(r.stderr, "Read-only file system") {
		t.Fatalf("%s: exit %d stderr %q, want Read-only file system", what, r.code, r.stderr)
	}
}

// TestMercurialHookScript: a present hgrc whose hook runs a script kept
// in the worktree (and an %include'd config there) has that script and
// config protected too, like git's config programs: under namespaces the
// command cannot add to the script and the user's next hg status runs
// nothing it wrote; the positive control appends unconfined and hg status
// runs it. Under landlock both are reported gaps.
func TestMercurialHookScript(t *testing.T) {
	needTool(t, "hg", "mercurial")
	forEachRunner(t, func(t *testing.T, s *sbx) {
		rc := filepath.Join(s.ws, "team.rc")
		write(t, rc, "[ui]\nusername = t\n")
		if wantHgScriptsProtected(t, s, "[hooks]\npre-status = ./tools/status-hook.sh\n%include ../team.rc\n",
			[]hgScript{{"status-hook", "#!/bin/sh\ntrue\n", "hg status"}}, rc) {
			wantDenied(t, "rewrite the included config", s.tool(s.policy(), "append", rc), "EROFS")
		}
	})
}

// TestMercurialHookContinuation: Mercurial reads a key with an empty
// value followed by an indented line as set to that line, so
// "pre-status =" then "  ./tools/cont.sh" makes tools/cont.sh the hook.
// Under namespaces that script is read-only (EROFS) and the user's next
// hg status runs nothing the command wrote; the positive control appends
// unconfined and hg status runs it. Under landlock it is a reported gap.
func TestMercurialHookContinuation(t *testing.T) {
	needTool(t, "hg", "mercurial")
	forEachRunner(t, func(t *testing.T, s *sbx) {
		wantHgScriptsProtected(t, s, "[hooks]\npre-status =\n  ./tools/cont.sh\n",
			[]hgScript{{"cont", "#!/bin/sh\ntrue\n", "hg status"}})
	})
}

// TestMercurialProgramKeys: besides [hooks], an hgrc runs a program named
// by a shell alias ([alias] st2 = !./tools/alias.sh, on hg st2) and by
// ui.editor (on hg commit without -m). Under namespaces both scripts are
// read-only and the user's next hg st2 and hg commit run nothing the
// command wrote; the positive controls append unconfined and those
// commands run it. Under landlock both are reported gaps.
func TestMercurialProgramKeys(t *testing.T) {
	needTool(t, "hg", "mercurial")
	forEachRunner(t, func(t *testing.T, s *sbx) {
		wantHgScriptsProtected(t, s, "[alias]\nst2 = !./tools/alias.sh\n[ui]\neditor = ./tools/editor.sh\n", []hgScript{
			{"alias", "#!/bin/sh\ntrue\n", "hg st2"},
			{"editor", "#!/bin/sh\necho from-the-editor > \"$1\"\n", "echo g >> f && hg commit -q -u t"},
		})
	})
}

// TestBreezyBranchConf: Breezy evaluates branch.conf's post_commit as
// Python on brz commit. Under namespaces the command cannot rewrite it
// and the user's next brz commit runs nothing; the positive control
// appends the same line unconfined, and brz commit then runs it. Under
// landlock it is a reported gap.
func TestBreezyBranchConf(t *testing.T) {
	needTool(t, "brz", "brz")
	forEachRunner(t, func(t *testing.T, s *sbx) {
		env := []string{"BRZ_EMAIL=t <t@example.com>", "HOME=" + s.base}
		onHost(t, s.ws, "brz init -q . && echo f > f && brz add -q f", env...)
		conf := filepath.Join(s.ws, ".bzr", "branch", "branch.conf")
		if !exists(conf) {
			t.Fatal("brz init made no branch.conf")
		}
		marker := filepath.Join(s.base, "post-commit-ran")
		plant := fmt.Sprintf(`echo 'post_commit = (lambda*a:__import__("os").system("touch\x20%s"))' >> .bzr/branch/branch.conf`, marker)
		pol := s.policy()
		if !s.traits().enforcesReadOnly {
			wantGaps(t, s, pol, conf)
			return
		}
		before, _ := os.ReadFile(conf)
		r := s.run(pol, "/bin/sh", "-c", plant)
		if r.code == 0 || !strings.Contains(r.stderr, "Read-only file system") {
			t.Fatalf("append to branch.conf: exit %d stderr %q, want Read-only file system", r.code, r.stderr)
		}
		wantContent(t, conf, string(before))
		wantNextCommandClean(t, s.ws, plant, "echo g >> f && brz commit -q -m next", marker, env...)
	})
}

// TestDarcsDefaults: a Darcs repository has no _darcs/prefs/defaults
// until someone writes one; a command that creates it with a posthook
// makes the user's next darcs record run it. Under namespaces creating it
// fails (EROFS) and darcs record runs nothing; the positive control
// creates it unconfined and darcs record runs the hook. Under landlock it
// is a reported gap.
func TestDarcsDefaults(t *testing.T) {
	needTool(t, "darcs", "darcs")
	forEachRunner(t, func(t *testing.T, s *sbx) {
		env := []string{"HOME=" + s.base, "DARCS_EMAIL=t <t@example.com>"}
		onHost(t, s.ws, "darcs init -q && echo f > f && darcs add -q f", env...)
		defaults := filepath.Join(s.ws, "_darcs", "prefs", "defaults")
		marker := filepath.Join(s.base, "posthook-ran")
		plant := fmt.Sprintf("printf 'ALL posthook touch %s\nALL run-posthook\n' > _darcs/prefs/defaults", marker)
		pol := s.policy()
		if !s.traits().enforcesReadOnly {
			wantGaps(t, s, pol, defaults)
			return
		}
		r := s.run(pol, "/bin/sh", "-c", plant)
		if r.code == 0 || !strings.Contains(r.stderr, "Read-only file system") {
			t.Fatalf("plant _darcs/prefs/defaults: exit %d stderr %q, want Read-only file system", r.code, r.stderr)
		}
		wantAbsent(t, defaults)
		wantNextCommandClean(t, s.ws, plant, "echo g >> f && darcs record -q -a -m next", marker, env...)
	})
}

// TestOtherVCSConfigsProtected: the repository-local files of Jujutsu,
// Sapling, Darcs, Pijul and Mercurial that run programs (docs/policy.md,
// "Other version-control systems"), absent here, cannot be created under
// namespaces (EROFS, nothing on the host) while the files beside them
// can (the positive control: the repository's own state stays writable);
// under landlock each is a reported gap. jj, Sapling and Pijul are not
// packaged for this machine, so the protection is asserted on the files.
func TestOtherVCSConfigsProtected(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		for _, d := range []string{".jj/repo/store/git", ".sl", ".git/sl", "_darcs/prefs", ".pijul", ".hg"} {
			if err := os.MkdirAll(filepath.Join(s.ws, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		names := []string{
			".jj/repo/config.toml", ".jj/repo/config-id", ".jj/workspace-config.toml", ".jj/workspace-config-id",
			".jj/repo/store/git/config", ".jj/repo/store/git/hooks",
			".sl/config", ".sl/sharedpath", ".git/sl/config",
			"_darcs/prefs/defaults", "_darcs/prefs/prefs",
			".pijul/config", ".pijul/hooks",
			".hg/hgrc", ".hg/sharedpath",
		}
		pol := s.policy()
		if !s.traits().enforcesReadOnly {
			var paths []string
			for _, n := range names {
				paths = append(paths, filepath.Join(s.ws, n))
			}
			wantGaps(t, s, pol, paths...)
			return
		}
		if w := s.wrap(pol, "true"); w.Enforcement != sandbox.Full {
			t.Errorf("enforcement %s, gaps %v; want full (every absent name guarded)", w.Enforcement, w.Gaps)
		}
		for _, n := range names {
			p := filepath.Join(s.ws, n)
			wantDenied(t, "create "+n, s.tool(pol, "write", p), "EROFS")
			wantAbsent(t, p)
			sibling := filepath.Join(filepath.Dir(p), "state")
			wantOK(t, "control: write beside "+n, s.tool(pol, "write", sibling))
			os.Remove(sibling)
		}
	})
}

// TestGitWorktreeConfigAbsent: with extensions.worktreeConfig set and no
// .git/config.worktree yet, a command that creates one with core.fsmonitor
// makes the user's next git status run its program. Under namespaces
// creating it fails (EROFS, nothing on the host; also a linked worktree's
// config.worktree) and git status runs nothing; the positive control
// plants it unconfined and git status runs the program. Under landlock
// both are reported gaps.
func TestGitWorktreeConfigAbsent(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		git(t, s.ws, "config", "extensions.worktreeConfig", "true")
		git(t, s.ws, "commit", "-q", "--allow-empty", "-m", "first")
		git(t, s.ws, "worktree", "add", "-q", filepath.Join(s.base, "wt"))
		marker := filepath.Join(s.base, "fsmonitor-ran")
		write(t, filepath.Join(s.base, "fsmon.sh"), "#!/bin/sh\ntouch "+marker+"\n")
		if err := os.Chmod(filepath.Join(s.base, "fsmon.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		wtc := filepath.Join(s.ws, ".git", "config.worktree")
		linked := filepath.Join(s.ws, ".git", "worktrees", "wt", "config.worktree")
		plant := fmt.Sprintf("printf '[core]\\n\\tfsmonitor = %s\\n' > .git/config.worktree", filepath.Join(s.base, "fsmon.sh"))
		pol := s.policy()
		if !s.traits().enforcesReadOnly {
			wantGaps(t, s, pol, wtc, linked)
			return
		}
		r := s.run(pol, "/bin/sh", "-c", plant)
		if r.code == 0 || !strings.Contains(r.stderr, "Read-only file system") {
			t.Fatalf("plant .git/config.worktree: exit %d stderr %q, want Read-only file system", r.code, r.stderr)
		}
		wantAbsent(t, wtc)
		wantDenied(t, "create a linked worktree's config.worktree", s.tool(pol, "write", linked), "EROFS")
		wantAbsent(t, linked)
		r = s.run(pol, "/bin/sh", "-c", "echo x > f && git add f && git commit -qm c && git log --oneline | wc -l")
		if r.code != 0 || strings.TrimSpace(r.stdout) != "2" {
			t.Fatalf("git add/commit in the sandbox: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
		wantNextCommandClean(t, s.ws, plant, "git status", marker)
	})
}

// TestGitDirAsWorkspace: a repository's .git, or a bare repository, given
// as the workspace has its hooks and config protected as a .git's are
// (hooks/pre-commit cannot be planted, config cannot be rewritten, an
// absent config.worktree cannot be created) while objects can be written
// (the positive control: git can still store there); under landlock they
// are reported gaps. A workspace in a git directory's hooks or worktrees,
// or in a Mercurial repository's directory, is INVALID_POLICY; the
// repository's working tree and a checkout kept inside .git are the
// controls that validate.
func TestGitDirAsWorkspace(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		repo := filepath.Join(s.base, "repo")
		gitRepo(t, repo)
		bare := filepath.Join(s.base, "bare.git")
		if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
			t.Fatalf("git init --bare: %v\n%s", err, out)
		}
		for _, ws := range []string{filepath.Join(repo, ".git"), bare} {
			t.Run(filepath.Base(ws), func(t *testing.T) {
				pol := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws}
				hook := filepath.Join(ws, "hooks", "pre-commit")
				config := filepath.Join(ws, "config")
				wtc := filepath.Join(ws, "config.worktree")
				if !s.traits().enforcesReadOnly {
					wantGaps(t, s, pol, filepath.Join(ws, "hooks"), config, wtc)
					return
				}
				wantDenied(t, "plant hooks/pre-commit", s.tool(pol, "write", hook), "EROFS")
				wantAbsent(t, hook)
				before, _ := os.ReadFile(config)
				wantDenied(t, "rewrite config", s.tool(pol, "append", config), "EROFS")
				wantContent(t, config, string(before))
				wantDenied(t, "create config.worktree", s.tool(pol, "write", wtc), "EROFS")
				wantAbsent(t, wtc)
				wantOK(t, "control: write an object", s.tool(pol, "write", filepath.Join(ws, "objects", "probe")))
			})
		}

		if err := os.MkdirAll(filepath.Join(repo, ".hg"), 0o755); err != nil {
			t.Fatal(err)
		}
		git(t, repo, "commit", "-q", "--allow-empty", "-m", "first")
		git(t, repo, "worktree", "add", "-q", filepath.Join(repo, ".git", "checkouts", "wt"))
		for _, ws := range []string{filepath.Join(repo, ".git", "hooks"), filepath.Join(repo, ".git", "worktrees"), filepath.Join(repo, ".git", "worktrees", "wt"), filepath.Join(bare, "hooks"), filepath.Join(repo, ".hg")} {
			_, err := s.p.Wrap(t.Context(), sandbox.Request{Argv: []string{"true"}, Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws}})
			if !errors.Is(err, sandbox.ErrInvalidPolicy) {
				t.Errorf("workspace %s: %v, want INVALID_POLICY", ws, err)
			}
		}
		// Controls: the working tree, and a checkout kept inside .git,
		// which holds none of the git directory's surface.
		s.wrap(sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: repo}, "true")
		s.wrap(sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: filepath.Join(repo, ".git", "checkouts", "wt")}, "true")
	})
}
