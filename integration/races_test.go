//go:build linux

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/sandbox"
	"golang.org/x/sys/unix"
)

// Races between Wrap and launch, and between sandboxes sharing a
// workspace: a command in sandbox A that can write the shared tree swaps a
// path component for a symlink while sandbox B starts. Wrap resolved every
// writable root, the temp dir and the directories above the read-only
// subpaths; at launch a symlink there is an attack, and the launcher must
// refuse to start (exit 125, its signed fatal line) rather than follow it.
// "home" below stands in for the user's home directory: a place no policy
// here makes writable or readable.

// swapForSymlink renames p away (to p+".real") and puts a relative symlink
// to target in its place, as a command writing the shared workspace can.
func swapForSymlink(t *testing.T, p, target string) {
	t.Helper()
	if err := os.Rename(p, p+".real"); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Dir(p), target)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, p); err != nil {
		t.Fatal(err)
	}
}

// wantRunnerFailure asserts the launch was refused before the command ran.
func wantRunnerFailure(t *testing.T, what string, r ran) {
	t.Helper()
	if r.code != 125 || r.w.Classify(r.code, []byte(r.stderr)).Kind != sandbox.OutcomeRunnerFailure {
		t.Errorf("%s: exit %d stdout %q stderr %q, want a runner failure (125 and the fatal line)", what, r.code, r.stdout, r.stderr)
	}
	if strings.TrimSpace(r.stdout) != "" {
		t.Errorf("%s: the command ran: stdout %q", what, r.stdout)
	}
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWritableRootSwappedAfterWrap: an extra writable root (or a directory
// above it) inside another sandbox's workspace turns into a symlink to
// "home" between Wrap and launch. Following it would make home writable.
func TestWritableRootSwappedAfterWrap(t *testing.T) {
	for _, swapped := range []string{"root", "parent"} {
		t.Run(swapped, func(t *testing.T) {
			forEachRunner(t, func(t *testing.T, s *sbx) {
				shared := filepath.Join(s.base, "shared") // sandbox A's workspace
				sub := filepath.Join(shared, "sub")
				home := filepath.Join(s.base, "home")
				mkdirs(t, sub, filepath.Join(home, "sub"))
				pol := s.policy() // B's workspace is s.ws; shared/sub is an extra root
				pol.WritableRoots = []string{sub}
				target := filepath.Join(sub, "planted")

				wantOK(t, "control: write in the root", s.tool(pol, "write", target))
				wantContent(t, target, "written by the sandbox\n")

				w := s.wrap(pol, self(t), toolArg, "write", target)
				victim, to := sub, home
				if swapped == "parent" {
					victim, to = shared, filepath.Join(s.base, "home")
				}
				swapForSymlink(t, victim, to)
				r := s.spawn(w, nil)
				t.Logf("after the swap: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
				wantRunnerFailure(t, "launch after the swap", r)
				wantAbsent(t, filepath.Join(home, "planted"))
				wantAbsent(t, filepath.Join(home, "sub", "planted"))
			})
		})
	}
}

// TestTempDirSwappedAfterWrap: the wrap's private temp dir, where the
// consumer's TMPDIR lies inside another sandbox's workspace, turns into a
// symlink to "home" before launch.
func TestTempDirSwappedAfterWrap(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		shared := filepath.Join(s.base, "shared")
		home := filepath.Join(s.base, "home")
		mkdirs(t, shared, home)
		t.Setenv("TMPDIR", shared)
		pol := s.policy()

		wantOK(t, "control: write in the temp dir", s.tool(pol, "write-in-env-dir", "TMPDIR", "planted"))

		w := s.wrap(pol, self(t), toolArg, "write-in-env-dir", "TMPDIR", "planted")
		if !strings.HasPrefix(w.TempDir, shared+"/") {
			t.Fatalf("temp dir %s is not under TMPDIR %s", w.TempDir, shared)
		}
		swapForSymlink(t, w.TempDir, home)
		r := s.spawn(w, nil)
		wantRunnerFailure(t, "launch after the swap", r)
		wantAbsent(t, filepath.Join(home, "planted"))
		os.Remove(w.TempDir) // the symlink; Cleanup removes the real dir's name only
		os.Rename(w.TempDir+".real", w.TempDir)
	})
}

// TestWorkingDirectorySwappedAfterWrap: the command's working directory
// turns into a symlink before launch; the command must not start there.
func TestWorkingDirectorySwappedAfterWrap(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		dir := filepath.Join(s.ws, "dir")
		home := filepath.Join(s.base, "home")
		mkdirs(t, dir, home)
		w, err := s.p.Wrap(context.Background(), sandbox.Request{Argv: []string{self(t), toolArg, "write", "planted"}, Dir: dir, Policy: s.policy()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Cleanup()
		swapForSymlink(t, dir, home)
		r := s.spawn(w, nil)
		wantRunnerFailure(t, "launch after the swap", r)
		wantAbsent(t, filepath.Join(home, "planted"))
	})
}

// TestGitDirSwappedAfterWrap: the workspace's .git turns into a symlink to
// a decoy between Wrap and launch. Following it would bind the decoy's
// hooks and config read-only and pin the decoy, leaving the real git dir
// (moved aside) writable and free to move back with a planted hook.
func TestGitDirSwappedAfterWrap(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		dotgit := filepath.Join(s.ws, ".git")
		plant := "rm .git && mv .git.real .git && echo evil > .git/hooks/pre-commit && echo planted"
		w := s.wrap(s.policy(), "/bin/sh", "-c", plant)
		if !s.traits().enforcesReadOnly {
			if w.Enforcement != sandbox.Partial {
				t.Errorf("the unenforced .git protection is not reported: %s %v", w.Enforcement, w.Gaps)
			}
			return // a reported gap of this runner (TestGitSurface)
		}
		wantDenied(t, "control: the hook is read-only", s.tool(s.policy(), "write", filepath.Join(dotgit, "hooks", "pre-commit")))
		decoy := filepath.Join(s.ws, "decoy")
		mkdirs(t, filepath.Join(decoy, "hooks"))
		write(t, filepath.Join(decoy, "config"), "")
		swapForSymlink(t, dotgit, decoy)
		r := s.spawn(w, nil)
		wantRunnerFailure(t, "launch after the swap", r)
		wantAbsent(t, filepath.Join(dotgit+".real", "hooks", "pre-commit"))
		wantAbsent(t, filepath.Join(dotgit, "hooks", "pre-commit"))
	})
}

// TestGitDirSwappedIntoADeniedDirectory: .git turns into a symlink to a
// deny-read directory that holds a file named config. Binding "the
// config" read-only would put the denied file inside the empty mount that
// hides its directory.
func TestGitDirSwappedIntoADeniedDirectory(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		secret := filepath.Join(s.base, "home", ".aws")
		write(t, filepath.Join(secret, "config"), "secret\n")
		pol := s.policy()
		pol.DenyRead = []string{secret}
		w := s.wrap(pol, self(t), toolArg, "read", filepath.Join(s.ws, ".git", "config"))
		swapForSymlink(t, filepath.Join(s.ws, ".git"), secret)
		r := s.spawn(w, nil)
		if r.code == 0 {
			t.Errorf("the denied file was read through the swapped .git: %q", r.stdout)
		}
		if s.traits().enforcesReadOnly {
			wantRunnerFailure(t, "launch after the swap", r)
		}
	})
}

// TestProtectedFileLinkedIntoADeniedPath: a protected path that is a
// symlink into a deny-read path inside the workspace. Its target is kept
// read-only, but the read-only bind must never bring back what the
// deny-read mount hides.
func TestProtectedFileLinkedIntoADeniedPath(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		secret := filepath.Join(s.ws, "secret")
		write(t, filepath.Join(secret, "config"), "secret\n")
		pol := s.policy()
		pol.DenyRead = []string{secret}
		w := s.wrap(pol, self(t), toolArg, "read", filepath.Join(s.ws, ".git", "config"))
		if !s.traits().enforcesReadOnly {
			return // deny-read inside a writable root is a reported gap of this runner
		}
		config := filepath.Join(s.ws, ".git", "config")
		if err := os.Rename(config, config+".real"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../secret/config", config); err != nil {
			t.Fatal(err)
		}
		r := s.spawn(w, nil)
		if got := toolAnswer(t, r); got == "ok" {
			t.Errorf("the denied file was read through the protected symlink")
		}
	})
}

// TestReadOnlySubpathsInsideADeniedAncestor: a workspace inside a
// deny-read directory is shown again by its own writable bind; the
// read-only binds inside it are not binds into the hidden directory and
// must stay.
func TestReadOnlySubpathsInsideADeniedAncestor(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		write(t, filepath.Join(s.base, "secret"), "secret\n")
		pol := s.policy()
		pol.DenyRead = []string{s.base}
		wantOK(t, "control: the workspace stays writable", s.tool(pol, "write", filepath.Join(s.ws, "file")))
		wantDenied(t, "read next to the workspace", s.tool(pol, "read", filepath.Join(s.base, "secret")), "EACCES", "ENOENT")
		if !s.traits().enforcesReadOnly {
			return // read-only subpaths are a reported gap of this runner
		}
		wantDenied(t, "plant a hook", s.tool(pol, "write", filepath.Join(s.ws, ".git", "hooks", "pre-commit")))
		wantAbsent(t, filepath.Join(s.ws, ".git", "hooks", "pre-commit"))
	})
}

// flipWhile exchanges a and b (renameat2 RENAME_EXCHANGE: each name is
// always there, as a real directory or a symlink) as fast as it can, as a
// command of sandbox A would, while victim runs up to n times or for 20
// seconds, whichever ends first.
func flipWhile(t *testing.T, a, b string, n int, victim func(i int)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 10_000_000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
		}
	}()
	for i := 0; i < n && time.Now().Before(deadline); i++ {
		victim(i)
	}
	close(stop)
	wg.Wait()
}

// TestWritableRootSwapRace: sandbox A's command flips an extra writable
// root of B between the real directory and a symlink to "home", while B
// launches again and again and writes into the root. Each launch either
// writes into the real directory or is refused or denied; nothing may
// ever land in home.
func TestWritableRootSwapRace(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		shared := filepath.Join(s.base, "shared")
		sub := filepath.Join(shared, "sub")
		home := filepath.Join(s.base, "home")
		mkdirs(t, sub, home)
		if err := os.Symlink("../home", sub+".link"); err != nil {
			t.Fatal(err)
		}
		pol := s.policy()
		pol.WritableRoots = []string{sub}
		outcomes := map[string]int{}
		flipWhile(t, sub, sub+".link", 60, func(i int) {
			w, err := s.p.Wrap(context.Background(), sandboxRequest(pol, self(t), toolArg, "write", filepath.Join(sub, fmt.Sprintf("planted-%d", i))))
			if err != nil {
				outcomes["wrap refused"]++ // EvalSymlinks met the swap half-way
				return
			}
			defer w.Cleanup()
			if strings.Contains(strings.Join(w.Args, "\x00"), "\x00-w\x00"+home+"\x00") {
				// sub was the symlink when Wrap resolved it: home is what
				// this policy names, so it is not run.
				outcomes["wrapped while swapped"]++
				return
			}
			r := s.spawn(w, nil)
			switch {
			case w.Classify(r.code, []byte(r.stderr)).Kind == sandbox.OutcomeRunnerFailure:
				outcomes["refused at launch"]++
			case r.code == 0:
				outcomes["written"]++
			default:
				outcomes["denied"]++
			}
		})
		t.Logf("outcomes: %v", outcomes)
		ents, err := os.ReadDir(home)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			t.Errorf("written outside the writable root: %s", filepath.Join(home, e.Name()))
		}
	})
}

// TestDenyReadSiblingSwapRace: a deny-read directory sits in sandbox A's
// workspace next to an ordinary directory; landlock grants read on that
// sibling (it grants siblings instead of the parent). A flips the sibling
// with a symlink to the denied directory while B launches and reads the
// denied file: a rule made through the symlink would grant it.
func TestDenyReadSiblingSwapRace(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		shared := filepath.Join(s.base, "shared")
		secret := filepath.Join(shared, "secret")
		sib := filepath.Join(shared, "sib")
		write(t, filepath.Join(secret, "key"), "secret\n")
		mkdirs(t, sib)
		if err := os.Symlink("secret", sib+".link"); err != nil {
			t.Fatal(err)
		}
		pol := s.policy()
		pol.DenyRead = []string{secret}
		read := 0
		flipWhile(t, sib, sib+".link", 60, func(int) {
			if s.tool(pol, "read", filepath.Join(secret, "key")) == "ok" {
				read++
			}
		})
		if read > 0 {
			t.Errorf("the denied file was read in %d launches", read)
		}
	})
}

// TestSymlinksThatWereThereAtWrap: symlinks present at Wrap time are
// resolved there, so the launcher's refusal of symlinks at launch costs
// nothing legitimate: a TMPDIR reached through a symlink, and a caller's
// read-only subpath under a symlinked directory, still work.
func TestSymlinksThatWereThereAtWrap(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		real := filepath.Join(s.base, "tmp-real")
		mkdirs(t, real)
		if err := os.Symlink("tmp-real", filepath.Join(s.base, "tmp-link")); err != nil {
			t.Fatal(err)
		}
		t.Setenv("TMPDIR", filepath.Join(s.base, "tmp-link"))
		wantOK(t, "write in a temp dir under a symlinked TMPDIR", s.tool(s.policy(), "write-in-env-dir", "TMPDIR", "x"))

		write(t, filepath.Join(s.ws, "conf", "agent", "settings.json"), "{}\n")
		if err := os.Symlink("conf/agent", filepath.Join(s.ws, ".agent")); err != nil {
			t.Fatal(err)
		}
		pol := s.policy()
		pol.ReadOnlySubpaths = []string{".agent/settings.json"}
		got := s.tool(pol, "write", filepath.Join(s.ws, ".agent", "settings.json"))
		if s.traits().enforcesReadOnly {
			wantDenied(t, "write a read-only subpath under a symlinked directory", got)
			wantContent(t, filepath.Join(s.ws, "conf", "agent", "settings.json"), "{}\n")
		} else {
			wantOK(t, "write a read-only subpath (a reported gap here)", got)
		}
		wantOK(t, "control: other files stay writable", s.tool(pol, "write", filepath.Join(s.ws, "conf", "other")))
	})
}

// TestAllowedSocketSwappedForAnotherSocket: an allowed socket in sandbox
// A's workspace turns, between Wrap and launch, into a symlink to another
// host socket that the sandbox cannot otherwise reach (one on the host's
// /tmp, which the namespaces runner shows only through its overlay).
// Followed, the launcher would bind (or grant) that socket instead.
func TestAllowedSocketSwappedForAnotherSocket(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		shared := filepath.Join(s.base, "shared")
		mkdirs(t, shared)
		allowed := newDaemon(t, filepath.Join(shared, "agent.sock"), false)
		other := newDaemon(t, filepath.Join(hostSocketDir(t, s, true), "x11.sock"), false)
		pol := s.policy()
		pol.AllowUnixSockets = []string{allowed.path}
		wantOK(t, "control: the allowed socket is reachable", s.tool(pol, "connect-unix", allowed.path, "control"))
		if !allowed.received("control") {
			t.Fatal("control: nothing arrived at the allowed socket")
		}
		w := s.wrap(pol, self(t), toolArg, "connect-unix", other.path, "swapped")
		if !s.traits().tmpOverlay {
			return // without the overlay on /tmp, the other socket is only kept out by Landlock ABI 9 (TestUnixSocketAllowListIsExactOrReported)
		}
		wantDenied(t, "control: the other socket is out of reach", s.tool(pol, "connect-unix", other.path, "control"), "ECONNREFUSED", "ENOENT", "EACCES")
		swapForSymlink(t, allowed.path, other.path)
		got := toolAnswer(t, s.spawn(w, nil))
		wantDenied(t, "connect to the other socket after the swap", got, "ECONNREFUSED", "ENOENT", "EACCES")
		if !other.never("swapped") {
			t.Error("the other socket received a message")
		}
	})
}

// TestGitDirSwapRace: sandbox A flips the workspace's .git with a symlink
// to a decoy while B launches again and again and writes a hook into the
// real git dir under whichever name it has. When Wrap found .git a real
// directory (so it protects .git/hooks), each launch either finds it real
// (its hooks bound read-only, under either name: a mount follows the
// directory) or a symlink (refused); no hook may ever land.
func TestGitDirSwapRace(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		if !s.traits().enforcesReadOnly {
			return // read-only subpaths are a reported gap of this runner (TestGitSurface)
		}
		dotgit := filepath.Join(s.ws, ".git")
		hooks := filepath.Join(dotgit, "hooks")
		decoy := filepath.Join(s.ws, "decoy")
		mkdirs(t, filepath.Join(decoy, "hooks"))
		if err := os.Symlink("decoy", dotgit+".link"); err != nil {
			t.Fatal(err)
		}
		// Both names, so the hook lands in the real hooks whichever name
		// the real git dir has when the command runs.
		plant := "for d in .git .git.link; do echo evil > $d/hooks/pre-commit; done; true"
		// The real hooks directory, held open: its name changes under the
		// flips, the descriptor does not.
		real, err := unix.Open(hooks, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(real)
		// planted removes and reports a hook in the real hooks directory.
		planted := func() bool { return unix.Unlinkat(real, "pre-commit", 0) == nil }
		outcomes := map[string]int{}
		flipWhile(t, dotgit, dotgit+".link", 60, func(int) {
			w, err := s.p.Wrap(context.Background(), sandboxRequest(s.policy(), "/bin/sh", "-c", plant))
			if err != nil {
				outcomes["wrap refused"]++ // Wrap met the swap half-way
				return
			}
			defer w.Cleanup()
			r := s.spawn(w, nil)
			switch {
			case !strings.Contains(strings.Join(w.Args, "\x00"), "\x00-r\x00"+hooks+"\x00"):
				// Wrap found .git a symlink: it protects the link's
				// target, and the real git dir was not .git for this
				// wrap (a symlinked .git is a reported gap).
				outcomes["wrapped while swapped"]++
				planted()
			case planted():
				t.Errorf("a hook was planted in the real git dir (exit %d, stderr %q)", r.code, r.stderr)
			case w.Classify(r.code, []byte(r.stderr)).Kind == sandbox.OutcomeRunnerFailure:
				outcomes["refused at launch"]++
			default:
				outcomes["hooks read-only"]++
			}
		})
		t.Logf("outcomes: %v", outcomes)
	})
}

// TestRequireFullHoldsAtLaunch: a wrap that was full at Wrap (a caller's
// read-only file, no gap) and requires it: if the protected file turns
// into a symlink before launch, the launcher refuses, on what its plan
// opened, instead of protecting a link's target. One that vanishes is
// guarded (the launcher's guard refuses creating it, EROFS): the command
// runs, and cannot put it back.
func TestRequireFullHoldsAtLaunch(t *testing.T) {
	for _, runner := range only("namespaces") {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			settings := filepath.Join(s.ws, ".agent", "settings.json")
			pol := s.policy()
			pol.ReadOnlySubpaths = []string{".agent/settings.json"}
			pol.RequireFull = true
			for _, change := range []string{"none", "symlink", "gone"} {
				write(t, settings, "{}\n")
				w := s.wrap(pol, self(t), toolArg, "write", filepath.Join(s.ws, "ran-"+change))
				if w.Enforcement != sandbox.Full {
					t.Fatalf("control: enforcement %s, gaps %v; want full", w.Enforcement, w.Gaps)
				}
				switch change {
				case "symlink":
					os.Remove(settings)
					write(t, filepath.Join(s.ws, "decoy.json"), "{}\n")
					if err := os.Symlink("../decoy.json", settings); err != nil {
						t.Fatal(err)
					}
				case "gone":
					os.Remove(settings)
				}
				r := s.spawn(w, nil)
				if change == "none" {
					if r.code != 0 {
						t.Errorf("control: unchanged, exit %d stderr %q", r.code, r.stderr)
					}
					continue
				}
				if change == "gone" {
					if r.code != 0 {
						t.Errorf("gone: exit %d stderr %q, want the command run with the name guarded", r.code, r.stderr)
					}
					wantDenied(t, "create the vanished protected file", s.tool(pol, "write", settings), "EROFS")
					wantAbsent(t, settings)
					continue
				}
				wantRunnerFailure(t, change, r)
				if !strings.Contains(r.stderr, "full enforcement required") {
					t.Errorf("%s: stderr %q, want the full-enforcement refusal", change, r.stderr)
				}
				wantAbsent(t, filepath.Join(s.ws, "ran-"+change))
				os.Remove(settings)
			}
		})
	}
}
