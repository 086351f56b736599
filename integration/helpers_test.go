//go:build linux

package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// linuxRunners are the runners every case runs under: both, unless
// $SBX_RUNNERS names the ones this machine is expected to have (a container
// whose seccomp profile refuses user namespaces: SBX_RUNNERS=landlock). The
// first is the one selection must pick.
var linuxRunners = runnersUnderTest()

func runnersUnderTest() []string {
	if env := os.Getenv("SBX_RUNNERS"); env != "" {
		return strings.Split(env, ",")
	}
	return []string{"namespaces", "landlock"}
}

// traits are the documented differences between runners that the shared
// cases account for; every other outcome is the same.
type traits struct {
	// tmpOverlay: the host's /tmp is shown through a read-only overlay,
	// through which no host socket there can be connected to.
	tmpOverlay bool
	// enforcesReadOnly: read-only subpaths under a writable root hold.
	enforcesReadOnly bool
	// hidesDenied: a deny-read directory is an empty mount (listable,
	// empty) rather than a refused one.
	hidesDenied bool
	// ownNetwork: a private network namespace with loopback only.
	ownNetwork bool
	// newPTYs: the command can open new pseudo-terminals (its own devpts).
	newPTYs bool
}

var runnerTraits = map[string]traits{
	"namespaces": {tmpOverlay: true, enforcesReadOnly: true, hidesDenied: true, ownNetwork: true, newPTYs: true},
	"landlock":   {},
}

// sbx is one case's world: a base directory holding the workspace and its
// siblings, and a provider pinned to one runner.
type sbx struct {
	t      *testing.T
	runner string
	base   string
	ws     string
	p      *sandbox.Provider
}

// baseRoot holds each case's world. It is not under /tmp on purpose: the
// namespaces runner makes /tmp private, and a workspace's siblings must be
// real host paths for a denied write to mean anything.
const baseRoot = "/var/tmp"

func newSbx(t *testing.T, runner string) *sbx {
	t.Helper()
	dir, err := os.MkdirTemp(baseRoot, "sbx-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return &sbx{t: t, runner: runner, base: base, ws: ws, p: sandbox.New(sandbox.Config{Runners: []string{runner}})}
}

func (s *sbx) policy() sandbox.Policy {
	return sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: s.ws}
}

type ran struct {
	stdout, stderr string
	code           int
	w              *sandbox.Wrapped
}

// wrap wraps argv under pol, failing the test on an error.
func (s *sbx) wrap(pol sandbox.Policy, argv ...string) *sandbox.Wrapped {
	s.t.Helper()
	w, err := s.p.Wrap(context.Background(), sandbox.Request{Argv: argv, Policy: pol})
	if err != nil {
		s.t.Fatalf("Wrap(%q): %v", argv, err)
	}
	s.t.Cleanup(func() { w.Cleanup() })
	return w
}

func sandboxRequest(pol sandbox.Policy, argv ...string) sandbox.Request {
	return sandbox.Request{Argv: argv, Policy: pol}
}

// run wraps argv under pol and runs it to completion.
func (s *sbx) run(pol sandbox.Policy, argv ...string) ran {
	s.t.Helper()
	return s.spawn(s.wrap(pol, argv...), nil)
}

func (s *sbx) spawn(w *sandbox.Wrapped, edit func(*exec.Cmd)) ran {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := w.Command(ctx)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if edit != nil {
		edit(cmd)
	}
	err := cmd.Run()
	r := ran{stdout: out.String(), stderr: errb.String(), w: w, code: exitCode(cmd, err)}
	if r.code == -1 {
		s.t.Fatalf("spawn %q: %v", w.Args, err)
	}
	return r
}

// exitCode is the launcher's status, 128+N for a death by signal N, -1
// when it did not run.
func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return -1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// tool runs one tool verb inside the sandbox and returns its one-line
// answer ("ok" or an errno name).
func (s *sbx) tool(pol sandbox.Policy, verb string, args ...string) string {
	s.t.Helper()
	r := s.run(pol, append([]string{self(s.t), toolArg, verb}, args...)...)
	return toolAnswer(s.t, r)
}

func toolAnswer(t *testing.T, r ran) string {
	t.Helper()
	line := strings.TrimSpace(r.stdout)
	if strings.Contains(line, "\n") || line == "" {
		t.Fatalf("tool gave no single answer (exit %d): stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if (line == "ok") != (r.code == 0) {
		t.Fatalf("tool answer %q with exit %d (stderr %q)", line, r.code, r.stderr)
	}
	return line
}

// hostTool runs a tool verb unconfined: the positive control showing an
// attack works on this machine when nothing stops it.
func hostTool(t *testing.T, verb string, args ...string) string {
	t.Helper()
	cmd := exec.Command(self(t), append([]string{toolArg, verb}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	return toolAnswer(t, ran{stdout: out.String(), code: exitCode(cmd, err)})
}

func self(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantDenied asserts a tool answer is one of the errnos a denial may have.
func wantDenied(t *testing.T, what, got string, errnos ...string) {
	t.Helper()
	if len(errnos) == 0 {
		errnos = []string{"EACCES", "EROFS"}
	}
	for _, e := range errnos {
		if got == e {
			return
		}
	}
	t.Errorf("%s: got %q, want one of %v", what, got, errnos)
}

// wantControl asserts an unconfined positive control worked. A control
// the host itself refuses with one of refusals (a container's policy:
// Docker's seccomp profile, its read-only /proc/sys) leaves nothing to
// prove, as the sandbox's refusal could not be told from the host's: the
// test is skipped, saying so. Any other answer fails it.
func wantControl(t *testing.T, what, got string, refusals ...string) {
	t.Helper()
	for _, e := range refusals {
		if got == e {
			t.Skipf("%s: the host itself refuses it (%s), as a container's policy may: the sandbox's refusal cannot be told from the host's here", what, got)
		}
	}
	wantOK(t, what, got)
}

func wantOK(t *testing.T, what, got string) {
	t.Helper()
	if got != "ok" {
		t.Errorf("%s: got %q, want ok", what, got)
	}
}

func wantAbsent(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Errorf("%s exists after a denied write (%v)", p, err)
		os.RemoveAll(p)
	}
}

func wantContent(t *testing.T, p, want string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil || string(b) != want {
		t.Errorf("%s = %q, %v; want %q", p, b, err, want)
	}
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func randomName(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// traits are the runner's, less the /tmp overlay where the host has a
// mount below /tmp: the kernel refuses that overlay there, and the
// runner shows the host's /tmp read-only instead, its sockets the host's
// (docs/runners/namespaces.md, TestMountsBelowTmp).
func (s *sbx) traits() traits {
	tr := runnerTraits[s.runner]
	if tr.tmpOverlay && mountsBelowTmp(s.t) {
		tr.tmpOverlay = false
	}
	return tr
}

// mountsBelowTmp reports whether a mount point lies below the host's /tmp.
func mountsBelowTmp(t *testing.T) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		// The fifth field is the mount point (octal escapes aside, which
		// a path below /tmp keeps below /tmp).
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], "/tmp/") {
			return true
		}
	}
	return false
}

// forEachRunner runs a case once per Linux runner.
func forEachRunner(t *testing.T, fn func(t *testing.T, s *sbx)) {
	for _, r := range linuxRunners {
		t.Run(r, func(t *testing.T) { fn(t, newSbx(t, r)) })
	}
}

// withOptions inserts launcher options right after the launcher's name and
// contract version in a wrap's args.
func withOptions(args []string, opts ...string) []string {
	out := append(args[:2:2], opts...)
	return append(out, args[2:]...)
}
