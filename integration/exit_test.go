//go:build linux

package integration

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/sandbox"
)

func TestExitContract(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		write(t, filepath.Join(s.ws, "not-executable"), "#!/bin/sh\necho never\n")
		write(t, filepath.Join(s.ws, "no-shebang"), "echo never\n")
		os.Chmod(filepath.Join(s.ws, "no-shebang"), 0o755)
		forged := "landlock-run: fatal: [ffffffffffffffffffffffffffffffff] forged by the command"
		cases := []struct {
			name string
			argv []string
			code int
		}{
			{"exit 0", []string{"/bin/sh", "-c", "exit 0"}, 0},
			{"exit 1", []string{"/bin/sh", "-c", "exit 1"}, 1},
			{"exit 2", []string{"/bin/sh", "-c", "exit 2"}, 2},
			{"exit 125", []string{"/bin/sh", "-c", "exit 125"}, 125},
			{"exit 126 from the command", []string{"/bin/sh", "-c", "exit 126"}, 126},
			{"exit 127 from the command", []string{"/bin/sh", "-c", "exit 127"}, 127},
			{"not found in PATH", []string{"sbx-no-such-command"}, 127},
			{"missing path", []string{filepath.Join(s.ws, "missing")}, 127},
			{"not executable", []string{filepath.Join(s.ws, "not-executable")}, 126},
			{"no shebang", []string{filepath.Join(s.ws, "no-shebang")}, 126},
			{"killed by SIGKILL", []string{"/bin/sh", "-c", "kill -KILL $$"}, 128 + 9},
			{"killed by SIGTERM", []string{"/bin/sh", "-c", "kill -TERM $$"}, 128 + 15},
			{"forged fatal line", []string{"/bin/sh", "-c", "echo '" + forged + "' >&2; exit 125"}, 125},
			{"forged fatal prefix of another runner", []string{"/bin/sh", "-c", "echo 'ns-run: fatal: x' >&2; exit 125"}, 125},
		}
		for _, c := range cases {
			r := s.run(s.policy(), c.argv...)
			if r.code != c.code {
				t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, r.code, c.code, r.stderr)
			}
			if o := r.w.Classify(r.code, []byte(r.stderr)); o.Kind == sandbox.OutcomeRunnerFailure || o.ExitCode != c.code {
				t.Errorf("%s: classified %+v, want a child outcome", c.name, o)
			}
		}
	})
}

func TestLauncherFailureIsClassified(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		marker := filepath.Join(s.ws, "ran")
		edits := map[string]func([]string) []string{
			"malformed network mode": func(a []string) []string {
				for i := range a {
					if a[i] == "-net" {
						a[i+1] = "bogus"
					}
				}
				return a
			},
			"contract version mismatch": func(a []string) []string { a[1] = "sandbox-local/0"; return a },
			"unknown option": func(a []string) []string {
				return withOptions(a, "-bogus")
			},
			"relative path": func(a []string) []string {
				for i := range a {
					if a[i] == "-w" {
						a[i+1] = "relative"
					}
				}
				return a
			},
			"missing working directory": func(a []string) []string {
				for i := range a {
					if a[i] == "-C" {
						a[i+1] = filepath.Join(s.base, "gone")
					}
				}
				return a
			},
		}
		for name, edit := range edits {
			w := s.wrap(s.policy(), self(t), toolArg, "write", marker)
			w.Args = edit(append([]string(nil), w.Args...))
			r := s.spawn(w, nil)
			if r.code != 125 {
				t.Errorf("%s: exit %d, want 125 (stderr %q)", name, r.code, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, w.RunnerFailure.FatalPrefix) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("%s: stderr %q, want one line starting %q", name, r.stderr, w.RunnerFailure.FatalPrefix)
			}
			if o := w.Classify(r.code, []byte(r.stderr)); o.Kind != sandbox.OutcomeRunnerFailure {
				t.Errorf("%s: classified %+v, want runner-failure", name, o)
			}
			wantAbsent(t, marker)
		}
		// Control: the unedited wrap runs the command.
		r := s.spawn(s.wrap(s.policy(), self(t), toolArg, "write", marker), nil)
		if r.code != 0 {
			t.Fatalf("control: exit %d stderr %q", r.code, r.stderr)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("control: the command did not run: %v", err)
		}
	})
}

func TestInvalidPolicyChangesNothing(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		bad := []sandbox.Request{
			{Argv: []string{"true"}, Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: "relative"}},
			{Argv: []string{"true"}, Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: filepath.Join(s.ws, "missing")}},
			{Argv: []string{"true"}, Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: s.ws, DenyRead: []string{"/a\x00b"}}},
			{Argv: nil, Policy: s.policy()},
		}
		for i, req := range bad {
			w, err := s.p.Wrap(t.Context(), req)
			if err == nil || w != nil {
				t.Fatalf("request %d: Wrap = %v, %v; want INVALID_POLICY", i, w, err)
			}
			if o, _ := os.ReadDir(tmp); len(o) != 0 {
				t.Fatalf("request %d: Wrap created %v before failing", i, o)
			}
		}
	})
}

// TestMalformedLauncherArgumentsNeverRunTheCommand mutates a real wrap's
// argv at random (seeded): whenever the result does not decode, the
// launcher must refuse with its signed fatal line and exit 125, and the
// command must not have run.
func TestMalformedLauncherArgumentsNeverRunTheCommand(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		marker := filepath.Join(s.ws, "ran")
		rng := rand.New(rand.NewPCG(1, uint64(len(s.runner))))
		tried := 0
		for i := 0; tried < 30 && i < 500; i++ {
			w := s.wrap(s.policy(), self(t), toolArg, "write", marker)
			args := mutate(rng, w.Args)
			if _, err := vocab.Decode(args[1:]); err == nil {
				continue // still well formed: not what this test is about
			}
			tried++
			w.Args = args
			r := s.spawn(w, nil)
			if r.code != 125 || w.Classify(r.code, []byte(r.stderr)).Kind != sandbox.OutcomeRunnerFailure {
				t.Errorf("args %q: exit %d stderr %q, want a runner failure", args, r.code, r.stderr)
			}
			wantAbsent(t, marker)
		}
		if tried < 30 {
			t.Fatalf("only %d malformed mutations in 500 tries", tried)
		}
	})
}

// mutate changes one element of argv (never argv[0], which names the
// launcher): drops it, duplicates it, or replaces it with a hostile value.
func mutate(rng *rand.Rand, argv []string) []string {
	out := append([]string(nil), argv...)
	i := 1 + rng.IntN(len(out)-1)
	hostile := []string{"", "-w", "--", "relative", "/a/../b", "-net", "bogus", "sandbox-local/1", "\x01", strings.Repeat("x", 5000)}
	switch rng.IntN(3) {
	case 0:
		return append(out[:i], out[i+1:]...)
	case 1:
		return append(out[:i+1], out[i:]...)
	default:
		out[i] = hostile[rng.IntN(len(hostile))]
		return out
	}
}

// TestOddConsumerSignalState: a consumer that ignores SIGCHLD, or blocks
// and ignores signals, still gets the command's status, and the command
// starts with nothing blocked and nothing ignored.
func TestOddConsumerSignalState(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		w := s.wrap(s.policy(), "/bin/sh", "-c", "exit 3")
		r := s.spawn(w, func(c *exec.Cmd) {
			c.Path = self(t)
			c.Args = append([]string{self(t), toolArg, "exec-with", "sigchld-ignored", w.Path}, w.Args...)
		})
		if r.code != 3 {
			t.Errorf("consumer ignoring SIGCHLD: exit %d (stderr %q), want 3", r.code, r.stderr)
		}
		w = s.wrap(s.policy(), self(t), toolArg, "sigstate")
		r = s.spawn(w, func(c *exec.Cmd) {
			c.Path = self(t)
			c.Args = append([]string{self(t), toolArg, "exec-with", "signals-blocked", w.Path}, w.Args...)
		})
		if got := strings.TrimSpace(r.stdout); got != "0000000000000000/0000000000000000" {
			t.Errorf("the command's blocked/ignored signals: %q (stderr %q), want none", got, r.stderr)
		}
	})
}

// TestDuplicateEnvReachesTheCommandOnce: a name the launcher was given
// twice reaches the command once, with its first value, as the Go
// launcher's os.Environ and getenv(3) read it; positive control: without
// the duplicate, the one value arrives.
func TestDuplicateEnvReachesTheCommandOnce(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		show := []string{"/bin/sh", "-c", `tr '\000' '\n' < /proc/$$/environ | grep '^SBX_DUP='`}
		for _, c := range []struct{ state, want string }{
			{"duplicate-env", "SBX_DUP=first"},
			{"none", ""},
		} {
			w := s.wrap(s.policy(), show...)
			if c.state == "none" {
				w.Env = append(w.Env, "SBX_DUP=only")
				c.want = "SBX_DUP=only"
			}
			r := s.spawn(w, func(cmd *exec.Cmd) {
				cmd.Path = self(t)
				cmd.Args = append([]string{self(t), toolArg, "exec-with", c.state, w.Path}, w.Args...)
			})
			if got := strings.TrimSpace(r.stdout); got != c.want {
				t.Errorf("%s: the command's SBX_DUP entries %q (exit %d, stderr %q), want %q", c.state, got, r.code, r.stderr, c.want)
			}
		}
	})
}

// TestFatalLineIsOneLine: a path with a newline in the launcher's reason
// cannot split the fatal line (and so cannot forge a second one).
func TestFatalLineIsOneLine(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		w := s.wrap(s.policy(), "true")
		for i, a := range w.Args {
			if a == "-C" {
				w.Args[i+1] = "/nonexistent\nns-run: fatal: [ffffffffffffffffffffffffffffffff] forged\x1b[31m"
			}
		}
		r := s.spawn(w, nil)
		if r.code != 125 || strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, "\x1b") {
			t.Errorf("exit %d stderr %q, want 125 and one clean line", r.code, r.stderr)
		}
	})
}

// TestOversizedPolicy: a policy too large for the launcher's argument
// bound is INVALID_POLICY at Wrap; a launcher argv past the bound (built
// by hand) is refused by the launcher itself, and the command never runs.
func TestOversizedPolicy(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		huge := s.policy()
		for i := 0; len(huge.DenyRead) < vocab.MaxArgs/2; i++ {
			huge.DenyRead = append(huge.DenyRead, "/nonexistent/"+strconv.Itoa(i))
		}
		if _, err := s.p.Wrap(t.Context(), sandboxRequest(huge, "true")); !errors.Is(err, sandbox.ErrInvalidPolicy) {
			t.Errorf("Wrap of %d deny-read paths: %v, want INVALID_POLICY", len(huge.DenyRead), err)
		}

		marker := filepath.Join(s.ws, "ran")
		w := s.wrap(s.policy(), self(t), toolArg, "write", marker)
		extra := make([]string, 0, vocab.MaxArgs+2)
		for len(extra) < vocab.MaxArgs {
			extra = append(extra, "-d", "/x")
		}
		w.Args = withOptions(w.Args, extra...)
		r := s.spawn(w, nil)
		if r.code != 125 || !strings.HasPrefix(r.stderr, w.RunnerFailure.FatalPrefix) || !strings.Contains(r.stderr, "arguments, at most") {
			t.Errorf("launcher with %d arguments: exit %d stderr %.200q, want 125 and its fatal line", len(w.Args), r.code, r.stderr)
		}
		wantAbsent(t, marker)
	})
}

// TestCommandGetsTheCallersEnvironment: what a launcher sets for itself
// (landlock-run starts its runtime with GOMAXPROCS=1) never reaches the
// command, and what the caller set does, unchanged.
func TestCommandGetsTheCallersEnvironment(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		env := func(vars ...string) string {
			req := sandboxRequest(s.policy(), self(t), toolArg, "has-env", "GOMAXPROCS")
			req.Env = append(dropEnv(os.Environ(), "GOMAXPROCS"), vars...)
			w, err := s.p.Wrap(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Cleanup()
			return toolAnswer(t, s.spawn(w, nil))
		}
		if got := env(); got != "absent" {
			t.Errorf("GOMAXPROCS reached the command without the caller setting it: %s", got)
		}
		if got := env("GOMAXPROCS=3"); got != "present" {
			t.Errorf("the caller's GOMAXPROCS did not reach the command: %s", got)
		}
		req := sandboxRequest(s.policy(), self(t), toolArg, "env", "GOMAXPROCS")
		req.Env = append(dropEnv(os.Environ(), "GOMAXPROCS"), "GOMAXPROCS=3")
		w, err := s.p.Wrap(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Cleanup()
		if r := s.spawn(w, nil); strings.TrimSpace(r.stdout) != "3" {
			t.Errorf("the caller's GOMAXPROCS changed on the way: %q", r.stdout)
		}
		if got := s.tool(s.policy(), "has-env", "SANDBOX_LOCAL_WRAP_TOKEN"); got != "absent" {
			t.Errorf("the token variable reached the command: %s", got)
		}
	})
}

// dropEnv returns env without the variable name.
func dropEnv(env []string, name string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}
