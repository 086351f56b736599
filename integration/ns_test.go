//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/sandbox"
)

func TestProtectedPathReplacedBySymlink(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		gitRepo(t, s.ws)
		hooks := filepath.Join(s.ws, ".git/hooks")
		decoy := filepath.Join(s.ws, "decoy")
		os.Mkdir(decoy, 0o755)
		if err := os.RemoveAll(hooks); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(decoy, hooks); err != nil {
			t.Fatal(err)
		}
		w := s.wrap(s.policy(), "true")
		found := false
		for _, g := range w.Gaps {
			found = found || strings.Contains(g.Reason, hooks) && strings.Contains(g.Reason, "symlink")
		}
		if !s.traits().enforcesReadOnly {
			return // every read-only subpath is a gap already (TestGitSurface)
		}
		if !found {
			t.Errorf("no gap says %s is a symlink: %v", hooks, w.Gaps)
		}
		wantDenied(t, "write a hook through the symlink", s.tool(s.policy(), "write", filepath.Join(hooks, "pre-commit")))
		wantAbsent(t, filepath.Join(decoy, "pre-commit"))
		wantOK(t, "control: other workspace files stay writable", s.tool(s.policy(), "write", filepath.Join(s.ws, "file")))
	})
}

func TestOwnPidNamespace(t *testing.T) {
	for _, runner := range only("namespaces") {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			pids := strings.Split(s.tool(s.policy(), "pids"), ",")
			if len(pids) == 0 || len(pids) > 4 {
				t.Errorf("/proc inside lists %v: want only the sandbox's own few processes", pids)
			}
			for _, p := range pids {
				if p == strconv.Itoa(os.Getpid()) && p != "1" && p != "2" {
					t.Errorf("the test's own pid %s is visible inside", p)
				}
			}
		})
	}
}

func TestCannotPtraceHostProcesses(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		victim := exec.Command("/bin/sleep", "60")
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { victim.Process.Kill(); victim.Wait() }()
		wantDenied(t, "ptrace a host process", s.tool(s.policy(), "ptrace", strconv.Itoa(victim.Process.Pid)), "EPERM", "ESRCH")
		wantOK(t, "control: ptrace its own child", s.tool(s.policy(), "ptrace-own"))
	})
}

func TestAbstractSocketOfTheHostUnreachable(t *testing.T) {
	name := randomName("sbx-abstract-")
	ln, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan bool, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- true
		}
	}()
	wantOK(t, "control: the host reaches its own abstract socket", hostTool(t, "connect-abstract", name))
	<-accepted
	forEachRunner(t, func(t *testing.T, s *sbx) {
		// No UNIX socket allowed: seccomp refuses the socket itself.
		wantDenied(t, "connect to a host abstract socket", s.tool(s.policy(), "connect-abstract", name), "EACCES")
		// One allowed: socket(AF_UNIX) passes seccomp, so only Landlock's
		// abstract-socket scope (landlock: EPERM) or the private network
		// namespace (namespaces: no such name there) keeps the host's out.
		d := newDaemon(t, filepath.Join(s.base, "agent.sock"), false)
		listed := s.policy()
		listed.AllowUnixSockets = []string{d.path}
		want := "EPERM"
		if s.traits().ownNetwork {
			want = "ECONNREFUSED"
		}
		wantDenied(t, "connect to a host abstract socket, UNIX sockets allowed", s.tool(listed, "connect-abstract", name), want)
		select {
		case <-accepted:
			t.Error("the host's abstract socket accepted a connection from the sandbox")
		case <-time.After(200 * time.Millisecond):
		}
	})
}

func TestOnlyLoopbackUnderNetworkDeny(t *testing.T) {
	for _, runner := range only("namespaces") {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			if got := s.tool(s.policy(), "interfaces"); got != "lo" {
				t.Errorf("interfaces inside: %q, want only lo", got)
			}
			allow := s.policy()
			allow.Network = sandbox.NetworkAllow
			if got := s.tool(allow, "interfaces"); got == "lo" || got == "" {
				t.Errorf("control: interfaces under network allow: %q, want the host's", got)
			}
		})
	}
}

// startMarked starts a wrapped shell script and waits for it to print
// "ready". In the script, SLEEPER stands for a long-lived process whose
// command line carries a unique marker (the test binary's sleep verb);
// startMarked returns the launcher, the marker and the rest of stdout.
// Marked processes still alive when the test ends are killed.
func startMarked(t *testing.T, s *sbx, script string) (*exec.Cmd, string, *bufio.Reader) {
	t.Helper()
	marker := newMarker(t)
	w := s.wrap(s.policy(), "/bin/sh", "-c", markedScript(t, script, marker))
	cmd := w.Command(t.Context())
	return cmd, marker, startReady(t, cmd)
}

// newMarker is a unique marker for a test's sleepers, which are killed
// when the test ends if the case under test left them.
func newMarker(t testing.TB) string {
	marker := randomName("sbx-bg-")
	t.Cleanup(func() { killMarked(marker) })
	return marker
}

// killMarked kills every host process whose command line holds marker.
func killMarked(marker string) {
	for _, pid := range markedAlive(marker) {
		if n, err := strconv.Atoi(pid); err == nil {
			syscall.Kill(n, syscall.SIGKILL)
		}
	}
}

// startReady starts cmd and waits for its first line of stdout, "ready",
// returning the rest of stdout.
func startReady(t testing.TB, cmd *exec.Cmd) *bufio.Reader {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("command did not get ready: %q %v", line, err)
	}
	return r
}

func markedScript(t testing.TB, script, marker string) string {
	return strings.ReplaceAll(script, "SLEEPER", self(t)+" "+toolArg+" sleep "+marker+" >/dev/null 2>&1")
}

// sleeperAlive waits for a marked sleeper to show up on the host.
func sleeperAlive(t testing.TB, marker string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		for _, pid := range markedAlive(marker) {
			if b, err := os.ReadFile("/proc/" + pid + "/cmdline"); err == nil && bytes.Contains(b, []byte("\x00sleep\x00"+marker)) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("control: the marked sleeper %s never ran", marker)
}

// markedAlive lists host processes whose command line holds marker.
func markedAlive(marker string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			found = append(found, e.Name())
		}
	}
	return found
}

func TestSignalForwarding(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		cmd, _, out := startMarked(t, s, "trap 'echo trapped; exit 7' TERM; echo ready; while :; do sleep 0.05; done")
		cmd.Process.Signal(syscall.SIGTERM)
		line, _ := out.ReadString('\n')
		cmd.Wait()
		if code := exitCode(cmd, nil); code != 7 || line != "trapped\n" {
			t.Errorf("trapped SIGTERM: exit %d, output %q; want 7, trapped", code, line)
		}

		cmd, _, _ = startMarked(t, s, "echo ready; exec sleep 300")
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if code := exitCode(cmd, nil); code != 128+15 {
			t.Errorf("untrapped SIGTERM: exit %d, want 143", code)
		}
	})
}

func TestUserNamespacesRefusedFallsBackToLandlock(t *testing.T) {
	out := hostToolRaw(t, "diagnose-without-userns")
	var d sandbox.Diagnosis
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("diagnosis %q: %v", out, err)
	}
	if d.Selected != "landlock" {
		t.Errorf("selected %q with user namespaces refused, want landlock (%+v)", d.Selected, d)
	}
	if len(d.Candidates) < 1 || d.Candidates[0].Runner != "namespaces" || d.Candidates[0].OK || !strings.Contains(d.Candidates[0].Reason, usernsRefusal) {
		t.Errorf("doctor does not say why namespaces failed: %+v", d.Candidates)
	}
	// Control: with user namespaces allowed, namespaces is selected.
	if got := sandbox.New(sandbox.Config{}).Diagnose(t.Context()).Selected; got != linuxRunners[0] {
		t.Errorf("control: selected %q, want %s", got, linuxRunners[0])
	}
}

// hostToolRaw runs a tool verb unconfined and returns its output line,
// whatever it is.
func hostToolRaw(t *testing.T, verb string, args ...string) string {
	t.Helper()
	out, err := exec.Command(self(t), append([]string{toolArg, verb}, args...)...).Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("tool %s: %v", verb, err)
	}
	return strings.TrimSpace(string(out))
}

// only returns the named runner if it is under test.
func only(runner string) []string {
	for _, r := range linuxRunners {
		if r == runner {
			return []string{r}
		}
	}
	return nil
}

// TestHostMountsMadeLaterStayOut: a mount the host makes while a sandbox
// runs (a USB drive, sshfs, an automount) must not arrive inside writable.
// Only root can make a shared mount to test with.
func TestHostMountsMadeLaterStayOut(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Logf("uid %d cannot make host mounts: the root run proves this", os.Geteuid())
		return
	}
	for _, runner := range only("namespaces") {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			shared := filepath.Join(s.base, "shared")
			os.Mkdir(shared, 0o755)
			if err := syscall.Mount("tmpfs", shared, "tmpfs", 0, "size=1m"); err == syscall.EPERM && !hasCapSysAdmin(t) {
				// Root without CAP_SYS_ADMIN (a container's root)
				// cannot make host mounts either.
				t.Logf("root without CAP_SYS_ADMIN cannot make host mounts: a root run with it proves this")
				return
			} else if err != nil {
				t.Fatal(err)
			}
			defer syscall.Unmount(shared, syscall.MNT_DETACH)
			if err := syscall.Mount("", shared, "", syscall.MS_SHARED, ""); err != nil {
				t.Fatal(err)
			}
			sub := filepath.Join(shared, "sub")
			os.Mkdir(sub, 0o755)
			cmd, _, out := startMarked(t, s, "echo ready; for i in $(seq 40); do if [ -e "+sub+"/x ]; then echo seen; echo f > "+sub+"/x/f 2>/dev/null && echo wrote; exit 0; fi; sleep 0.02; done; echo unseen")
			if err := syscall.Mount("tmpfs", sub, "tmpfs", 0, "size=1m"); err != nil {
				t.Fatal(err)
			}
			defer syscall.Unmount(sub, syscall.MNT_DETACH)
			os.Mkdir(filepath.Join(sub, "x"), 0o777)
			rest, _ := io.ReadAll(out)
			cmd.Wait()
			if string(rest) != "unseen\n" {
				t.Errorf("a host mount made during the run: sandbox said %q, want unseen", rest)
			}
			wantAbsent(t, filepath.Join(sub, "x", "f"))
		})
	}
}

// hasCapSysAdmin reports whether this process has CAP_SYS_ADMIN in its
// effective set.
func hasCapSysAdmin(t *testing.T) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if hex, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return caps&(1<<21) != 0
		}
	}
	t.Fatal("no CapEff in /proc/self/status")
	return false
}
