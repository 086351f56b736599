//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// TestHostRenameOverAProtectedPath: git config, credential helpers and
// editors write a new file and rename it over the old one. Done on the
// host during a run, that makes the kernel detach the namespaces runner's
// mount on the old file: a read-only .git/config or a deny-read file is
// then exposed inside. The launcher must never let that go unnoticed: pid 1
// watches its mount table, stops the sandbox, and fails with the signed
// line naming the path.
func TestHostRenameOverAProtectedPath(t *testing.T) {
	if !contains(linuxRunners, "namespaces") {
		t.Skip("the namespaces runner is not under test here")
	}
	cases := []struct {
		name   string
		target func(s *sbx) string
		policy func(s *sbx, target string) sandbox.Policy
	}{
		{"read-only .git/config", func(s *sbx) string {
			gitRepo(t, s.ws)
			return filepath.Join(s.ws, ".git", "config")
		}, func(s *sbx, _ string) sandbox.Policy { return s.policy() }},
		{"deny-read file outside the workspace", func(s *sbx) string {
			p := filepath.Join(s.base, "credentials")
			write(t, p, "old secret\n")
			return p
		}, func(s *sbx, target string) sandbox.Policy {
			pol := s.policy()
			pol.DenyRead = []string{target}
			return pol
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSbx(t, "namespaces")
			target := c.target(s)
			pol := c.policy(s, target)
			// The command reads and appends to the protected path every
			// 20 ms for up to 3 s.
			script := `i=0; while [ $i -lt 150 ]; do cat "$1" >/dev/null 2>&1 && echo read; echo planted >> "$1" 2>/dev/null && echo wrote; sleep 0.02; i=$((i+1)); done; exit 7`
			// Control: without a rename the command runs to its own end.
			r := s.run(pol, "/bin/sh", "-c", strings.Replace(script, "150", "5", 1), "sh", target)
			if r.code != 7 || strings.Contains(r.stdout, "wrote") {
				t.Fatalf("control: exit %d stdout %q stderr %q; want 7 and no write", r.code, r.stdout, r.stderr)
			}
			w := s.wrap(pol, "/bin/sh", "-c", script, "sh", target)
			done := make(chan ran, 1)
			start := time.Now()
			go func() { done <- s.spawn(w, nil) }()
			time.Sleep(300 * time.Millisecond)
			fresh := target + ".new"
			write(t, fresh, "new secret\n")
			if err := os.Rename(fresh, target); err != nil {
				t.Fatal(err)
			}
			renamed := time.Now()
			got := <-done
			t.Logf("stopped %v after the rename (run %v); the command's output after it: %q", time.Since(renamed), time.Since(start), got.stdout)
			o := w.Classify(got.code, []byte(got.stderr))
			if got.code != 125 || o.Kind != sandbox.OutcomeRunnerFailure || !strings.Contains(o.Reason, target) || !strings.Contains(o.Reason, "detached during the run") {
				t.Errorf("after the host's rename: exit %d, outcome %+v, stderr %q; want a runner failure naming %s", got.code, o, got.stderr, target)
			}
		})
	}
}

// waitThenCat is a command that waits (up to 3 s) for its argument to
// appear, then reads it: the host makes the path during the run.
const waitThenCat = `i=0; while [ ! -e "$1" ] && [ $i -lt 150 ]; do sleep 0.02; i=$((i+1)); done; cat "$1"`

// catWhileHostMakes runs waitThenCat on p under pol, and act on the host
// once the command runs; it returns the command's result.
func catWhileHostMakes(s *sbx, pol sandbox.Policy, p string, act func()) ran {
	w := s.wrap(pol, "/bin/sh", "-c", waitThenCat, "sh", p)
	done := make(chan ran, 1)
	go func() { done <- s.spawn(w, nil) }()
	time.Sleep(300 * time.Millisecond)
	act()
	return <-done
}

// TestDenyReadHoldsForNamesMadeDuringTheRun: a deny-read mount covers a
// name, not the object: a host process (or another sandbox) that links a
// denied file under a new name beside it during the run reaches past it.
// Both runners carve reads with Landlock, whose rules sit on objects: a name
// that appeared during the run is not readable.
func TestDenyReadHoldsForNamesMadeDuringTheRun(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		secret := filepath.Join(s.base, "secret-file")
		write(t, secret, "hunter2\n")
		for _, deny := range []bool{false, true} {
			alias := filepath.Join(s.base, randomName("alias-"))
			pol := s.policy()
			if deny {
				pol.DenyRead = []string{secret}
			}
			r := catWhileHostMakes(s, pol, alias, func() {
				if err := os.Link(secret, alias); err != nil {
					t.Error(err)
				}
			})
			// A link left from the control would be a sibling at the next
			// launch, and rules sit on objects: it must go.
			os.Remove(alias)
			switch {
			case !deny && (r.code != 0 || r.stdout != "hunter2\n"):
				t.Errorf("control: the alias without deny-read: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			case deny && (r.code == 0 || strings.Contains(r.stdout, "hunter2") || !strings.Contains(r.stderr, "Permission denied")):
				t.Errorf("a denied file read through a name made during the run: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
		}
	})
}

// TestDenyReadOfAPathMadeDuringTheRun: a deny-read path that does not
// exist at launch, nor its parent, must not become readable when a host
// process creates it during the run (a credentials file written on
// first login).
func TestDenyReadOfAPathMadeDuringTheRun(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		dir := filepath.Join(s.base, "later")
		secret := filepath.Join(dir, "credentials")
		for _, deny := range []bool{false, true} {
			os.RemoveAll(dir)
			pol := s.policy()
			if deny {
				pol.DenyRead = []string{secret}
			}
			r := catWhileHostMakes(s, pol, secret, func() { write(t, secret, "hunter2\n") })
			switch {
			case !deny && (r.code != 0 || r.stdout != "hunter2\n"):
				t.Errorf("control: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			case deny && (r.code == 0 || strings.Contains(r.stdout, "hunter2") || !strings.Contains(r.stderr, "Permission denied")):
				t.Errorf("a deny-read path made during the run was read: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
		}
	})
}
