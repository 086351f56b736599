//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/sandbox"
	"golang.org/x/sys/unix"
)

// The attacks below came from a review of the UNIX socket allow-list; the
// races among them were real escapes before the launchers stopped
// following symlinks (see "Paths that change between Wrap and launch").

// TestPlantedSymlinkCannotRetargetTheSocketList: the consumer allows one
// socket inside the workspace. An earlier command under the same policy
// moves the socket's directory aside and plants a symlink to Docker's
// socket where the listed one was. The next Wrap must not follow it into
// allowing Docker's socket by its own path: it is INVALID_POLICY.
func TestPlantedSymlinkCannotRetargetTheSocketList(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		docker := newDaemon(t, filepath.Join(s.base, "docker.sock"), false)
		run := filepath.Join(s.ws, "run")
		mkdirs(t, run)
		listed := filepath.Join(run, "db.sock")
		newDaemon(t, listed, false)
		pol := s.policy()
		pol.AllowUnixSockets = []string{listed}
		w := s.wrap(pol, "true")
		if got := strings.Join(w.Args, "\x00"); !strings.Contains(got, "\x00-u\x00"+listed+"\x00") {
			t.Fatalf("control: the first wrap does not list %s: %q", listed, w.Args)
		}

		wantOK(t, "move the socket's directory aside", s.tool(pol, "rename", run, run+"-old"))
		wantOK(t, "recreate it", s.tool(pol, "mkdir", run))
		wantOK(t, "plant the symlink", s.tool(pol, "symlink", docker.path, listed))

		w2, err := s.p.Wrap(t.Context(), sandboxRequest(pol, "true"))
		if err == nil {
			defer w2.Cleanup()
			t.Fatalf("Wrap followed the planted symlink: %q", w2.Args)
		}
		if !strings.Contains(err.Error(), "symlink inside the writable root") {
			t.Errorf("Wrap error %v, want INVALID_POLICY naming the planted symlink", err)
		}
	})
}

// TestOnlyTheUnixFamilyOpensWithListedSockets: with a UNIX socket
// allowed, seccomp still refuses every other family (EACCES: the kernel
// never sees the call), also with high bits set in the family register.
func TestOnlyTheUnixFamilyOpensWithListedSockets(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		d := newDaemon(t, filepath.Join(s.base, "agent.sock"), false)
		pol := s.policy()
		pol.AllowUnixSockets = []string{d.path}
		wantOK(t, "control: AF_UNIX inside", s.tool(pol, "socket-raw64", "1", "1"))
		wantOK(t, "control: AF_UNIX with high bits, unconfined", hostTool(t, "socket-raw64", "0x100000001", "1"))
		fams := []uint64{unix.AF_PACKET, unix.AF_VSOCK, unix.AF_ALG, unix.AF_KEY, unix.AF_BLUETOOTH, unix.AF_XDP, unix.AF_MAX, 0xff}
		if !s.traits().ownNetwork {
			fams = append(fams, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK)
		}
		for _, f := range fams {
			for _, v := range []uint64{f, f | 1<<32, f | 0xffffffff00000000} {
				if got := s.tool(pol, "socket-raw64", fmt.Sprint(v), fmt.Sprint(unix.SOCK_DGRAM)); got != "EACCES" {
					t.Errorf("socket(family %#x): %s, want EACCES (seccomp)", v, got)
				}
			}
		}
	})
}

// TestListedSocketSwappedAtLaunch: between Wrap and launch the listed
// socket becomes a directory, a FIFO, or a symlink to /, to a deny-read
// directory or to a deny-read file. The launch must neither fail open nor
// expose the denied file.
func TestListedSocketSwappedAtLaunch(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		secretDir := filepath.Join(s.base, "secrets")
		write(t, filepath.Join(secretDir, "key"), "PRIVATE KEY")
		wantOK(t, "control: the secret reads unconfined", hostTool(t, "read-secret", filepath.Join(secretDir, "key"), "PRIVATE KEY"))
		for _, kind := range []string{"dir", "fifo", "link-root", "link-secret-dir", "link-secret-file"} {
			t.Run(kind, func(t *testing.T) {
				listed := filepath.Join(s.ws, "swap-"+kind+".sock")
				newDaemon(t, listed, false)
				pol := s.policy()
				pol.DenyRead = []string{secretDir}
				pol.AllowUnixSockets = []string{listed}
				target := filepath.Join(listed, "key")
				if kind == "link-secret-file" {
					target = listed
				}
				w := s.wrap(pol, self(t), toolArg, "read-secret", target, "PRIVATE KEY")
				os.Remove(listed)
				var err error
				switch kind {
				case "dir":
					err = os.Mkdir(listed, 0o755)
					if err == nil {
						write(t, filepath.Join(listed, "key"), "decoy")
					}
				case "fifo":
					err = syscall.Mkfifo(listed, 0o644)
				case "link-root":
					err = os.Symlink("/", listed)
				case "link-secret-dir":
					err = os.Symlink(secretDir, listed)
				case "link-secret-file":
					err = os.Symlink(filepath.Join(secretDir, "key"), listed)
				}
				if err != nil {
					t.Fatal(err)
				}
				r := s.spawn(w, nil)
				if r.code == 125 && strings.HasPrefix(r.stderr, w.RunnerFailure.FatalPrefix) {
					return // refused before the command ran: fail closed
				}
				if got := toolAnswer(t, r); got == "ok" {
					t.Errorf("%s: the secret was read through the swapped socket path", kind)
				}
			})
		}
	})
}

// TestListedSocketInsideDenyReadAndGitHooks: a listed socket inside a
// deny-read directory is reachable and nothing else there is; a listed
// socket inside .git/hooks leaves the hooks read-only.
func TestListedSocketInsideDenyReadAndGitHooks(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		secretDir := filepath.Join(s.base, "secrets")
		write(t, filepath.Join(secretDir, "key"), "PRIVATE KEY")
		d := newDaemon(t, filepath.Join(secretDir, "agent.sock"), false)
		gitRepo(t, s.ws)
		hooks := filepath.Join(s.ws, ".git", "hooks")
		h := newDaemon(t, filepath.Join(hooks, "h.sock"), false)
		pol := s.policy()
		pol.DenyRead = []string{secretDir}
		pol.AllowUnixSockets = []string{d.path, h.path}
		wantOK(t, "connect to the socket in the deny-read dir", s.tool(pol, "connect-unix", d.path, "in-deny"))
		wantOK(t, "connect to the socket in .git/hooks", s.tool(pol, "connect-unix", h.path, "in-hooks"))
		if !d.received("in-deny") || !h.received("in-hooks") {
			t.Error("a listed socket got nothing")
		}
		if got := s.tool(pol, "read-secret", filepath.Join(secretDir, "key"), "PRIVATE KEY"); got == "ok" {
			t.Error("the deny-read directory's secret is readable once a socket in it is allowed")
		}
		if s.traits().enforcesReadOnly {
			wantDenied(t, "plant a hook beside the listed socket", s.tool(pol, "write", filepath.Join(hooks, "pre-commit")), "EROFS", "EACCES")
			wantAbsent(t, filepath.Join(hooks, "pre-commit"))
		}
	})
}

// secretReadDuringFlips launches a command under victim that reads
// secret (holding "PRIVATE KEY"), again and again for d, while an attacker
// sandbox (under policy attacker) flips a and b; no launch may read it.
// A Wrap that meets the flip half-way and refuses is a fine outcome.
func secretReadDuringFlips(t *testing.T, s *sbx, attacker, victim sandbox.Policy, a, b, secret string, d time.Duration) {
	t.Helper()
	w := s.wrap(attacker, self(t), toolArg, "flip", a, b, fmt.Sprint((d + 5*time.Second).Milliseconds()))
	cmd := w.Command(t.Context())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(d)
	for try := 1; time.Now().Before(deadline); try++ {
		w, err := s.p.Wrap(t.Context(), sandboxRequest(victim, self(t), toolArg, "read-secret", secret, "PRIVATE KEY"))
		if err != nil {
			continue // Wrap met the flip
		}
		got := strings.TrimSpace(s.spawn(w, nil).stdout)
		w.Cleanup()
		if got == "ok" {
			t.Fatalf("try %d: the secret %s was read", try, secret)
		}
	}
}

// TestListedSocketParentFlippedBySandbox: a sandbox under the very same
// policy flips the listed socket's parent directory with a relative
// symlink to a deny-read directory holding a file of the socket's name,
// while the victim launches again and again: the victim must never read
// that file (a bind made by path would follow the flip).
func TestListedSocketParentFlippedBySandbox(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		secrets := filepath.Join(s.base, "secrets")
		secret := filepath.Join(secrets, "agent.sock")
		write(t, secret, "PRIVATE KEY")
		a := filepath.Join(s.ws, "a")
		mkdirs(t, a)
		listed := filepath.Join(a, "agent.sock")
		newDaemon(t, listed, false)
		b := filepath.Join(s.ws, "b")
		if err := os.Symlink("../secrets", b); err != nil {
			t.Fatal(err)
		}
		pol := s.policy()
		pol.DenyRead = []string{secrets}
		pol.AllowUnixSockets = []string{listed}
		wantOK(t, "control: the secret reads unconfined", hostTool(t, "read-secret", secret, "PRIVATE KEY"))
		secretReadDuringFlips(t, s, pol, pol, a, b, secret, 8*time.Second)
	})
}

// TestGitConfigBindFlippedIntoDenyRead: a sandbox whose workspace is the
// victim's parent flips the victim's .git with a symlink to a deny-read
// directory holding a "config" (~/.kube/config): the read-only bind of
// .git/config must never bring the denied file in.
func TestGitConfigBindFlippedIntoDenyRead(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		kube := filepath.Join(s.base, "kube")
		secret := filepath.Join(kube, "config")
		write(t, secret, "PRIVATE KEY")
		gitRepo(t, s.ws)
		b := filepath.Join(s.ws, "b")
		if err := os.Symlink("../kube", b); err != nil {
			t.Fatal(err)
		}
		pol := s.policy()
		pol.DenyRead = []string{kube}
		wantOK(t, "control: the secret reads unconfined", hostTool(t, "read-secret", secret, "PRIVATE KEY"))
		attacker := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: s.base, DenyRead: []string{kube}}
		secretReadDuringFlips(t, s, attacker, pol, filepath.Join(s.ws, ".git"), b, secret, 4*time.Second)
	})
}
