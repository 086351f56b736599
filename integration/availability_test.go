//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// submounts is a directory under the host's /tmp with two mount points
// below it, mounted only in a private mount namespace (inMounts): a tmpfs
// and a bind of a directory under the case's base, which the test reads
// from outside.
type submounts struct {
	tmpfs, bind, src string
}

func newSubmounts(t *testing.T, s *sbx) submounts {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "sbx-submounts-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	m := submounts{tmpfs: filepath.Join(dir, "tmpfs"), bind: filepath.Join(dir, "bind"), src: filepath.Join(s.base, "src")}
	mkdirs(t, m.tmpfs, m.bind, m.src)
	write(t, filepath.Join(m.src, "f"), "bound\n")
	return m
}

// inMounts runs w's launcher in a mount namespace of its own where m's
// mounts are made first, never on the host (other sandboxes run there):
// with CAP_SYS_ADMIN a private mount namespace; for another user (or a
// container's root without it) one owned by a user namespace that maps it
// to itself, its capabilities dropped again before the launcher starts.
// Either way the sandbox's own user namespace sees them locked, as it sees
// a host's. After the launcher, the shell says LEAK on stderr if a file
// named new exists in the tmpfs.
func (m submounts) inMounts(t *testing.T, s *sbx, w *sandbox.Wrapped) ran {
	t.Helper()
	for _, p := range []string{"unshare", "bash", "setpriv"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is needed for this test: %v", p, err)
		}
	}
	launch := `p=$1; shift; (exec -a "$0" "$p" "$@")`
	ns := []string{"unshare", "--mount", "--propagation", "private"}
	if os.Geteuid() != 0 || !hasCapSysAdmin(t) {
		ns = []string{"unshare", "--user", "--map-current-user", "--keep-caps", "--mount", "--propagation", "private"}
		launch = `setpriv --inh-caps=-all --ambient-caps=-all bash -c '` + launch + `' "$0" "$@"`
	}
	script := "set -e; mount -t tmpfs -o size=1m none " + m.tmpfs + "; echo tmpfs > " + m.tmpfs + "/f; echo secret > " + m.tmpfs + "/secret; " +
		"mount --bind " + m.src + " " + m.bind + "; set +e; " + launch + "; rc=$?; " +
		"if [ -e " + m.tmpfs + "/new ]; then echo LEAK >&2; fi; exit $rc"
	return s.spawn(w, func(cmd *exec.Cmd) {
		argv := append(append(ns, "bash", "-c", script, w.Args[0], w.Path), w.Args[1:]...)
		cmd.Path, _ = exec.LookPath("unshare")
		cmd.Args = argv
	})
}

// tool runs a tool verb in m's mount namespace under pol.
func (m submounts) tool(t *testing.T, s *sbx, pol sandbox.Policy, verb string, args ...string) (string, ran) {
	t.Helper()
	r := m.inMounts(t, s, s.wrap(pol, append([]string{self(t), toolArg, verb}, args...)...))
	if r.code == 125 {
		t.Fatalf("%s %v: the sandbox did not start (exit 125): %s", verb, args, r.stderr)
	}
	return toolAnswer(t, r), r
}

// TestMountsBelowTmp: mounts below the host's /tmp (a tmpfs, a bind mount)
// are locked in the sandbox's user namespace, where the kernel refuses the
// namespaces runner's overlay on /tmp; the runner must still start and
// show /tmp as it shows the rest of the host's tree: the files in those
// mounts readable, none writable, a deny-read path among them denied,
// and a writable root inside one writable. The controls: the same writes
// work unconfined in the same namespace, and a file the shell sees appear
// there is reported.
func TestMountsBelowTmp(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		m := newSubmounts(t, s)
		pol := s.policy()
		self := self(t)

		control := m.inMounts(t, s, &sandbox.Wrapped{Path: self, Args: []string{self, toolArg, "write", filepath.Join(m.tmpfs, "new")}})
		if control.code != 0 && strings.HasPrefix(control.stderr, "unshare: unshare failed") {
			// Docker's default seccomp profile refuses new user namespaces.
			t.Skipf("the host refuses a mount namespace of this test's own (%s), as a container's policy may: no mounts below /tmp to test with",
				strings.TrimSpace(control.stderr))
		}
		wantOK(t, "control: write into the tmpfs unconfined", toolAnswer(t, control))
		if !strings.Contains(control.stderr, "LEAK") {
			t.Fatalf("control: the shell did not see the unconfined write in the tmpfs: %q", control.stderr)
		}
		control = m.inMounts(t, s, &sandbox.Wrapped{Path: self, Args: []string{self, toolArg, "write", filepath.Join(m.bind, "unconfined")}})
		wantOK(t, "control: write into the bind mount unconfined", toolAnswer(t, control))
		wantContent(t, filepath.Join(m.src, "unconfined"), "written by the sandbox\n")

		got, _ := m.tool(t, s, pol, "read-secret", filepath.Join(m.tmpfs, "f"), "tmpfs")
		wantOK(t, "read a file in the tmpfs below /tmp", got)
		got, _ = m.tool(t, s, pol, "read-secret", filepath.Join(m.bind, "f"), "bound")
		wantOK(t, "read a file in the bind mount below /tmp", got)

		got, r := m.tool(t, s, pol, "write", filepath.Join(m.tmpfs, "new"))
		wantDenied(t, "write into the tmpfs below /tmp", got)
		if strings.Contains(r.stderr, "LEAK") {
			t.Error("the denied write into the tmpfs left a file")
		}
		got, _ = m.tool(t, s, pol, "write", filepath.Join(m.bind, "new"))
		wantDenied(t, "write into the bind mount below /tmp", got)
		wantAbsent(t, filepath.Join(m.src, "new"))

		got, _ = m.tool(t, s, pol, "read-secret", filepath.Join(m.tmpfs, "secret"), "secret")
		wantOK(t, "control: read the secret in the tmpfs without a deny-read", got)
		deny := s.policy()
		deny.DenyRead = []string{filepath.Join(m.tmpfs, "secret")}
		got, _ = m.tool(t, s, deny, "read-secret", filepath.Join(m.tmpfs, "secret"), "secret")
		wantDenied(t, "read a deny-read file in the tmpfs", got, "EACCES", "ENOENT", "hidden")

		granted := s.policy()
		granted.WritableRoots = []string{m.bind}
		got, _ = m.tool(t, s, granted, "write", filepath.Join(m.bind, "granted"))
		wantOK(t, "write into the bind mount granted as a writable root", got)
		wantContent(t, filepath.Join(m.src, "granted"), "written by the sandbox\n")
	})
}

// TestUnreadableHomeIsNoLaunchFailure: a HOME the caller cannot search
// (an environment passed on from root, HOME=/root, to another user) holds
// the default deny-read paths, which cannot even be looked up. They are
// unreadable anyway, so the wrap runs instead of failing on them, and they
// stay unreadable; a deny-read path the caller can read is still denied.
// As sbx-test the home is /root; as root, whose own files a user namespace
// still lets it read, a directory of another user, mode 0700, with a
// secret (root reads it unconfined: the control).
func TestUnreadableHomeIsNoLaunchFailure(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		home, secret := "/root", "/root/.ssh/id_ed25519"
		if os.Geteuid() == 0 {
			home = filepath.Join(s.base, "home")
			secret = filepath.Join(home, ".ssh/id_ed25519")
			write(t, secret, "secret\n")
			for _, p := range []string{home, filepath.Dir(secret), secret} {
				if err := os.Chown(p, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(home, 0o700); err != nil {
				t.Fatal(err)
			}
			wantOK(t, "control: root reads the other user's secret unconfined", hostTool(t, "read", secret))
		} else if got := hostTool(t, "readdir", home); got != "EACCES" {
			t.Fatalf("control: %s is readable by uid %d (%s): no unreadable home to test with", home, os.Geteuid(), got)
		}
		t.Setenv("HOME", home)
		if r := s.run(s.policy(), "true"); r.code != 0 {
			t.Fatalf("true with HOME=%s: exit %d, %s", home, r.code, r.stderr)
		}
		wantDenied(t, "list the unreadable home", s.tool(s.policy(), "readdir", home), "EACCES")
		wantDenied(t, "read the secret in the unreadable home", s.tool(s.policy(), "read", secret), "EACCES", "ENOENT")

		readable := filepath.Join(s.base, "readable", "secret")
		write(t, readable, "secret\n")
		wantOK(t, "control: the readable file without a deny-read", s.tool(s.policy(), "read", readable))
		pol := s.policy()
		pol.DenyRead = []string{filepath.Dir(readable)}
		wantDenied(t, "read a deny-read file the caller can read", s.tool(pol, "read", readable), "EACCES", "ENOENT")
	})
}
