//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/sandbox"
)

// cli runs sandbox-run with args in dir and returns stdout, stderr, exit.
func cli(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(helperBinary(t, "sandbox-run"), args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := exitCode(cmd, err)
	if code == -1 {
		t.Fatalf("sandbox-run %q: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func TestCLI(t *testing.T) {
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			escape := filepath.Join(s.base, "escape")
			out, errs, code := cli(t, s.ws, "--runner", runner, "--", "/bin/sh", "-c", "echo hi > inside; cat inside; echo x > "+escape+"; exit 3")
			if code != 3 || out != "hi\n" || !strings.Contains(errs, escape) {
				t.Errorf("run: exit %d stdout %q stderr %q; want 3, hi, a refusal naming %s", code, out, errs, escape)
			}
			wantAbsent(t, escape)
			wantContent(t, filepath.Join(s.ws, "inside"), "hi\n")

			if _, _, code := cli(t, s.ws, "--runner", runner, "--mode", sandbox.ReadOnly.String(), "--", "/bin/sh", "-c", "echo x > inside2"); code == 0 {
				t.Error("read-only mode: a write in the workspace succeeded")
			}
			wantAbsent(t, filepath.Join(s.ws, "inside2"))

			report := filepath.Join(s.base, "report.json")
			_, _, code = cli(t, s.ws, "--runner", runner, "--json-report", report, "--", "/bin/sh", "-c", "exit 125")
			var rep struct {
				Runner  string           `json:"runner"`
				Outcome sandbox.Outcome  `json:"outcome"`
				Policy  sandbox.Policy   `json:"policy"`
				Wrap    *sandbox.Wrapped `json:"wrap"`
			}
			b, err := os.ReadFile(report)
			if err != nil || json.Unmarshal(b, &rep) != nil {
				t.Fatalf("report %s: %v %s", report, err, b)
			}
			// The summary first and short; the launch only when asked for.
			if code != 125 || rep.Outcome.Kind != sandbox.OutcomeChild || rep.Outcome.ExitCode != 125 || rep.Runner != runner ||
				rep.Policy.Workspace != s.ws || rep.Wrap != nil || len(b) > 4096 || !strings.HasPrefix(string(b), "{\n  \"runner\": ") {
				t.Errorf("report: exit %d, %d bytes: %s", code, len(b), b)
			}
			cli(t, s.ws, "--runner", runner, "--json-report", report, "--report-launch", "--", "true")
			rep.Wrap = nil
			if b, err := os.ReadFile(report); err != nil || json.Unmarshal(b, &rep) != nil || rep.Wrap == nil || rep.Wrap.Runner != runner || len(rep.Wrap.Args) == 0 {
				t.Errorf("--report-launch: %v %s", err, b)
			}
		})
	}
}

func TestCLIFailsClosed(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	cases := map[string][]string{
		"unknown runner":     {"--runner", "bogus", "--", "/bin/sh", "-c", "touch " + marker},
		"missing workspace":  {"--workspace", filepath.Join(ws, "nope"), "--", "/bin/sh", "-c", "touch " + marker},
		"bad mode":           {"--mode", "everything", "--", "/bin/sh", "-c", "touch " + marker},
		"bad network":        {"--network", "some", "--", "/bin/sh", "-c", "touch " + marker},
		"no command":         {"--"},
		"unknown flag":       {"--frobnicate", "--", "/bin/sh", "-c", "touch " + marker},
		"a URL as a domain":  {"--allow-domain", "https://example.com/x", "--", "/bin/sh", "-c", "touch " + marker},
		"require-full, .git": {"--runner", "landlock", "--require-full", "--", "/bin/sh", "-c", "touch " + marker},
	}
	gitRepo(t, ws)
	for name, args := range cases {
		_, errs, code := cli(t, ws, args...)
		if code != 125 {
			t.Errorf("%s: exit %d, want 125 (stderr %q)", name, code, errs)
		}
		if !strings.HasPrefix(errs, "sandbox-run: SANDBOX_UNAVAILABLE: ") && !strings.HasPrefix(errs, "sandbox-run: INVALID_POLICY: ") ||
			strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: stderr %q, want one sandbox-run: CODE: line", name, errs)
		}
		wantAbsent(t, marker)
	}
	// Each says what to do in that one line.
	for name, want := range map[string]string{
		"unknown flag":      "INVALID_POLICY: unknown flag --frobnicate (sandbox-run --help lists the flags)",
		"a URL as a domain": `not a https URL: give "example.com"`,
	} {
		if _, errs, _ := cli(t, ws, cases[name]...); !strings.Contains(errs, want) {
			t.Errorf("%s: stderr %q, want it to say %q", name, errs, want)
		}
	}
	// No arguments at all: the usage, not the help's every flag.
	if _, errs, code := cli(t, ws); code != 125 || !strings.HasPrefix(errs, "usage: sandbox-run ") || strings.Count(errs, "\n") > 5 {
		t.Errorf("no arguments: exit %d stderr %q, want 125 and the short usage", code, errs)
	}
}

func TestCLIDoctor(t *testing.T) {
	out, _, code := cli(t, t.TempDir(), "doctor", "--json")
	var d sandbox.Diagnosis
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != 0 {
		t.Fatalf("doctor --json: exit %d, %q: %v", code, out, err)
	}
	if d.Selected != linuxRunners[0] || d.Host.LandlockABI < 1 || len(d.Candidates) != 2 {
		t.Errorf("doctor: %+v", d)
	}
	// It says how complete the default policy is here, with the same
	// verdict a wrap of it gets.
	var dp struct {
		DefaultPolicy struct {
			Runner      string              `json:"runner"`
			Enforcement sandbox.Enforcement `json:"enforcement"`
		} `json:"default_policy"`
	}
	want := sandbox.Full // landlock has standing gaps (no pid or IPC namespace)
	if d.Selected == sandbox.RunnerLandlock {
		want = sandbox.Partial
	}
	if err := json.Unmarshal([]byte(out), &dp); err != nil || dp.DefaultPolicy.Runner != d.Selected || dp.DefaultPolicy.Enforcement != want {
		t.Errorf("doctor --json default_policy: %+v (%v); want %s, %s", dp.DefaultPolicy, err, d.Selected, want)
	}
	text, _, _ := cli(t, t.TempDir(), "doctor")
	for _, want := range []string{"landlock abi", "runner namespaces", "runner landlock", "default policy"} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor text lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(text), " "), "selected "+linuxRunners[0]) {
		t.Errorf("doctor text does not say %s is selected:\n%s", linuxRunners[0], text)
	}
}

// TestCLIAllowUnixSocket: --allow-unix-socket opens exactly the named
// socket under network deny; without it the same connect is refused.
func TestCLIAllowUnixSocket(t *testing.T) {
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			d := newDaemon(t, filepath.Join(s.base, "agent.sock"), false)
			out, errs, code := cli(t, s.ws, "--runner", runner, "--", self(t), toolArg, "connect-unix", d.path, "refused")
			if code != 1 || (out != "EACCES\n" && out != "EPERM\n") {
				t.Errorf("without the flag: exit %d stdout %q stderr %q; want 1 and a refusal", code, out, errs)
			}
			out, errs, code = cli(t, s.ws, "--runner", runner, "--allow-unix-socket", d.path, "--", self(t), toolArg, "connect-unix", d.path, "via-cli")
			if code != 0 || out != "ok\n" || !d.received("via-cli") {
				t.Errorf("with the flag: exit %d stdout %q stderr %q; want 0, ok and the message delivered", code, out, errs)
			}
			if !d.never("refused") {
				t.Error("the refused connect reached the daemon")
			}
		})
	}
}

// TestDeathBySignalIsMirrored: a command killed by signal N makes the
// launcher die of N (not exit 128+N), and the CLI too, as the command run
// bare would; a command that exits 128+N itself is an exit, not a death.
func TestDeathBySignalIsMirrored(t *testing.T) {
	cases := []struct {
		name   string
		script string
		sig    syscall.Signal // 0: an exit
		code   int
	}{
		{"SIGTERM", "kill -TERM $$", syscall.SIGTERM, 0},
		{"SIGQUIT, which dumps core", "kill -QUIT $$", syscall.SIGQUIT, 0},
		{"SIGKILL", "kill -KILL $$", syscall.SIGKILL, 0},
		{"exit 143", "exit 143", 0, 143},
	}
	status := func(cmd *exec.Cmd) (syscall.Signal, int) {
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			return ws.Signal(), 0
		}
		return 0, ws.ExitStatus()
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bare := exec.Command("/bin/sh", "-c", c.script)
			bare.Run()
			if sig, code := status(bare); sig != c.sig || code != c.code {
				t.Fatalf("control: run bare, signal %v exit %d; want %v %d", sig, code, c.sig, c.code)
			}
			forEachRunner(t, func(t *testing.T, s *sbx) {
				var launcher *exec.Cmd
				r := s.spawn(s.wrap(s.policy(), "/bin/sh", "-c", c.script), func(cmd *exec.Cmd) { launcher = cmd })
				if sig, code := status(launcher); sig != c.sig || code != c.code {
					t.Errorf("launcher: signal %v exit %d; want %v %d (stderr %q)", sig, code, c.sig, c.code, r.stderr)
				}
				cli := exec.Command(helperBinary(t, "sandbox-run"), "--runner", s.runner, "--", "/bin/sh", "-c", c.script)
				cli.Dir = s.ws
				out, _ := cli.CombinedOutput()
				if sig, code := status(cli); sig != c.sig || code != c.code {
					t.Errorf("CLI: signal %v exit %d; want %v %d (output %q)", sig, code, c.sig, c.code, out)
				}
			})
		})
	}
}

// TestCLITellsWhatItDid: --help lists every flag with its default,
// --version names the launcher contract, a partial wrap earns one notice
// line on stderr naming its gaps (and --quiet silences it), a full one
// none; --read-only keeps a path of the workspace read-only.
func TestCLITellsWhatItDid(t *testing.T) {
	dir := t.TempDir()
	help, _, code := cli(t, dir, "--help") // asked for: on stdout
	if code != 0 {
		t.Errorf("--help: exit %d", code)
	}
	for _, f := range []string{"mode", "workspace", "allow-write", "read-only", "deny-read", "network", "allow-unix-socket", "runner",
		"require-full", "json-report", "keep-env", "unsetenv", "setenv", "clearenv", "minimal-env", "quiet", "kill-after"} {
		if !strings.Contains(help, "  --"+f+" ") && !strings.Contains(help, "  --"+f+"\n") {
			t.Errorf("--help does not list --%s:\n%s", f, help)
		}
	}
	for _, d := range []string{`(default "workspace-write")`, `(default "deny")`, `(default "auto")`, `(default 10s)`} {
		if !strings.Contains(help, d) {
			t.Errorf("--help does not say %s", d)
		}
	}
	if out, _, code := cli(t, dir, "--version"); code != 0 || !strings.HasPrefix(out, "sandbox-run ") || !strings.Contains(out, vocab.Version) {
		t.Errorf("--version: exit %d %q", code, out)
	}
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			sub := filepath.Join(s.ws, "keep")
			write(t, filepath.Join(sub, "f"), "x\n")
			report := filepath.Join(s.base, "report.json")
			_, errs, code := cli(t, s.ws, "--runner", runner, "--json-report", report, "--read-only", "keep", "--", "/bin/sh", "-c", "echo y > keep/f")
			notice := strings.Contains(errs, "sandbox-run: notice: partial enforcement ("+runner+"): ")
			if s.traits().enforcesReadOnly {
				// Full here: no notice, and the write is refused.
				if code == 0 || notice {
					t.Errorf("--read-only keep: exit %d stderr %q; want a refused write and no notice", code, errs)
				}
				wantContent(t, filepath.Join(sub, "f"), "x\n")
			} else {
				// One short line, and the report names the gap.
				rep, _ := os.ReadFile(report)
				if !notice || strings.Count(errs, "sandbox-run: notice") != 1 || len(strings.SplitN(errs, "\n", 2)[0]) > 200 ||
					!strings.Contains(string(rep), "read-only subpath") {
					t.Errorf("--read-only keep under %s: stderr %q, report %q; want one partial notice line of at most 200 bytes, and the report naming the read-only subpath", runner, errs, rep)
				}
			}
			// Control: without --read-only the write goes through.
			if _, errs, code := cli(t, s.ws, "--runner", runner, "--", "/bin/sh", "-c", "echo y > keep/f"); code != 0 {
				t.Errorf("control: exit %d stderr %q", code, errs)
			}
			wantContent(t, filepath.Join(sub, "f"), "y\n")
			_, errs, _ = cli(t, s.ws, "--runner", runner, "--quiet", "--read-only", "keep", "--", "true")
			if strings.Contains(errs, "sandbox-run: notice") {
				t.Errorf("--quiet: stderr %q", errs)
			}
		})
	}
}

// TestCLINamesTheSandboxOnADenial: a command that fails after a refusal
// gets a note from sandbox-run on stderr that names the sandbox, the
// runner and what it allows; stdout and stderr that are one pipe (2>&1)
// keep their order through the CLI. No note under --quiet, for a failure
// that shows no denial, or for a command that got past its refusal and
// succeeded (the controls).
func TestCLINamesTheSandboxOnADenial(t *testing.T) {
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			escape := filepath.Join(s.base, "escape")
			script := "echo a; echo b >&2; echo c; echo x > " + escape
			combined := func(args ...string) (string, int) {
				cmd := exec.Command(helperBinary(t, "sandbox-run"), args...)
				cmd.Dir = s.ws
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out // one pipe for both
				err := cmd.Run()
				return out.String(), exitCode(cmd, err)
			}
			out, code := combined("--runner", runner, "--", "/bin/sh", "-c", script)
			var lines []string // the partial notice before the run is not the case
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if !strings.HasPrefix(l, "sandbox-run: notice: ") {
					lines = append(lines, l)
				}
			}
			if code == 0 || len(lines) != 5 || lines[0] != "a" || lines[1] != "b" || lines[2] != "c" || !strings.Contains(lines[3], escape) {
				t.Fatalf("exit %d, output %q: want a, b, c in order, the refusal, then the note", code, out)
			}
			note := lines[4]
			for _, want := range []string{"sandbox-run: refused write " + escape + ": outside the writable roots", s.ws, "$TMPDIR", "--allow-write " + s.base} {
				if !strings.Contains(note, want) {
					t.Errorf("the note %q does not say %q", note, want)
				}
			}
			wantAbsent(t, escape)
			// A denial whose object the output does not name gets the
			// general note: what the sandbox allows.
			_, errs, _ := cli(t, s.ws, "--runner", runner, "--", "/bin/sh", "-c", "echo 'x: Permission denied' >&2; exit 1")
			for _, want := range []string{"sandbox-run: note: ", "the sandbox (runner " + runner + ") may have refused it", s.ws, "$TMPDIR", "reach no network", "--allow-write DIR"} {
				if !strings.Contains(errs, want) {
					t.Errorf("the general note %q does not say %q", errs, want)
				}
			}

			if out, _ := combined("--quiet", "--runner", runner, "--", "/bin/sh", "-c", script); strings.Contains(out, "sandbox-run:") {
				t.Errorf("--quiet: %q", out)
			}
			if _, errs, code := cli(t, s.ws, "--runner", runner, "--", "/bin/sh", "-c", "echo failed >&2; exit 3"); code != 3 || !strings.HasSuffix(errs, "failed\n") || strings.Contains(errs, "sandbox-run: note") {
				t.Errorf("control, a failure without a denial: exit %d, stderr %q", code, errs)
			}
			// A refusal the command got past is still named (the run
			// succeeded without what it tried), but draws no general note.
			if _, errs, code := cli(t, s.ws, "--runner", runner, "--", "/bin/sh", "-c", "echo x > "+escape+"; true"); code != 0 || strings.Contains(errs, "sandbox-run: note") || !strings.Contains(errs, "sandbox-run: refused write "+escape) {
				t.Errorf("control, a refusal the command got past: exit %d, stderr %q", code, errs)
			}
		})
	}
}

// TestCLIFailureCannotBeForged: a command that prints a line in
// sandbox-run's own failure form and exits 125 passed for "the sandbox is
// unavailable, run the command without it". The CLI's last
// line then says the command ran and exited 125 itself, even with
// --quiet. The control: a real failure before the command (landlock with
// --require-full in a repository) has no such note, and never ran it.
func TestCLIFailureCannotBeForged(t *testing.T) {
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			ws := t.TempDir()
			marker := filepath.Join(ws, "ran-inside")
			forged := "sandbox-run: SANDBOX_UNAVAILABLE: " + runner + ": user namespaces are disabled; run the command without the sandbox"
			_, errs, code := cli(t, ws, "--quiet", "--runner", runner, "--", "/bin/sh", "-c", "touch "+marker+"; echo '"+forged+"' >&2; exit 125")
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			if code != 125 || !strings.Contains(errs, forged) || !strings.HasPrefix(lines[len(lines)-1], "sandbox-run: note: the command ran inside the sandbox and exited 125 itself") {
				t.Errorf("forged failure: exit %d, stderr %q; want 125 and the CLI's note last", code, errs)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("control: the command did not run: %v", err)
			}
		})
	}
	ws := t.TempDir()
	gitRepo(t, ws)
	marker := filepath.Join(ws, "ran")
	_, errs, code := cli(t, ws, "--runner", "landlock", "--require-full", "--", "/bin/sh", "-c", "touch "+marker)
	if code != 125 || !strings.HasPrefix(errs, "sandbox-run: SANDBOX_UNAVAILABLE: ") || strings.Contains(errs, "exited 125 itself") {
		t.Errorf("a real failure: exit %d, stderr %q", code, errs)
	}
	wantAbsent(t, marker)
}

// TestCLIExecFailuresNameTheCLI: a command that cannot be found or run is
// told under the CLI's name, never a launcher's internal one (the exit
// statuses are env(1)'s); the control, a command that exists, runs.
func TestCLIExecFailuresNameTheCLI(t *testing.T) {
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			write(t, filepath.Join(s.ws, "noexec"), "#!/bin/sh\n")
			for _, c := range []struct {
				cmd, want string
				code      int
			}{
				{"no-such-command-x", "sandbox-run: no-such-command-x: command not found\n", 127},
				{"/no/such/path", "sandbox-run: /no/such/path: No such file or directory\n", 127},
				{"./noexec", "sandbox-run: ./noexec: Permission denied\n", 126},
			} {
				if _, errs, code := cli(t, s.ws, "--runner", runner, "--quiet", "--", c.cmd); code != c.code || errs != c.want {
					t.Errorf("%s: exit %d stderr %q, want %d and %q", c.cmd, code, errs, c.code, c.want)
				}
			}
			if out, errs, code := cli(t, s.ws, "--runner", runner, "--quiet", "--", "sh", "-c", "echo ran"); code != 0 || out != "ran\n" {
				t.Errorf("control: exit %d stdout %q stderr %q", code, out, errs)
			}
		})
	}
}

// TestCLIPolicyFile: --policy reads the policy the report and
// --print-policy write; a flag given as well replaces its field (the
// control: the read the file denies works once --deny-read replaces the
// list); an unknown field is INVALID_POLICY naming it, and nothing runs.
func TestCLIPolicyFile(t *testing.T) {
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			secret := filepath.Join(s.base, "secret")
			write(t, secret, "s\n")
			file := filepath.Join(s.base, "policy.json")
			write(t, file, `{"mode": "workspace-write", "workspace": "`+s.ws+`", "deny_read": ["`+secret+`"]}`)
			out, errs, code := cli(t, s.base, "--runner", runner, "--policy", file, "--", "cat", secret)
			if code == 0 || out != "" || !strings.Contains(errs, "sandbox-run: refused read "+secret) {
				t.Errorf("the file's deny_read: exit %d stdout %q stderr %q", code, out, errs)
			}
			if out, errs, code := cli(t, s.base, "--runner", runner, "--policy", file, "--deny-read", filepath.Join(s.base, "other"), "--", "cat", secret); code != 0 || out != "s\n" {
				t.Errorf("a flag replacing the field: exit %d stdout %q stderr %q", code, out, errs)
			}
			printed, _, code := cli(t, s.base, "--policy", file, "--print-policy")
			again, _, code2 := cli(t, s.base, "--policy", writeFile(t, filepath.Join(s.base, "printed.json"), printed), "--print-policy")
			if code != 0 || code2 != 0 || printed != again || !strings.Contains(printed, `"deny_read": [`) {
				t.Errorf("--print-policy does not read back the same: %q then %q", printed, again)
			}
			marker := filepath.Join(s.ws, "ran")
			// A policy file the command could have written (in the
			// workspace) is refused, and nothing runs; the same file
			// outside is the control above.
			planted := writeFile(t, filepath.Join(s.ws, ".sandbox-policy.json"), `{"mode": "workspace-write", "workspace": "`+s.ws+`", "allow_read": ["/"]}`)
			if _, errs, code := cli(t, s.ws, "--runner", runner, "--policy", planted, "--", "touch", marker); code != 125 || !strings.Contains(errs, "INVALID_POLICY: --policy "+planted+" lies in "+s.ws+", which the command may write") {
				t.Errorf("a policy file in the workspace: exit %d stderr %q", code, errs)
			}
			wantAbsent(t, marker)
			// --print-policy validates what it prints.
			if out, errs, code := cli(t, s.base, "--mode", "none", "--print-policy"); code != 125 || out != "" || !strings.Contains(errs, "INVALID_POLICY") {
				t.Errorf("--print-policy of an invalid mode: exit %d stdout %q stderr %q", code, out, errs)
			}
			bad := writeFile(t, filepath.Join(s.base, "bad.json"), `{"mode": "workspace-write", "workspace": "`+s.ws+`", "writable_root": ["/"]}`)
			if _, errs, code := cli(t, s.ws, "--runner", runner, "--policy", bad, "--", "touch", marker); code != 125 || !strings.Contains(errs, `INVALID_POLICY: --policy `+bad+`: unknown field "writable_root"`) {
				t.Errorf("unknown field: exit %d stderr %q", code, errs)
			}
			wantAbsent(t, marker)
		})
	}
}

// writeFile writes content to p and returns p.
func writeFile(t *testing.T, p, content string) string {
	t.Helper()
	write(t, p, content)
	return p
}

// TestCLINamesARunnerFailure: a runner that fails at launch ends with the
// launcher's signed fatal line, then a line in the CLI's own name, exit
// 125, and the command not run. The failure: in a user namespace of its
// own whose max_user_namespaces is 1, a process already holds the one
// nested user namespace allowed, so the check at Wrap passes and ns-run's
// unshare fails (ENOSPC). The same run with the limit at 100 runs the
// command and prints neither (the control).
func TestCLINamesARunnerFailure(t *testing.T) {
	if !slices.Contains(linuxRunners, sandbox.RunnerNamespaces) {
		t.Skip("the namespaces runner is not under test in this run (SBX_RUNNERS)")
	}
	s := newSbx(t, sandbox.RunnerNamespaces)
	marker := filepath.Join(s.ws, "ran")
	for _, limit := range []string{"100", "1"} {
		os.Remove(marker)
		// The holder lives 5 s, past the launch, and its namespace is
		// made before sandbox-run starts.
		script := `echo ` + limit + ` > /proc/sys/user/max_user_namespaces || exit 99
unshare -U sleep 5 >/dev/null 2>&1 </dev/null & while [ "$(readlink /proc/$!/ns/user)" = "$(readlink /proc/self/ns/user)" ]; do :; done
exec "$0" "$@"`
		cmd := exec.Command("unshare", "-Ur", "sh", "-c", script, helperBinary(t, "sandbox-run"),
			"--runner", sandbox.RunnerNamespaces, "--workspace", s.ws, "--", "/bin/sh", "-c", "touch "+marker)
		cmd.Dir = s.ws
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		code, errs := exitCode(cmd, err), errb.String()
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if limit != "1" {
			if code != 0 || strings.Contains(errs, "fatal") || strings.Contains(errs, "could not confine") {
				t.Fatalf("control (max_user_namespaces %s): exit %d stderr %q, want 0 and no failure", limit, code, errs)
			}
			wantContent(t, marker, "")
			continue
		}
		if code != vocab.FatalExit || len(lines) < 2 || !strings.HasPrefix(lines[len(lines)-2], "ns-run: fatal: [") ||
			!strings.HasPrefix(lines[len(lines)-1], "sandbox-run: the namespaces runner could not confine the command, so it did not run") {
			t.Errorf("max_user_namespaces 1, held: exit %d stderr %q, want 125, the fatal line, then the CLI's own line", code, errs)
		}
		wantAbsent(t, marker)
	}
}
