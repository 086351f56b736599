//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

func TestWorkspaceWriteConfinesWrites(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		pol := s.policy()
		wantOK(t, "write inside the workspace", s.tool(pol, "write", filepath.Join(s.ws, "made")))
		wantContent(t, filepath.Join(s.ws, "made"), "written by the sandbox\n")
		wantOK(t, "mkdir inside the workspace", s.tool(pol, "mkdir", filepath.Join(s.ws, "dir")))

		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		targets := map[string]string{
			"home":              filepath.Join(home, randomName("sbx-escape-")),
			"etc":               filepath.Join("/etc", randomName("sbx-escape-")),
			"workspace sibling": filepath.Join(s.base, "sibling"),
			"workspace parent":  filepath.Join(filepath.Dir(s.base), randomName("sbx-escape-")),
		}
		for what, p := range targets {
			wantDenied(t, "write to "+what, s.tool(pol, "write", p))
			wantAbsent(t, p)
			wantDenied(t, "mkdir in "+what, s.tool(pol, "mkdir", p))
			wantAbsent(t, p)
		}
		// /tmp outside the private temp dir, and the temp dirs' parent.
		for what, p := range map[string]string{
			"tmp":                filepath.Join(os.TempDir(), randomName("sbx-escape-")),
			"private tmp parent": filepath.Join(filepath.Dir(filepath.Dir(s.wrap(pol, "true").TempDir)), randomName("sbx-escape-")),
		} {
			wantDenied(t, "write to "+what, s.tool(pol, "write", p))
			wantAbsent(t, p)
			wantDenied(t, "mkdir in "+what, s.tool(pol, "mkdir", p))
			wantAbsent(t, p)
		}
	})
}

func TestExistingFilesOutsideStayUnchanged(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		victim := filepath.Join(s.base, "victim")
		write(t, victim, "original\n")
		pol := s.policy()
		wantDenied(t, "append outside", s.tool(pol, "append", victim))
		wantDenied(t, "truncate outside", s.tool(pol, "truncate", victim))
		wantDenied(t, "remove outside", s.tool(pol, "remove", victim))
		wantContent(t, victim, "original\n")
	})
}

func TestSymlinkInWorkspaceDoesNotReachOutside(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		outside := filepath.Join(s.base, "outside")
		os.Mkdir(outside, 0o755)
		write(t, filepath.Join(outside, "existing"), "original\n")
		if err := os.Symlink(outside, filepath.Join(s.ws, "link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "existing"), filepath.Join(s.ws, "filelink")); err != nil {
			t.Fatal(err)
		}
		pol := s.policy()
		wantDenied(t, "write through a dir symlink", s.tool(pol, "write", filepath.Join(s.ws, "link", "new")))
		wantAbsent(t, filepath.Join(outside, "new"))
		wantDenied(t, "write through a file symlink", s.tool(pol, "append", filepath.Join(s.ws, "filelink")))
		wantContent(t, filepath.Join(outside, "existing"), "original\n")
		// A symlink the command plants itself is no better.
		wantOK(t, "plant a symlink in the workspace", s.tool(pol, "symlink", outside, filepath.Join(s.ws, "planted")))
		wantDenied(t, "write through a planted symlink", s.tool(pol, "write", filepath.Join(s.ws, "planted", "new2")))
		wantAbsent(t, filepath.Join(outside, "new2"))
	})
}

func TestRenameAndLinkAcrossTheBoundary(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		pol := s.policy()
		inside := filepath.Join(s.ws, "inside")
		write(t, inside, "inside\n")
		outside := filepath.Join(s.base, "outside-file")
		write(t, outside, "outside\n")
		dest := filepath.Join(s.base, "moved")

		// EXDEV is how Landlock refuses a cross-directory rename or link it
		// cannot allow (so that mv falls back to a copy, which then fails).
		deny := []string{"EACCES", "EXDEV", "EROFS"}
		wantDenied(t, "rename out of the workspace", s.tool(pol, "rename", inside, dest), deny...)
		wantAbsent(t, dest)
		wantContent(t, inside, "inside\n")
		wantDenied(t, "link out of the workspace", s.tool(pol, "link", inside, dest), deny...)
		wantAbsent(t, dest)
		wantDenied(t, "rename into the workspace", s.tool(pol, "rename", outside, filepath.Join(s.ws, "stolen")), deny...)
		wantContent(t, outside, "outside\n")
		wantAbsent(t, filepath.Join(s.ws, "stolen"))

		// Control: the same operations inside the workspace work.
		wantOK(t, "rename inside", s.tool(pol, "rename", inside, filepath.Join(s.ws, "renamed")))
		os.Mkdir(filepath.Join(s.ws, "sub"), 0o755)
		wantOK(t, "rename across workspace dirs", s.tool(pol, "rename", filepath.Join(s.ws, "renamed"), filepath.Join(s.ws, "sub", "r")))
		wantOK(t, "link inside", s.tool(pol, "link", filepath.Join(s.ws, "sub", "r"), filepath.Join(s.ws, "hard")))
	})
}

func TestReadOnlyMode(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		write(t, filepath.Join(s.ws, "file"), "content\n")
		pol := sandbox.Policy{Mode: sandbox.ReadOnly, Workspace: s.ws}
		for _, p := range []string{filepath.Join(s.ws, "new"), filepath.Join(s.base, "new")} {
			wantDenied(t, "read-only write "+p, s.tool(pol, "write", p))
			wantAbsent(t, p)
		}
		tmp := filepath.Join(os.TempDir(), randomName("sbx-ro-"))
		wantDenied(t, "read-only write to /tmp", s.tool(pol, "write", tmp))
		wantAbsent(t, tmp)
		wantDenied(t, "read-only append", s.tool(pol, "append", filepath.Join(s.ws, "file")))
		wantContent(t, filepath.Join(s.ws, "file"), "content\n")
		wantOK(t, "read-only read", s.tool(pol, "read", filepath.Join(s.ws, "file")))
		wantOK(t, "read-only readdir", s.tool(pol, "readdir", s.ws))
		r := s.run(pol, "/bin/sh", "-c", "cat file && ls /etc >/dev/null && echo ran")
		if r.code != 0 || r.stdout != "content\nran\n" {
			t.Errorf("read-only command: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
		// Control: the same write works in workspace-write mode.
		wantOK(t, "workspace-write control", s.tool(s.policy(), "write", filepath.Join(s.ws, "new")))
	})
}

func TestPrivateTempDir(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
			pol := s.policy()
			pol.Mode = mode
			w := s.wrap(pol, self(t), toolArg, "env", "TMPDIR")
			r := s.spawn(w, nil)
			if got := r.stdout; got != w.TempDir+"\n" || w.TempDir == "" {
				t.Fatalf("%s: TMPDIR inside = %q, want %q", mode, got, w.TempDir)
			}
			w2 := s.wrap(pol, self(t), toolArg, "write-in-env-dir", "TMPDIR", "x")
			wantOK(t, string(mode)+": write in TMPDIR", toolAnswer(t, s.spawn(w2, nil)))
			wantContent(t, filepath.Join(w2.TempDir, "x"), "x")
			if err := w2.Cleanup(); err != nil {
				t.Fatal(err)
			}
			wantAbsent(t, w2.TempDir)
			if err := w.Cleanup(); err != nil {
				t.Fatal(err)
			}
			wantAbsent(t, w.TempDir)
		}
		// Two wraps cannot write into each other's temp dir.
		other := s.wrap(s.policy(), "true")
		x := filepath.Join(other.TempDir, "x")
		wantDenied(t, "write into another wrap's temp dir", s.tool(s.policy(), "write", x), "EACCES", "EROFS", "ENOENT")
		wantAbsent(t, x)
	})
}

func TestDevicesUsable(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		pol := sandbox.Policy{Mode: sandbox.ReadOnly, Workspace: s.ws}
		wantOK(t, "write /dev/null", s.tool(pol, "append", "/dev/null"))
		wantOK(t, "read /dev/zero", s.tool(pol, "read", "/dev/zero"))
		if s.traits().newPTYs {
			wantOK(t, "open a pty and use it", s.tool(pol, "pty"))
		} else {
			// Landlock cannot tell a new pty from the user's other
			// terminals (TestOtherTerminalsUnreachable): both are refused.
			wantDenied(t, "open a new pty", s.tool(pol, "pty"), "EACCES")
		}
		r := s.run(pol, "/bin/sh", "-c", "echo x > /dev/null && head -c 4 /dev/urandom | wc -c")
		if r.code != 0 || r.stdout != "4\n" {
			t.Errorf("devices from sh: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}

func TestDenyReadDirectory(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		secret := filepath.Join(s.base, "secret")
		write(t, filepath.Join(secret, "key"), "hunter2\n")
		sibling := filepath.Join(s.base, "sibling")
		write(t, filepath.Join(sibling, "data"), "public\n")
		pol := s.policy()
		pol.DenyRead = []string{secret}

		// Control first: without the deny, the secret is readable.
		wantOK(t, "control: read the secret", s.tool(s.policy(), "read", filepath.Join(secret, "key")))
		wantDenied(t, "read a denied file", s.tool(pol, "read", filepath.Join(secret, "key")), "EACCES", "ENOENT")
		r := s.run(pol, "/bin/sh", "-c", "cat "+secret+"/key; echo cat=$?; ls -A "+secret+"; echo ls=$?")
		// Under landlock the names can be listed (the parent must be, for
		// ls ~ with ~/.ssh denied), never read: the report's deny-read gap
		// says so.
		want, listed := "cat=1\nkey\nls=0\n", true
		if s.traits().hidesDenied {
			want, listed = "cat=1\nls=0\n", false // an empty mount: nothing listed
		}
		if r.stdout != want || strings.Contains(r.stdout+r.stderr, "hunter2") || listed != strings.Contains(r.stdout, "key") {
			t.Errorf("cat/ls of a denied dir: stdout %q stderr %q, want stdout %q", r.stdout, r.stderr, want)
		}
		wantOK(t, "list the denied dir's parent", s.tool(pol, "readdir", s.base))
		wantOK(t, "read a sibling", s.tool(pol, "read", filepath.Join(sibling, "data")))
		wantOK(t, "list a sibling", s.tool(pol, "readdir", sibling))
		wantOK(t, "read the workspace", s.tool(pol, "readdir", s.ws))
		r = s.run(pol, "/bin/sh", "-c", "cat "+sibling+"/data")
		if r.code != 0 || r.stdout != "public\n" {
			t.Errorf("cat of a sibling: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}

// TestCredentialsUnreadableByDefault: with the default policy the command
// cannot read the credential stores under the home directory (SSH key,
// cloud credentials, registry and forge tokens), while the home directory
// itself stays listable and its other files readable; AllowRead releases
// one default, or all of them with the home directory.
func TestCredentialsUnreadableByDefault(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		home := filepath.Join(s.base, "home")
		secrets := []string{".ssh/id_ed25519", ".aws/credentials", ".npmrc", ".config/gh/hosts.yml", ".git-credentials",
			".config/git/credentials", ".cache/huggingface/token", ".kaggle/kaggle.json", ".config/rclone/rclone.conf"}
		for _, f := range secrets {
			write(t, filepath.Join(home, f), "secret\n")
		}
		write(t, filepath.Join(home, ".bashrc"), "# rc\n")
		// Beside denied names: a build's cache and git's own config stay readable.
		write(t, filepath.Join(home, ".cache/pip/http/entry"), "cached\n")
		write(t, filepath.Join(home, ".config/git/ignore"), "*.o\n")
		t.Setenv("HOME", home)
		for _, f := range secrets {
			p := filepath.Join(home, f)
			wantOK(t, "control: read "+f+" unconfined", hostTool(t, "read", p))
			wantDenied(t, "read "+f+" by default", s.tool(s.policy(), "read", p), "EACCES", "ENOENT")
		}
		wantOK(t, "read ~/.bashrc", s.tool(s.policy(), "read", filepath.Join(home, ".bashrc")))
		wantOK(t, "list ~", s.tool(s.policy(), "readdir", home))
		wantOK(t, "list ~/.config", s.tool(s.policy(), "readdir", filepath.Join(home, ".config")))
		wantOK(t, "read ~/.cache/pip/http/entry", s.tool(s.policy(), "read", filepath.Join(home, ".cache/pip/http/entry")))
		wantOK(t, "read ~/.config/git/ignore", s.tool(s.policy(), "read", filepath.Join(home, ".config/git/ignore")))

		one := s.policy()
		one.AllowRead = []string{filepath.Join(home, ".ssh")}
		wantOK(t, "read ~/.ssh/id_ed25519 released", s.tool(one, "read", filepath.Join(home, ".ssh/id_ed25519")))
		wantDenied(t, "read ~/.aws/credentials with only ~/.ssh released", s.tool(one, "read", filepath.Join(home, ".aws/credentials")), "EACCES", "ENOENT")
		all := s.policy()
		all.AllowRead = []string{home}
		for _, f := range secrets {
			wantOK(t, "read "+f+" with the home directory released", s.tool(all, "read", filepath.Join(home, f)))
		}
	})
}

// TestWritesOutsideTheRootsFailLoudly: a tool that writes beside the
// workspace or into /tmp gets an error and a failing exit status under
// both runners, and nothing is left behind; nothing succeeds inside only
// to vanish with the sandbox. `git worktree add ../wt` is the case that
// used to return 0 and lose the tree. The positive controls: the same
// worktree added under $TMPDIR, and a file written there, work.
func TestWritesOutsideTheRootsFailLoudly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test")
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		pol := s.policy()
		git := "git -c user.email=a@b -c user.name=a"
		init := s.run(pol, "/bin/sh", "-c", "git init -q && echo a > a && git add a && "+git+" commit -qm a")
		if init.code != 0 {
			t.Fatalf("control: git init and commit: exit %d, %s", init.code, init.stderr)
		}
		sibling := filepath.Join(s.base, "wt")
		r := s.run(pol, "git", "worktree", "add", "-q", sibling)
		if r.code == 0 {
			t.Errorf("git worktree add %s outside the roots exited 0 (stderr %q)", sibling, r.stderr)
		}
		wantAbsent(t, sibling)
		tmp := filepath.Join("/tmp", randomName("sbx-loud-"))
		r = s.run(pol, "/bin/sh", "-c", "echo x > "+tmp)
		if r.code == 0 || !strings.Contains(r.stderr, "Read-only file system") && !strings.Contains(r.stderr, "Permission denied") {
			t.Errorf("a shell redirect into /tmp: exit %d, stderr %q; want a failure naming EROFS or EACCES", r.code, r.stderr)
		}
		wantAbsent(t, tmp)

		r = s.run(pol, "/bin/sh", "-c", `git worktree add -q "$TMPDIR/wt" && cat "$TMPDIR/wt/a" && echo y > "$TMPDIR/y" && cat "$TMPDIR/y"`)
		if r.code != 0 || r.stdout != "a\ny\n" {
			t.Errorf("control: a worktree and a file under $TMPDIR: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}

// TestCleanupRemovesReadOnlyScratch: a command that leaves read-only
// directories in its TMPDIR (Go's module cache is one) still has the dir
// removed by Cleanup; a symlink it left there pointing out is not
// followed (the directory it names keeps its mode). As root RemoveAll
// needs no help; the unprivileged run proves the repair.
func TestCleanupRemovesReadOnlyScratch(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		outside := filepath.Join(s.base, "outside")
		mkdirs(t, outside)
		if err := os.Chmod(outside, 0o500); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(outside, 0o755)
		// A module cache's read-only tree, a directory made unopenable,
		// and the temp dir itself left with no read or write right (a
		// command that wants its scratch to outlive the wrap).
		w := s.wrap(s.policy(), "/bin/sh", "-c", `mkdir -p "$TMPDIR/mod/a/b" "$TMPDIR/keep/x" && echo x > "$TMPDIR/mod/a/b/f" && echo y > "$TMPDIR/keep/x/f" && `+
			`chmod 0500 "$TMPDIR/mod/a/b" "$TMPDIR/mod/a" "$TMPDIR/mod" && chmod 0 "$TMPDIR/keep/x" && ln -s `+outside+` "$TMPDIR/link" && chmod 0111 "$TMPDIR"`)
		if r := s.spawn(w, nil); r.code != 0 {
			t.Fatalf("control: the command: exit %d, %s", r.code, r.stderr)
		}
		if fi, err := os.Stat(w.TempDir); err != nil || fi.Mode().Perm() != 0o111 {
			t.Fatalf("control: the temp dir's mode is not what the command left: %v %v", fi, err)
		}
		if err := w.Cleanup(); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
		if _, err := os.Lstat(w.TempDir); !os.IsNotExist(err) {
			t.Errorf("the temp dir is still there after Cleanup (%v)", err)
		}
		if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o500 {
			t.Errorf("the directory the left-behind link names changed: %v %v", fi, err)
		}
	})
}

// TestOtherWrapsTempDirsUnreadable: a wrap's TMPDIR is private: a command
// of another wrap of the same user cannot read or write it (the parent of
// every wrap's temp dir is denied: an empty mount under namespaces, where
// only its own dir shows; under landlock the names stay listable, as in
// every deny-read directory), while its own is usable.
func TestOtherWrapsTempDirsUnreadable(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		a := s.wrap(s.policy(), "true")
		secret := filepath.Join(a.TempDir, "secret")
		write(t, secret, "scratch of another wrap\n")
		wantOK(t, "control: a wrap reads its own TMPDIR", s.tool(s.policy(), "write-in-env-dir", "TMPDIR", "mine"))
		wantDenied(t, "read another wrap's TMPDIR", s.tool(s.policy(), "read", secret), "EACCES", "ENOENT")
		wantDenied(t, "write into another wrap's TMPDIR", s.tool(s.policy(), "write", filepath.Join(a.TempDir, "planted")), "EACCES", "EROFS", "ENOENT")
		wantAbsent(t, filepath.Join(a.TempDir, "planted"))
		wantOK(t, "control: the file is readable unconfined", hostTool(t, "read", secret))
	})
}

// TestCredentialsBehindASymlinkedConfigDir: ~/.config is often a symlink
// into a dotfiles repository. Every namespaces wrap then failed with a
// signed runner failure (its launcher opens paths without following
// symlinks), the kind of failure that pushes an agent to run
// unconfined. The default deny-read paths below it must hold by both
// names, and everything else in it stay readable.
func TestCredentialsBehindASymlinkedConfigDir(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		home := filepath.Join(s.base, "home")
		real := filepath.Join(s.base, "dotfiles", "config")
		write(t, filepath.Join(real, "gh", "hosts.yml"), "secret\n")
		write(t, filepath.Join(real, "git", "ignore"), "*.o\n")
		symlink(t, real, filepath.Join(home, ".config"))
		t.Setenv("HOME", home)
		r := s.run(s.policy(), "/bin/sh", "-c", "echo ran")
		if r.code != 0 || r.stdout != "ran\n" {
			t.Fatalf("a command with ~/.config a symlink: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		for _, p := range []string{filepath.Join(home, ".config", "gh", "hosts.yml"), filepath.Join(real, "gh", "hosts.yml")} {
			wantOK(t, "control: read "+p+" unconfined", hostTool(t, "read", p))
			wantDenied(t, "read "+p, s.tool(s.policy(), "read", p), "EACCES", "ENOENT")
		}
		wantOK(t, "read ~/.config/git/ignore", s.tool(s.policy(), "read", filepath.Join(home, ".config", "git", "ignore")))
		wantOK(t, "list ~/.config", s.tool(s.policy(), "readdir", filepath.Join(home, ".config")))
	})
}

// TestLinksInsideADeniedDirectory: ~/.kube/config is often a link to one
// of several cluster files kept elsewhere in the home directory, and
// dotfiles managers link keys and configs the same way. Under landlock
// reading ~/.kube/config read the target (its rules sit on objects, and
// the object is outside ~/.kube), and under both runners the target was
// readable by its own name. The targets of such links are
// denied too; a file beside a target, and a link's target outside the
// home directory (what every user may read), stay readable.
func TestLinksInsideADeniedDirectory(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		home := filepath.Join(s.base, "home")
		write(t, filepath.Join(home, "clusters", "prod.yaml"), "token: secret\n")
		write(t, filepath.Join(home, "clusters", "dev.yaml"), "token: dev\n")
		write(t, filepath.Join(home, "dotfiles", "ssh", "id_ed25519"), "key\n")
		symlink(t, filepath.Join(home, "clusters", "prod.yaml"), filepath.Join(home, ".kube", "config"))
		symlink(t, "../dotfiles/ssh/id_ed25519", filepath.Join(home, ".ssh", "id_ed25519"))
		symlink(t, "/etc/hostname", filepath.Join(home, ".ssh", "hostname"))
		// A large denied directory walked first (the Azure CLI's logs)
		// must not use up the budget of the others.
		for i := range 2100 {
			write(t, filepath.Join(home, ".azure", "commands", fmt.Sprintf("log-%d", i)), "")
		}
		t.Setenv("HOME", home)
		for _, f := range []string{".kube/config", "clusters/prod.yaml", ".ssh/id_ed25519", "dotfiles/ssh/id_ed25519"} {
			p := filepath.Join(home, f)
			wantOK(t, "control: read ~/"+f+" unconfined", hostTool(t, "read", p))
			wantDenied(t, "read ~/"+f, s.tool(s.policy(), "read", p), "EACCES", "ENOENT")
		}
		wantOK(t, "read ~/clusters/dev.yaml beside a denied target", s.tool(s.policy(), "read", filepath.Join(home, "clusters", "dev.yaml")))
		wantOK(t, "read /etc/hostname, a link's target outside the home directory", s.tool(s.policy(), "read", "/etc/hostname"))
	})
}

// TestCredentialsWhereTheEnvironmentPutsThem: with XDG_CONFIG_HOME set,
// git keeps its credential store and gh its hosts there; a service
// account key is wherever GOOGLE_APPLICATION_CREDENTIALS says, and a
// kubeconfig wherever KUBECONFIG lists it. Each was readable;
// the variables themselves are withheld already. A file beside them stays
// readable (the control), and each reads unconfined.
func TestCredentialsWhereTheEnvironmentPutsThem(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		home := filepath.Join(s.base, "home")
		xdg := filepath.Join(home, ".xdgconfig")
		secrets := []string{
			filepath.Join(xdg, "git", "credentials"), filepath.Join(xdg, "gh", "hosts.yml"),
			filepath.Join(home, "keys", "sa.json"), filepath.Join(home, "clusters", "a.yaml"), filepath.Join(home, "clusters", "b.yaml"),
		}
		for _, p := range secrets {
			write(t, p, "secret\n")
		}
		write(t, filepath.Join(home, "keys", "README"), "not a key\n")
		t.Setenv("HOME", home)
		t.Setenv("XDG_CONFIG_HOME", xdg)
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", secrets[2])
		t.Setenv("KUBECONFIG", secrets[3]+string(os.PathListSeparator)+secrets[4])
		for _, p := range secrets {
			wantOK(t, "control: read "+p+" unconfined", hostTool(t, "read", p))
			wantDenied(t, "read "+p, s.tool(s.policy(), "read", p), "EACCES", "ENOENT")
		}
		wantOK(t, "read a file beside a denied key", s.tool(s.policy(), "read", filepath.Join(home, "keys", "README")))
	})
}
