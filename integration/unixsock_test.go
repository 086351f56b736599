//go:build linux

package integration

import (
	"bufio"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/internal/hostinfo"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/sandbox"
)

// daemon is a host service on a pathname UNIX socket (a stand-in for
// Docker's socket, an ssh-agent, D-Bus) that records every message.
type daemon struct {
	path string
	mu   sync.Mutex
	got  []string
}

// newDaemon listens on path: a stream socket, or a datagram one.
func newDaemon(t *testing.T, path string, datagram bool) *daemon {
	t.Helper()
	d := &daemon{path: path}
	if datagram {
		pc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close(); os.Remove(path) })
		go func() {
			buf := make([]byte, 256)
			for {
				n, _, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				d.record(string(buf[:n]))
			}
		}()
	} else {
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					c.SetReadDeadline(time.Now().Add(10 * time.Second))
					line, _ := bufio.NewReader(c).ReadString('\n')
					d.record(line)
				}()
			}
		}()
	}
	// The unprivileged suite's sandboxed user is the daemon's user, as with
	// a user's own agent; world-writable so root and that user both reach it.
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *daemon) record(m string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, strings.TrimSuffix(m, "\n"))
}

// received waits up to five seconds for msg, after a client reported
// that it sent it.
func (d *daemon) received(msg string) bool { return d.within(msg, 5*time.Second) }

// never reports whether msg is still absent a moment after a client
// reported a refusal (nothing was sent, so nothing can be in flight).
func (d *daemon) never(msg string) bool { return !d.within(msg, 300*time.Millisecond) }

func (d *daemon) within(msg string, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		d.mu.Lock()
		for _, m := range d.got {
			if m == msg {
				d.mu.Unlock()
				return true
			}
		}
		d.mu.Unlock()
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hostSocketDir is a directory outside the case's base dir (which the
// workspace shares), readable by every user: on the host's /tmp when
// inHostTmp (which the namespaces runner shows through an overlay).
func hostSocketDir(t *testing.T, s *sbx, inHostTmp bool) string {
	t.Helper()
	if !inHostTmp {
		return s.base
	}
	dir, err := os.MkdirTemp("/tmp", "sbx-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHostUnixSocketsUnreachableUnderDeny: under network deny, with no
// socket allowed, a host daemon's socket cannot even be created against,
// and the daemon receives nothing; the same send works unconfined and
// under network allow.
func TestHostUnixSocketsUnreachableUnderDeny(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		d := newDaemon(t, filepath.Join(s.base, "docker.sock"), false)
		dg := newDaemon(t, filepath.Join(s.base, "journal.sock"), true)

		wantOK(t, "control: connect unconfined", hostTool(t, "connect-unix", d.path, "host"))
		if !d.received("host") {
			t.Fatal("control: the daemon got nothing from an unconfined client")
		}
		wantDenied(t, "connect under deny", s.tool(s.policy(), "connect-unix", d.path, "deny"), "EACCES", "EPERM")
		wantDenied(t, "datagram under deny", s.tool(s.policy(), "send-unix-dgram", dg.path, "deny"), "EACCES", "EPERM")
		if !d.never("deny") || !dg.never("deny") {
			t.Error("a host daemon received a message from a network-deny sandbox")
		}
		allow := s.policy()
		allow.Network = sandbox.NetworkAllow
		wantOK(t, "connect under allow", s.tool(allow, "connect-unix", d.path, "allow"))
		if !d.received("allow") {
			t.Error("control: nothing arrived under network allow")
		}
	})
}

// TestAllowedUnixSocketIsReachable: a socket the policy lists is reachable
// under network deny, stream and datagram, and also where the namespaces
// runner shows the host's /tmp through an overlay (which no socket can be
// connected through: the launcher binds each allowed socket in).
func TestAllowedUnixSocketIsReachable(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		for _, inTmp := range []bool{false, true} {
			dir := hostSocketDir(t, s, inTmp)
			d := newDaemon(t, filepath.Join(dir, "agent.sock"), false)
			dg := newDaemon(t, filepath.Join(dir, "log.sock"), true)
			pol := s.policy()
			pol.AllowUnixSockets = []string{d.path, dg.path}
			wantOK(t, "connect to an allowed socket in "+dir, s.tool(pol, "connect-unix", d.path, "allowed"))
			wantOK(t, "datagram to an allowed socket in "+dir, s.tool(pol, "send-unix-dgram", dg.path, "allowed"))
			if !d.received("allowed") || !dg.received("allowed") {
				t.Errorf("%s: an allowed daemon got nothing (stream %v, datagram %v)", dir, d.got, dg.got)
			}
		}
	})
}

// TestUnixSocketAllowListIsExactOrReported: with one socket allowed,
// another host socket is refused where the kernel's Landlock confines
// UNIX sockets by path (ABI 9); on an older kernel the wrap says, in its
// gaps, that it is reachable, and it is; RequireFull then refuses the wrap,
// and the launcher refuses a spec that requires full enforcement.
func TestUnixSocketAllowListIsExactOrReported(t *testing.T) {
	abi := hostinfo.LandlockABI()
	forEachRunner(t, func(t *testing.T, s *sbx) {
		allowed := newDaemon(t, filepath.Join(s.base, "agent.sock"), false)
		other := newDaemon(t, filepath.Join(s.base, "docker.sock"), false)
		pol := s.policy()
		pol.AllowUnixSockets = []string{allowed.path}

		w := s.wrap(pol, self(t), toolArg, "connect-unix", other.path, "other")
		var gap string
		for _, g := range w.Gaps {
			if strings.Contains(g.Reason, "UNIX sockets cannot be confined by path") {
				gap = g.Reason
			}
		}
		got := toolAnswer(t, s.spawn(w, nil))
		if abi >= vocab.ABIResolveUnix {
			if gap != "" {
				t.Errorf("ABI %d: gap %q reported, but the kernel confines UNIX sockets by path", abi, gap)
			}
			wantDenied(t, "connect to a socket not allowed", got, "EACCES")
			if !other.never("other") {
				t.Error("a socket not allowed received a message")
			}
			return
		}
		// This kernel cannot confine it: the report must say so, truly.
		if gap == "" || !strings.Contains(gap, allowed.path) || w.Enforcement != sandbox.Partial {
			t.Fatalf("ABI %d: enforcement %s, gaps %v; want partial with the UNIX socket gap naming %s", abi, w.Enforcement, w.Gaps, allowed.path)
		}
		wantOK(t, "the reported gap is real: another socket is reachable", got)
		if !other.received("other") {
			t.Error("the gap says another socket is reachable, but nothing arrived")
		}

		full := pol
		full.RequireFull = true
		if _, err := s.p.Wrap(t.Context(), sandboxRequest(full, "true")); !errors.Is(err, sandbox.ErrUnavailable) {
			t.Errorf("RequireFull with an unconfinable UNIX socket list: Wrap err %v, want SANDBOX_UNAVAILABLE", err)
		}
		// The launcher holds the line by itself: the same wrap with -full.
		marker := filepath.Join(s.ws, "ran")
		w = s.wrap(pol, self(t), toolArg, "write", marker)
		w.Args = withOptions(w.Args, "-full")
		r := s.spawn(w, nil)
		if r.code != 125 || !strings.HasPrefix(r.stderr, w.RunnerFailure.FatalPrefix) || !strings.Contains(r.stderr, "UNIX socket") {
			t.Errorf("launcher with -full: exit %d stderr %q, want 125 and a fatal line about UNIX sockets", r.code, r.stderr)
		}
		wantAbsent(t, marker)
		// Control: where nothing else is partial, -full alone runs the
		// command, so the refusal above was the UNIX sockets'.
		w = s.wrap(s.policy(), self(t), toolArg, "write", marker)
		if len(w.Gaps) == 0 {
			w.Args = withOptions(w.Args, "-full")
			if r := s.spawn(w, nil); r.code != 0 {
				t.Errorf("control: -full without UNIX sockets: exit %d stderr %q", r.code, r.stderr)
			}
			wantContent(t, marker, "written by the sandbox\n")
		}
	})
}

// TestAllowedSocketSwappedForASecret: an allowed socket inside the
// workspace is replaced, between Wrap and launch, by a symlink to a
// deny-read file. The launcher must not bind or grant its way to the
// secret: only a socket is ever bound in.
func TestAllowedSocketSwappedForASecret(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		secret := filepath.Join(s.base, "id_ed25519")
		write(t, secret, "PRIVATE KEY")
		sock := filepath.Join(s.ws, "agent.sock")
		newDaemon(t, sock, false)
		wantOK(t, "control: the secret reads unconfined", hostTool(t, "read-secret", secret, "PRIVATE KEY"))

		pol := s.policy()
		pol.DenyRead = []string{secret}
		pol.AllowUnixSockets = []string{sock}
		w := s.wrap(pol, self(t), toolArg, "read-secret", sock, "PRIVATE KEY")
		if err := os.Remove(sock); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secret, sock); err != nil {
			t.Fatal(err)
		}
		got := toolAnswer(t, s.spawn(w, nil))
		if got == "ok" {
			t.Fatal("the secret was read through the swapped socket path")
		}
		if got != "hidden" {
			wantDenied(t, "read the secret through the swapped path", got, "EACCES", "ENOENT")
		}
	})
}
