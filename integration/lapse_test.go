//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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

// replaceRaceTries is how many times TestHostReplaceLeavesNoWrite has the
// host replace the protected file under the writers.
const replaceRaceTries = 20

// TestHostReplaceLeavesNoWrite: writers in tight loops append to a
// protected file, each by another route (an open with O_CREAT, one
// without, a reopen of an O_PATH descriptor through /proc/self/fd, a hard
// link made to it, a truncate, a rename away), while the host renames a
// new file over it, 20 times. The rename detaches the namespaces runner's
// mount on the file, and pid 1's stop comes a moment later: the guard,
// which refuses writing to a protected name whatever is mounted there,
// must have left the host's new file as the host wrote it every time,
// and the run must end with the signed runner failure. The control: the
// same writers on a file that is not protected do get their writes into
// the new file. (The landlock runner reports read-only subpaths and
// deny-read paths inside a writable root as gaps: nothing to replace.)
func TestHostReplaceLeavesNoWrite(t *testing.T) {
	if !contains(linuxRunners, "namespaces") {
		t.Skip("the namespaces runner is not under test here")
	}
	s := newSbx(t, "namespaces")
	gitRepo(t, s.ws)
	t.Run("control", func(t *testing.T) {
		target := filepath.Join(s.ws, "settings")
		r, written := replaceUnderWriters(t, s, s.policy(), target, []string{"append-creat", "append"}, 1000)
		if r.code != 0 || written == 0 {
			t.Fatalf("control: exit %d, %d writes in the new file; want exit 0 and writes (stderr %q)", r.code, written, r.stderr)
		}
	})
	env := filepath.Join(s.ws, ".env")
	denied := s.policy()
	denied.DenyRead = []string{env}
	for _, c := range []struct {
		name   string
		target string
		pol    sandbox.Policy
	}{{"read-only .git/config", filepath.Join(s.ws, ".git", "config"), s.policy()}, {"deny-read .env", env, denied}} {
		for _, m := range [][]string{{"append-creat", "append"}, {"reopen", "link", "truncate", "rename"}} {
			t.Run(c.name+"/"+strings.Join(m, "+"), func(t *testing.T) {
				leaked := 0
				for try := 0; try < replaceRaceTries; try++ {
					r, written := replaceUnderWriters(t, s, c.pol, c.target, m, 600)
					if written != 0 {
						leaked++
						t.Errorf("try %d: the writers changed the host's new %s (%d writes, exit %d)", try, c.target, written, r.code)
					}
					o := r.w.Classify(r.code, []byte(r.stderr))
					if r.code != 125 || o.Kind != sandbox.OutcomeRunnerFailure || !strings.Contains(o.Reason, c.target) ||
						!strings.Contains(o.Reason, "detached during the run") {
						t.Errorf("try %d: exit %d, outcome %+v; want the signed runner failure naming %s", try, r.code, o, c.target)
					}
				}
				t.Logf("%d of %d tries changed the host's file", leaked, replaceRaceTries)
			})
		}
	}
}

// replaceUnderWriters runs the write-race tool on target under pol, and
// once its writers run renames a new file over target on the host; it
// returns the run and how far the new file differs from what the host
// wrote: the number of lines added, or 1 for any other change (truncated,
// replaced, moved away).
func replaceUnderWriters(t *testing.T, s *sbx, pol sandbox.Policy, target string, methods []string, ms int) (ran, int) {
	t.Helper()
	// Each try starts from the file in place, and no writer's side file.
	write(t, target, "[core]\n")
	for i := range methods {
		os.Remove(fmt.Sprintf("%s.%d", target, i))
	}
	ready := filepath.Join(s.ws, randomName("ready-"))
	args := append([]string{self(t), toolArg, "write-race", target, ready, strconv.Itoa(ms)}, methods...)
	w := s.wrap(pol, args...)
	done := make(chan ran, 1)
	go func() { done <- s.spawn(w, nil) }()
	defer os.Remove(ready)
	for i := 0; i < 1000; i++ {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := os.Stat(ready); err != nil {
		r := <-done
		t.Fatalf("the writers never started: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	const content = "written by the host\n"
	fresh := target + ".new"
	write(t, fresh, content)
	var st syscall.Stat_t
	if err := syscall.Stat(fresh, &st); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fresh, target); err != nil {
		t.Fatal(err)
	}
	renamed := time.Now()
	r := <-done
	t.Logf("stopped %v after the rename", time.Since(renamed))
	var now syscall.Stat_t
	b, err := os.ReadFile(target)
	switch {
	case err != nil || syscall.Stat(target, &now) != nil || now.Ino != st.Ino:
		t.Logf("the host's new file is gone from %s: %v", target, err)
		return r, 1
	case string(b) == content:
		return r, 0
	case strings.HasPrefix(string(b), content) && strings.Trim(string(b[len(content):]), "planted\n") == "":
		return r, strings.Count(string(b[len(content):]), "\n")
	}
	t.Logf("the host's new file now holds %q", b)
	return r, 1
}

// writeRace is write-race TARGET READY MS METHOD...: one writer per
// method, each on a thread of its own, appending "planted" to TARGET for
// MS milliseconds; READY is made once they all run. It answers ok.
func writeRace(target, ready string, ms int, methods []string) string {
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	line := []byte("planted\n")
	var started, finished sync.WaitGroup
	for i, m := range methods {
		started.Add(1)
		finished.Add(1)
		go func() {
			runtime.LockOSThread()
			defer finished.Done()
			side := fmt.Sprintf("%s.%d", target, i)
			appendTo := func(p string, flags int) {
				if fd, err := unix.Open(p, unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC|flags, 0o644); err == nil {
					unix.Write(fd, line)
					unix.Close(fd)
				}
			}
			for first := true; time.Now().Before(deadline); first = false {
				switch m {
				case "append-creat":
					appendTo(target, unix.O_CREAT)
				case "append":
					appendTo(target, 0)
				case "reopen":
					if pfd, err := unix.Open(target, unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
						appendTo(fmt.Sprintf("/proc/self/fd/%d", pfd), 0)
						unix.Close(pfd)
					}
				case "link":
					if unix.Link(target, side) == nil {
						appendTo(side, 0)
						unix.Unlink(side)
					}
				case "truncate":
					unix.Truncate(target, 0)
				case "rename":
					if unix.Rename(target, side) == nil {
						appendTo(side, 0)
					}
				}
				if first {
					started.Done()
				}
			}
		}()
	}
	started.Wait()
	if err := os.WriteFile(ready, nil, 0o644); err != nil {
		return result(err)
	}
	finished.Wait()
	return "ok"
}
