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
	"sync"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

func TestHardLinkIntoTheWorkspace(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		victim := filepath.Join(s.base, "victim")
		write(t, victim, "original\n")
		// Control: unconfined, the victim can be linked into the workspace.
		ctl := filepath.Join(s.ws, "control-alias")
		wantOK(t, "control: hard-link outside the sandbox", hostTool(t, "link", victim, ctl))
		os.Remove(ctl)
		alias := filepath.Join(s.ws, "alias")
		got := s.tool(s.policy(), "link", victim, alias)
		if got == "ok" {
			// Even linked, the file must not become writable through it.
			wantDenied(t, "write through a hard link to an outside file", s.tool(s.policy(), "append", alias))
		} else {
			wantDenied(t, "hard-link an outside file into the workspace", got, "EXDEV", "EACCES", "EPERM", "EROFS")
			wantAbsent(t, alias)
		}
		wantContent(t, victim, "original\n")
	})
}

// TestNoDeviceNodes: a block device in the workspace would expose the disk.
// Only root can make one at all, so only a root run proves the denial; the
// unprivileged run checks it stays denied.
func TestNoDeviceNodes(t *testing.T) {
	control := hostTool(t, "mknod-block", filepath.Join(t.TempDir(), "disk"))
	if os.Geteuid() == 0 {
		wantOK(t, "control: root makes a device node outside the sandbox", control)
	} else {
		t.Logf("as uid %d the attack cannot start (mknod outside: %s); the root run proves the denial", os.Geteuid(), control)
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		disk := filepath.Join(s.ws, "disk")
		wantDenied(t, "mknod a block device in the workspace", s.tool(s.policy(), "mknod-block", disk), "EPERM", "EACCES")
		wantAbsent(t, disk)
	})
}

// TestProcSysReadOnly: uid 0 may write /proc/sys by mode bits alone; a
// sandboxed root must not (kernel.core_pattern runs a program as root).
func TestProcSysReadOnly(t *testing.T) {
	const knob = "/proc/sys/kernel/printk_ratelimit"
	b, err := os.ReadFile(knob)
	if err != nil {
		t.Fatalf("%s: %v", knob, err)
	}
	value := strings.TrimSpace(string(b))
	control := hostTool(t, "write-value", knob, value)
	if os.Geteuid() == 0 {
		wantControl(t, "control: root writes a sysctl (its own value back)", control, "EROFS")
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		wantDenied(t, "write a sysctl", s.tool(s.policy(), "write-value", knob, value), "EROFS", "EACCES", "EPERM")
	})
}

func TestNoDescriptorLeaks(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		outside := filepath.Join(s.base, "held-open")
		write(t, outside, "original\n")
		f, err := os.OpenFile(outside, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// Control: a child given the descriptor can write through it.
		ctl := exec.Command(self(t), toolArg, "write-fd", "3")
		ctl.ExtraFiles = []*os.File{f}
		if out, _ := ctl.Output(); strings.TrimSpace(string(out)) != "ok" {
			t.Fatalf("control: write through an inherited fd: %q", out)
		}
		write(t, outside, "original\n")
		r := s.spawn(s.wrap(s.policy(), self(t), toolArg, "write-fd", "3"), func(c *exec.Cmd) { c.ExtraFiles = []*os.File{f} })
		wantDenied(t, "write through the consumer's fd 3", toolAnswer(t, r), "EBADF")
		wantContent(t, outside, "original\n")
	})
}

func TestConcurrentSandboxesCannotCrossWrite(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		const n = 32
		ws := make([]string, n)
		for i := range ws {
			ws[i] = filepath.Join(s.base, fmt.Sprintf("ws%02d", i))
			if err := os.Mkdir(ws[i], 0o755); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		errs := make(chan string, 2*n)
		for i := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pol := s.policy()
				pol.Workspace = ws[i]
				own := filepath.Join(ws[i], "own")
				other := filepath.Join(ws[(i+1)%n], fmt.Sprintf("from%02d", i))
				w, err := s.p.Wrap(t.Context(), sandboxRequest(pol, "/bin/sh", "-c", "echo x > "+own+" && ! echo x > "+other+" 2>/dev/null"))
				if err != nil {
					errs <- err.Error()
					return
				}
				defer w.Cleanup()
				if out, err := w.Command(t.Context()).CombinedOutput(); err != nil {
					errs <- fmt.Sprintf("sandbox %d: %v %s", i, err, out)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		for i := range ws {
			wantContent(t, filepath.Join(ws[i], "own"), "x\n")
			wantAbsent(t, filepath.Join(ws[(i+1)%n], fmt.Sprintf("from%02d", i)))
		}
	})
}

func TestWritableRootThatIsASymlink(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		real := filepath.Join(s.base, "real")
		os.Mkdir(real, 0o755)
		link := filepath.Join(s.base, "link")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		pol := s.policy()
		pol.WritableRoots = []string{link}
		wantOK(t, "write through the symlinked root", s.tool(pol, "write", filepath.Join(link, "x")))
		wantContent(t, filepath.Join(real, "x"), "written by the sandbox\n")
		wantDenied(t, "write next to the root", s.tool(pol, "write", filepath.Join(s.base, "y")))
		wantAbsent(t, filepath.Join(s.base, "y"))
	})
}

// TestLauncherInsideAWritableRootIsRefused: a command that can replace the
// launcher binary runs the next command unconfined.
func TestLauncherInsideAWritableRootIsRefused(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		pol := s.policy()
		pol.WritableRoots = []string{filepath.Dir(self(t))}
		_, err := s.p.Wrap(t.Context(), sandboxRequest(pol, "true"))
		if !errors.Is(err, sandbox.ErrInvalidPolicy) || !strings.Contains(err.Error(), "launcher binary") {
			t.Fatalf("Wrap with the launcher's directory writable: %v, want INVALID_POLICY naming the launcher", err)
		}
		// Control: the same policy without that root wraps.
		if _, err := s.p.Wrap(t.Context(), sandboxRequest(s.policy(), "true")); err != nil {
			t.Fatalf("control: %v", err)
		}
	})
}

// TestTokenNeverReachesTheCommand: a command that learns the token can
// forge a runner failure and push an agent into retrying unconfined. A
// spy left running by one wrap watches every process's cmdline and
// environ while other wraps launch; none of their tokens may show.
func TestTokenNeverReachesTheCommand(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		if got := s.tool(s.policy(), "has-env", "SANDBOX_LOCAL_WRAP_TOKEN"); got != "absent" {
			t.Errorf("the command inherited the token variable: %s", got)
		}
		spy := s.wrap(s.policy(), self(t), toolArg, "watch-tokens", "1500")
		done := make(chan ran, 1)
		go func() { done <- s.spawn(spy, nil) }()
		var tokens []string
		for range 15 {
			w := s.wrap(s.policy(), "/bin/true")
			tokens = append(tokens, strings.TrimSuffix(strings.TrimPrefix(w.RunnerFailure.FatalPrefix, "ns-run: fatal: ["), "] "))
			s.spawn(w, nil)
		}
		r := <-done
		if !strings.HasPrefix(r.stdout, "seen") {
			t.Fatalf("spy: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
		for _, tok := range tokens {
			tok = strings.TrimSuffix(strings.TrimPrefix(tok, "landlock-run: fatal: ["), "] ")
			if strings.Contains(r.stdout, tok) {
				t.Errorf("the spy saw the token %s of a later wrap", tok)
			}
		}
	})
}

// TestKernelKeyringsUnreachable: a key the user holds (a Kerberos cache, a
// cached passphrase) must not be readable inside.
func TestKernelKeyringsUnreachable(t *testing.T) {
	wantControl(t, "control: the keyring answers outside", hostTool(t, "keyctl"), "EPERM")
	forEachRunner(t, func(t *testing.T, s *sbx) {
		wantDenied(t, "keyctl inside", s.tool(s.policy(), "keyctl"), "EPERM", "EACCES")
	})
}

// TestNoNewUserNamespaces: a new user namespace would give the command its
// capabilities back (inside it) and a wide kernel attack surface.
func TestNoNewUserNamespaces(t *testing.T) {
	wantControl(t, "control: unshare(CLONE_NEWUSER) works outside", hostTool(t, "unshare-user"), "EPERM")
	forEachRunner(t, func(t *testing.T, s *sbx) {
		wantDenied(t, "unshare(CLONE_NEWUSER) inside", s.tool(s.policy(), "unshare-user"), "EPERM", "EACCES", "EINVAL")
	})
}

// TestProcPathsDoNotEscape: /proc's magic links lead nowhere the policy
// does not allow: the root and cwd links of the command itself, and the
// cwd, root and open files of the consumer that spawned it.
func TestProcPathsDoNotEscape(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		victim := filepath.Join(s.base, "victim")
		write(t, victim, "original\n")
		f, err := os.OpenFile(victim, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		consumer := strconv.Itoa(os.Getpid())
		targets := map[string]string{
			"own root":            "/proc/self/root" + victim,
			"own cwd, dot-dot":    "/proc/self/cwd/../victim",
			"dot-dot from ws":     s.ws + "/../victim",
			"consumer's root":     "/proc/" + consumer + "/root" + victim,
			"consumer's open fd":  "/proc/" + consumer + "/fd/" + strconv.Itoa(int(f.Fd())),
			"consumer's cwd file": "/proc/" + consumer + "/cwd/victim",
		}
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		os.Chdir(s.base) // the consumer's cwd, outside the workspace
		defer os.Chdir(wd)
		for what, p := range targets {
			if what != "own cwd, dot-dot" && what != "dot-dot from ws" {
				// Control: the path leads to the victim when nothing stops it.
				wantOK(t, "control: read through "+what+" outside", hostTool(t, "read", strings.Replace(p, "/proc/self/", "/proc/"+consumer+"/", 1)))
			}
			wantDenied(t, "write through "+what, s.tool(s.policy(), "append", p), "EACCES", "EROFS", "ENOENT", "EPERM")
		}
		wantOK(t, "control: read through dot-dot outside", hostTool(t, "read", s.ws+"/../victim"))
		wantContent(t, victim, "original\n")
		// Control: the same links to a file inside the workspace work.
		write(t, filepath.Join(s.ws, "mine"), "")
		wantOK(t, "control: own cwd link to a workspace file", s.tool(s.policy(), "append", "/proc/self/cwd/mine"))
	})
}

// TestPlantedSymlinkCannotRetargetAWritableRoot: the agent gives some
// commands an extra writable root inside the workspace (a build cache).
// One command turns that root into a symlink to a directory outside (a
// stand-in for ~/.config). The next Wrap with the cache must not follow it
// and make that directory writable: it is INVALID_POLICY.
func TestPlantedSymlinkCannotRetargetAWritableRoot(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		cache := filepath.Join(s.ws, "cache")
		config := filepath.Join(s.base, "config")
		for _, d := range []string{cache, config} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		pol := s.policy()
		pol.WritableRoots = []string{cache}
		wantOK(t, "control: the cache is writable", s.tool(pol, "write", filepath.Join(cache, "x")))
		// An earlier command, under the workspace alone (with the cache a
		// root too, the namespaces runner would pin it: EBUSY).
		wantOK(t, "move the cache aside", s.tool(s.policy(), "rename", cache, cache+"-old"))
		wantOK(t, "plant the symlink", s.tool(s.policy(), "symlink", config, cache))

		w, err := s.p.Wrap(t.Context(), sandboxRequest(pol, self(t), toolArg, "write", filepath.Join(cache, "planted")))
		if err == nil {
			s.spawn(w, nil)
			w.Cleanup()
			t.Errorf("Wrap followed the planted symlink: %q", w.Args)
		} else if !errors.Is(err, sandbox.ErrInvalidPolicy) || !strings.Contains(err.Error(), "symlink inside the writable root") {
			t.Errorf("Wrap error %v, want INVALID_POLICY naming the planted symlink", err)
		}
		wantAbsent(t, filepath.Join(config, "planted"))
	})
}
