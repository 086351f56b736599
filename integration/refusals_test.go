//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/sandbox"
)

// TestRefusalsAreNamed: after a run in which the sandbox refused a write
// outside the writable roots, a read of a deny-read path, the network
// (git's own wording) and a withheld variable, sandbox-run names each on
// one line with the flag that allows it; the same command with each
// access granted succeeds and draws no such line (the controls).
func TestRefusalsAreNamed(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "token-value")
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			escape := filepath.Join(s.base, "escape")
			secret := filepath.Join(s.base, "secret")
			write(t, filepath.Join(secret, "key"), "k\n")
			os.Chmod(s.base, 0o755)
			os.Chmod(secret, 0o755)
			os.Chmod(filepath.Join(secret, "key"), 0o644)
			script := "echo x > " + escape + "; cat " + secret + "/key; git ls-remote https://example.com/r; echo ${GITHUB_TOKEN:-GITHUB_TOKEN is not set} >&2"
			_, errs, _ := cli(t, s.ws, "--runner", runner, "--deny-read", secret, "--", "/bin/sh", "-c", script)
			for _, want := range []string{
				// (the roots: the workspace, its caches' dir, the temp dir)
				"sandbox-run: refused write " + escape + ": outside the writable roots (" + s.ws + ", ",
				", $TMPDIR); --allow-write " + s.base + " (Policy.WritableRoots) allows it [as the command's output reports it]\n",
				"sandbox-run: refused read " + secret + "/key: deny-read path " + secret + " (Policy.DenyRead); drop --deny-read " + secret + " (Policy.DenyRead) allows it [as the command's output reports it]\n",
				"sandbox-run: refused network example.com: network deny: the command reaches no host; --allow-domain example.com (Policy.AllowDomains, proxied) or --network allow (Policy.Network) allows it [as the command's output reports it]\n",
				"sandbox-run: refused env GITHUB_TOKEN: withheld: it looks like a credential; --keep-env GITHUB_TOKEN (Policy.Env.Keep) allows it [as the command's output reports it]\n",
			} {
				if !strings.Contains(errs, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errs)
				}
			}
			wantAbsent(t, escape)

			// A line the command forged about a credential store or a
			// dot-file of the home directory is named as the output's,
			// and no flag is offered for it.
			home, _ := os.UserHomeDir()
			_, errs, _ = cli(t, s.ws, "--runner", runner, "--", "/bin/sh", "-c",
				"echo 'sh: 1: cannot create "+home+"/.config/autostart/x.desktop: Read-only file system' >&2; exit 1")
			if want := "$TMPDIR); in the home directory's dot-files, where no writable root is suggested [as the command's output reports it]\n"; !strings.Contains(errs, "sandbox-run: refused write "+home+"/.config/autostart/x.desktop: outside the writable roots (") || !strings.Contains(errs, want) {
				t.Errorf("forged line about a dot-file: stderr %q, want %q", errs, want)
			}

			// Granted: the same writes and reads work, and nothing is named.
			out, errs, code := cli(t, s.ws, "--runner", runner, "--allow-write", s.base, "--keep-env", "GITHUB_TOKEN", "--",
				"/bin/sh", "-c", "echo x > "+escape+" && cat "+secret+"/key && echo $GITHUB_TOKEN")
			if code != 0 || out != "k\ntoken-value\n" || strings.Contains(errs, "sandbox-run: refused") {
				t.Errorf("granted: exit %d stdout %q stderr %q", code, out, errs)
			}
			wantContent(t, escape, "x\n")
			// A refusal the sandbox did not cause draws no line: a path
			// the policy allows that does not exist.
			_, errs, _ = cli(t, s.ws, "--runner", runner, "--", "/bin/sh", "-c", "cat "+s.ws+"/missing; cat /proc/1/nothing")
			if strings.Contains(errs, "sandbox-run: refused") || !strings.Contains(errs, "No such file") {
				t.Errorf("not the sandbox's refusal: stderr %q", errs)
			}
		})
	}
}

// TestRefusalNotTheSandboxs: as an ordinary user, a file only root may
// read or write is refused by its permissions, and sandbox-run names no
// refusal; run unconfined, the same command fails the same way (the
// control that the refusal is the host's).
func TestRefusalNotTheSandboxs(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads /etc/shadow: the case is the unprivileged run's (scripts/test runs it as sbx-test)")
	}
	if _, err := os.ReadFile("/etc/shadow"); err == nil {
		t.Fatal("control: this user can read /etc/shadow; the case proves nothing")
	}
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			_, errs, code := cli(t, s.ws, "--runner", runner, "--", "/bin/sh", "-c", "cat /etc/shadow")
			if code == 0 || !strings.Contains(errs, "/etc/shadow: Permission denied") || strings.Contains(errs, "sandbox-run: refused") {
				t.Errorf("exit %d stderr %q; want the host's refusal, and no line naming it the sandbox's", code, errs)
			}
		})
	}
}

// recordedRun runs sandbox-run with a JSON report and returns its stderr
// and the outcome the report holds.
func recordedRun(t *testing.T, s *sbx, args ...string) (string, sandbox.Outcome) {
	t.Helper()
	report := filepath.Join(s.base, "report.json")
	os.Remove(report)
	_, errs, _ := cli(t, s.ws, append([]string{"--runner", s.runner, "--json-report", report}, args...)...)
	var rep struct {
		Outcome sandbox.Outcome `json:"outcome"`
	}
	b, err := os.ReadFile(report)
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("report: %v %s", err, b)
	}
	return errs, rep.Outcome
}

// sandboxSeen are the refusals the sandbox recorded itself.
func sandboxSeen(o sandbox.Outcome) []sandbox.Refusal {
	var out []sandbox.Refusal
	for _, r := range o.Refusals {
		if r.Seen == "sandbox" {
			out = append(out, r)
		}
	}
	return out
}

// TestRefusalsRecordedByTheGuard: under namespaces, the guard records the
// protected names it refuses, exact, even when the command prints nothing
// (its stderr is /dev/null: nothing could be matched from the output): a
// create of the absent .envrc, a rename onto it, a write of the existing
// .git/config; 10,000 refusals make one record. Granted
// (--writable-config .envrc), the same create and rename succeed and
// nothing is named.
func TestRefusalsRecordedByTheGuard(t *testing.T) {
	if !slices.Contains(linuxRunners, "namespaces") {
		t.Skip("the namespaces runner is not under test here")
	}
	s := newSbx(t, "namespaces")
	envrc := filepath.Join(s.ws, ".envrc")
	gitConfig := filepath.Join(s.ws, ".git", "config")
	write(t, gitConfig, "[core]\n")
	envrcRule, envrcAllow := "protected tool config .envrc: a later tool runs what it names", "--writable-config .envrc (Policy.WritableConfigs)"
	for _, tt := range []struct{ op, script, target, rule, allow string }{
		{"create", "echo x > .envrc", envrc, envrcRule, envrcAllow},
		{"rename", "echo x > f && mv f .envrc", envrc, envrcRule, envrcAllow},
		{"write", "echo x >> .git/config", gitConfig, "protected " + gitConfig + ": a version-control hook or config that the user's own tools run", ""},
	} {
		errs, o := recordedRun(t, s, "--", "/bin/sh", "-c", "exec 2>/dev/null; "+tt.script)
		want := sandbox.Refusal{Kind: sandbox.RefusedWrite, Target: tt.target, Seen: "sandbox", Op: tt.op, Rule: tt.rule, Allow: tt.allow}
		if got := sandboxSeen(o); len(got) != 1 || got[0] != want {
			t.Errorf("%s: recorded %+v, want %+v", tt.op, got, want)
		}
		if line := "sandbox-run: refused " + want.String() + "\n"; !strings.Contains(errs, line) {
			t.Errorf("%s: stderr %q lacks %q", tt.op, errs, line)
		}
		wantAbsent(t, envrc)
		wantContent(t, gitConfig, "[core]\n")
		os.Remove(filepath.Join(s.ws, "f"))
	}
	// Printed too, the refusal is listed once: the record's, not the
	// output's.
	errs, o := recordedRun(t, s, "--", "/bin/sh", "-c", "echo x > .envrc")
	if len(o.Refusals) != 1 || o.Refusals[0].Seen != "sandbox" || !strings.Contains(errs, "Read-only file system") ||
		strings.Count(errs, "sandbox-run: refused") != 1 || strings.Contains(errs, "[as the command's output reports it]") {
		t.Errorf("printed and recorded: %+v, stderr %q", o.Refusals, errs)
	}
	// A flood: 10,000 refused creates of the one name, one record.
	errs, o = recordedRun(t, s, "--", "/bin/sh", "-c", "exec 2>/dev/null; i=0; while [ $i -lt 10000 ]; do : > .envrc; i=$((i+1)); done")
	if got := sandboxSeen(o); len(got) != 1 || got[0].Target != envrc || o.RefusalsUnlisted != 0 || strings.Count(errs, "sandbox-run: refused") != 1 {
		t.Errorf("10,000 refusals of one name: %+v, unlisted %d, stderr %q", o.Refusals, o.RefusalsUnlisted, errs)
	}
	wantAbsent(t, envrc)
	// Granted: the same create and rename succeed, and nothing is named.
	for _, script := range []string{"echo x > .envrc", "echo y > f && mv f .envrc"} {
		errs, o := recordedRun(t, s, "--writable-config", ".envrc", "--", "/bin/sh", "-c", script)
		if len(o.Refusals) != 0 || strings.Contains(errs, "sandbox-run: refused") || o.ExitCode != 0 {
			t.Errorf("granted %q: exit %d, refusals %+v, stderr %q", script, o.ExitCode, o.Refusals, errs)
		}
	}
	wantContent(t, envrc, "y\n")
}

// TestRefusalsRecordedByTheSupervisor: under landlock, the supervisor
// records the metadata changes it refuses outside the writable roots, of
// a file the user owns (so the refusal is the sandbox's), exact, with the
// command's stderr silenced; 10,000 refusals over 40 files make a bounded
// list, the rest counted. Granted (--allow-write), the chmod succeeds and
// nothing is named.
func TestRefusalsRecordedByTheSupervisor(t *testing.T) {
	if !slices.Contains(linuxRunners, "landlock") {
		t.Skip("the landlock runner is not under test here")
	}
	s := newSbx(t, "landlock")
	out := filepath.Join(s.base, "out")
	write(t, out, "x\n")
	os.Chmod(out, 0o644)
	errs, o := recordedRun(t, s, "--", "/bin/sh", "-c", "exec 2>/dev/null; chmod 600 "+out)
	got := sandboxSeen(o)
	if len(got) != 1 || got[0].Target != out || got[0].Op != "chmod" || got[0].Kind != sandbox.RefusedWrite ||
		!strings.HasPrefix(got[0].Rule, "outside the writable roots ("+s.ws+", ") || got[0].Allow != "--allow-write "+s.base+" (Policy.WritableRoots)" {
		t.Errorf("recorded %+v", got)
	}
	if line := "sandbox-run: refused write " + out + " (chmod): outside the writable roots (" + s.ws + ", "; !strings.Contains(errs, line) ||
		strings.Contains(errs, "[as the command's output reports it]") {
		t.Errorf("stderr %q lacks %q, or names it as the output's", errs, line)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("refused chmod: %v %v", st.Mode(), err)
	}

	// A name with a newline and a byte that is not UTF-8: exact in the
	// report (Go-quoted), one line on stderr.
	odd := filepath.Join(s.base, "a\nb\xff")
	write(t, odd, "")
	errs, o = recordedRun(t, s, "--", "/bin/sh", "-c", "exec 2>/dev/null; chmod 600 "+s.base+"/a*")
	if got := sandboxSeen(o); len(got) != 1 || got[0].Target != strconv.Quote(odd) ||
		!strings.Contains(errs, "sandbox-run: refused write "+strconv.Quote(odd)+" (chmod): outside the writable roots (") {
		t.Errorf("odd name: %+v, stderr %q", got, errs)
	}
	os.Remove(odd)

	// A flood: 250 rounds of chmod over 40 files, 10,000 refusals: the
	// first 16 files recorded (their repeats not again), every refusal of
	// the other 24 counted.
	flood := filepath.Join(s.base, "flood")
	for i := range 40 {
		write(t, filepath.Join(flood, fmt.Sprintf("f%02d", i)), "")
	}
	errs, o = recordedRun(t, s, "--", "/bin/sh", "-c", "exec 2>/dev/null; i=0; while [ $i -lt 250 ]; do chmod 600 "+flood+"/*; i=$((i+1)); done")
	got = sandboxSeen(o)
	unlisted := (40 - vocab.MaxRefusalRecords) * 250
	if len(got) != vocab.MaxRefusalRecords || o.RefusalsUnlisted != unlisted {
		t.Errorf("10,000 refusals: %d recorded, %d unlisted; want %d, %d", len(got), o.RefusalsUnlisted, vocab.MaxRefusalRecords, unlisted)
	}
	if n := strings.Count(errs, "\n"); n > 13 || !strings.Contains(errs, fmt.Sprintf("sandbox-run: refused at least %d more, not listed", unlisted)) {
		t.Errorf("10,000 refusals: %d lines on stderr: %q", n, errs)
	}

	// Granted: the same chmod succeeds, and nothing is named.
	errs, o = recordedRun(t, s, "--allow-write", s.base, "--", "/bin/sh", "-c", "chmod 600 "+out)
	if len(o.Refusals) != 0 || strings.Contains(errs, "sandbox-run: refused") || o.ExitCode != 0 {
		t.Errorf("granted: exit %d, refusals %+v, stderr %q", o.ExitCode, o.Refusals, errs)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("granted chmod: %v %v", st.Mode(), err)
	}
}

// TestRefusalsRecordOnlyOnItsPipe: the refusal record is a diagnostic, so
// a variable that names anything but the pipe Command made (closed, a
// file, stdout, or the consumer's own pipe after it replaced ExtraFiles)
// records nothing and the launch goes on: the command runs and refuses as
// ever, and not a byte reaches the file or the consumer's pipe. The
// control: the same command with Command's pipe has its refusal recorded.
func TestRefusalsRecordOnlyOnItsPipe(t *testing.T) {
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			marker := filepath.Join(s.ws, "ran")
			outside := filepath.Join(s.base, "outside")
			write(t, outside, "x\n")
			script := "echo > " + marker + "; (: > .envrc) 2>/dev/null; chmod 600 " + outside + " 2>/dev/null; exit 0"
			file, err := os.Create(filepath.Join(s.base, "file"))
			if err != nil {
				t.Fatal(err)
			}
			defer file.Close()
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			defer pw.Close()
			for name, edit := range map[string]func(*exec.Cmd){
				"closed": func(c *exec.Cmd) { c.Env = append(c.Env, vocab.RefusalsEnv+"=99:1") },
				"a file": func(c *exec.Cmd) {
					c.ExtraFiles = append(c.ExtraFiles, file)
					var st syscall.Stat_t
					syscall.Fstat(int(file.Fd()), &st)
					c.Env = append(c.Env, fmt.Sprintf("%s=%d:%d", vocab.RefusalsEnv, 2+len(c.ExtraFiles), st.Ino))
				},
				"stdout":              func(c *exec.Cmd) { c.Env = append(c.Env, vocab.RefusalsEnv+"=1") },
				"the consumer's pipe": func(c *exec.Cmd) { c.ExtraFiles = []*os.File{pw} },
			} {
				os.Remove(marker)
				w := s.wrap(s.policy(), "/bin/sh", "-c", script)
				r := s.spawn(w, edit)
				o := w.Classify(r.code, []byte(r.stderr))
				if r.code != 0 || o.Kind != sandbox.OutcomeChild || len(o.Refusals) != 0 {
					t.Errorf("%s: exit %d, outcome %+v, stderr %q; want the command run, nothing recorded", name, r.code, o, r.stderr)
				}
				wantContent(t, marker, "\n")
				wantContent(t, outside, "x\n")
			}
			if fi, err := file.Stat(); err != nil || fi.Size() != 0 {
				t.Errorf("the file named by the variable: %v, size %d; want nothing written", err, fi.Size())
			}
			pw.Close()
			if b, _ := io.ReadAll(pr); len(b) != 0 {
				t.Errorf("the consumer's own pipe got %q; want nothing", b)
			}
			// Control: Command's own pipe records the refusal.
			w := s.wrap(s.policy(), "/bin/sh", "-c", script)
			r := s.spawn(w, func(*exec.Cmd) {})
			o := w.Classify(r.code, []byte(r.stderr))
			recorded := false
			for _, f := range o.Refusals {
				recorded = recorded || f.Seen == "sandbox"
			}
			if r.code != 0 || !recorded {
				t.Errorf("control: exit %d, refusals %+v; want one recorded by the sandbox", r.code, o.Refusals)
			}
		})
	}
}
