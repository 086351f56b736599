package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestVCSProtectedPaths(t *testing.T) {
	base := t.TempDir()
	mkdir := func(p string) {
		t.Helper()
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	symlink := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	// A Mercurial share whose source lies in another writable root.
	src := filepath.Join(base, "src")
	mkdir(filepath.Join(src, ".hg"))
	share := filepath.Join(base, "share")
	mkfile(t, filepath.Join(share, ".hg", "sharedpath"), filepath.Join(src, ".hg")+"\n")
	// A jj repository whose legacy config is jj's own link beside a
	// config-id, a workspace with only the legacy file, and a git backend.
	jj := filepath.Join(base, "jj")
	mkfile(t, filepath.Join(jj, ".jj", "repo", "config-id"), "0123456789abcdef0123")
	symlink("/home/u/.config/jj/repos/0123456789abcdef0123/config.toml", filepath.Join(jj, ".jj", "repo", "config.toml"))
	mkfile(t, filepath.Join(jj, ".jj", "workspace-config.toml"), "")
	mkfile(t, filepath.Join(jj, ".jj", "repo", "store", "git_target"), "git")
	mkdir(filepath.Join(jj, ".jj", "repo", "store", "git"))
	// A secondary jj workspace: .jj/repo is a file naming the repository.
	jjws := filepath.Join(base, "jjws")
	mkfile(t, filepath.Join(jjws, ".jj", "repo"), "../../jj/.jj/repo")
	// A .hg that is a symlink, a Breezy branch, Darcs, Pijul, Sapling.
	linked := filepath.Join(base, "linked")
	mkdir(linked)
	symlink(filepath.Join(src, ".hg"), filepath.Join(linked, ".hg"))
	others := filepath.Join(base, "others")
	for _, d := range []string{".bzr/branch", "_darcs/prefs", ".pijul", ".sl", ".git/sl"} {
		mkdir(filepath.Join(others, d))
	}
	// An hgrc naming scripts in the worktree, directly and by %include.
	hgp := filepath.Join(base, "hgp")
	mkfile(t, filepath.Join(hgp, ".hg", "hgrc"), "[hooks]\npre-commit = ./tools/check.sh --fast\n"+
		"pretxncommit.lint = python:tools/lint.py:hook\npost-status = echo hi\n"+
		"[extensions]\nlocal = tools/ext.py\nrebase =\noff = !tools/off.py\nmod = hgext.foo\n%include ../shared.rc\n")
	mkfile(t, filepath.Join(hgp, "shared.rc"), "[hooks]\nx = ./tools/from-include.sh\n")
	// Programs on continuation lines, and the other keys that run one.
	hgc := filepath.Join(base, "hgc")
	mkfile(t, filepath.Join(hgc, ".hg", "hgrc"), "[hooks]\npre-status =\n  ./tools/cont.sh\n# a comment keeps it open\n"+
		"\t./tools/second.sh --x\n\npost-log = true\n ./tools/after-true.sh\n"+
		"[alias]\nst2 = !./tools/alias.sh\nlg = log -r ./tools/not-a-program\n"+
		"[ui]\neditor = ./tools/editor.sh\nmerge = ./tools/merge.sh\nssh = ./tools/ssh.sh\nusername = ./tools/not-a-program\n"+
		"[pager]\npager = ./tools/pager.sh\n[merge-tools]\nkd.executable = ./tools/kd.sh\nkd.args = ./tools/not-a-program\n"+
		"[extdiff]\ncmd.vd = ./tools/vd.sh\nopts.vd = ./tools/not-a-program\n[fix]\nfmt:command = ./tools/fmt.sh\n"+
		"[email]\nmethod = ./tools/sendmail.sh\n[gpg]\ncmd = ./tools/gpg.sh\n"+
		"[merge-patterns]\n**.c = ./tools/mp.sh\n[partial-merge-tools]\npm.executable = ./tools/pm.sh\n"+
		"[rhg]\nfallback-executable = ./tools/rhg.sh\n[web]\nstyle = ./tools/not-a-program\n")
	// A bare repository and a repository's .git given as roots.
	bare := filepath.Join(base, "bare.git")
	mkfile(t, filepath.Join(bare, "HEAD"), "ref: refs/heads/main\n")
	mkdir(filepath.Join(bare, "worktrees", "w"))
	dotgit := filepath.Join(base, "repo", ".git")
	mkfile(t, filepath.Join(dotgit, "HEAD"), "ref: refs/heads/main\n")

	cases := []struct {
		name      string
		roots     []string
		want, not []string
	}{
		{"hg share", []string{share, src}, []string{
			"share/.hg/hgrc", "share/.hg/hgrc-not-shared", "share/.hg/sharedpath", "src/.hg/hgrc", "src/.hg/hgrc-not-shared",
		}, nil},
		{"hg share, source outside", []string{share}, []string{"share/.hg/hgrc"}, []string{"src/.hg/hgrc"}},
		{"jj", []string{jj}, []string{
			"jj/.jj/repo/config-id", "jj/.jj/workspace-config-id", "jj/.jj/workspace-config.toml",
			"jj/.jj/repo/store/git_target", "jj/.jj/repo/store/git/hooks", "jj/.jj/repo/store/git/config",
		}, []string{"jj/.jj/repo/config.toml"}},
		{"jj secondary workspace", []string{jjws, jj}, []string{"jjws/.jj/repo", "jjws/.jj/workspace-config.toml", "jj/.jj/repo/config-id"}, nil},
		{"hgrc programs", []string{hgp}, []string{
			"hgp/tools/check.sh", "hgp/tools/lint.py", "hgp/tools/ext.py", "hgp/shared.rc", "hgp/tools/from-include.sh",
		}, []string{"hgp/tools/off.py", "hgp/hgext.foo", "hgp/echo"}},
		{"hgrc continuation lines and program keys", []string{hgc}, []string{
			"hgc/tools/cont.sh", "hgc/tools/second.sh", "hgc/tools/after-true.sh", "hgc/tools/alias.sh", "hgc/tools/editor.sh",
			"hgc/tools/merge.sh", "hgc/tools/ssh.sh", "hgc/tools/pager.sh", "hgc/tools/kd.sh", "hgc/tools/vd.sh", "hgc/tools/fmt.sh",
			"hgc/tools/sendmail.sh", "hgc/tools/gpg.sh", "hgc/tools/mp.sh", "hgc/tools/pm.sh", "hgc/tools/rhg.sh",
		}, []string{"hgc/tools/not-a-program", "hgc/true"}},
		{".hg a symlink", []string{linked}, []string{"linked/.hg"}, []string{"linked/.hg/hgrc"}},
		{"others", []string{others}, []string{
			"others/.bzr/branch/branch.conf", "others/.bzr/branch/location", "others/.bzr/branch/format",
			"others/_darcs/prefs/defaults", "others/_darcs/prefs/prefs", "others/.pijul/config", "others/.pijul/hooks",
			"others/.sl/config", "others/.sl/hgrc.dynamic", "others/.git/sl/config",
		}, nil},
		{"no repository", []string{filepath.Join(src, ".hg")}, nil, []string{"src/.hg/.hg/hgrc"}},
		{"bare repository", []string{bare}, []string{
			"bare.git/hooks", "bare.git/config", "bare.git/commondir", "bare.git/config.worktree", "bare.git/worktrees/w/config",
		}, nil},
		{"a .git as the root", []string{dotgit}, []string{"repo/.git/hooks", "repo/.git/config", "repo/.git/config.worktree"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, _ := protectedPaths(osFS{}, c.roots, nil, nil)
			for _, w := range c.want {
				if !slices.Contains(got, filepath.Join(base, w)) {
					t.Errorf("%s missing from %q", w, got)
				}
			}
			for _, n := range c.not {
				if slices.Contains(got, filepath.Join(base, n)) {
					t.Errorf("%s in %q", n, got)
				}
			}
		})
	}
}

func TestVCSInterior(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"repo/.git/hooks/sub", "repo/.git/worktrees/w", "repo/.git/checkouts/x", "repo/.hg/store", "repo/.jj/repo", "bare.git/objects", "bare.git/hooks", "plain/.github"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkfile(t, filepath.Join(base, "bare.git", "HEAD"), "ref: refs/heads/main\n")
	cases := []struct {
		root string
		ok   bool
	}{
		{"repo", true},
		{"repo/.git", true},
		{"bare.git", true},
		{"plain/.github", true},
		{"repo/.git/checkouts/x", true},
		{"bare.git/objects", true},
		{"repo/.git/hooks", false},
		{"repo/.git/hooks/sub", false},
		{"repo/.git/worktrees", false},
		{"repo/.git/worktrees/w", false},
		{"bare.git/hooks", false},
		{"repo/.hg", false},
		{"repo/.hg/store", false},
		{"repo/.jj/repo", false},
	}
	for _, c := range cases {
		err := vcsInterior("workspace", filepath.Join(base, c.root))
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInvalidPolicy)) {
			t.Errorf("%s: %v, want ok=%v (INVALID_POLICY otherwise)", c.root, err, c.ok)
		}
	}
}

func TestParseHgrc(t *testing.T) {
	cases := []struct {
		name, text string
		want       []hgrcEntry
	}{
		{"continuation", "[hooks]\nx =\n  ./a.sh\n", []hgrcEntry{{"hooks", "x", "\n./a.sh", false}}},
		{"comment keeps the value open", "[hooks]\nx = a\n#c\n\tb\n", []hgrcEntry{{"hooks", "x", "a\nb", false}}},
		{"empty line ends it", "[hooks]\nx = a\n\n  b\n", []hgrcEntry{{"hooks", "x", "a", false}}},
		{"carriage returns end lines", "[hooks]\r\nx =\r  ./a.sh\r\n", []hgrcEntry{{"hooks", "x", "\n./a.sh", false}}},
		{"include and sections", "\ufeff%include ../r.rc\n[ui]\neditor = vi\n[ hooks ]\ny = z\n", []hgrcEntry{
			{"", "", "../r.rc", true}, {"ui", "editor", "vi", false}, {" hooks ", "y", "z", false},
		}},
		{"indented key is no key", "[hooks]\n  x = a\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := parseHgrc(c.text); !slices.Equal(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
