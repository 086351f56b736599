package seatbelt

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// isRunnerFailure states the runner-failure rule the provider applies
// (sandbox.RunnerFailureRule from RunnerFailurePrefix and
// StepFailurePrefix), to check those prefixes: it applies it to what the
// wrapped command wrote to standard error, given whether the seatbelt-run step
// reported the sandbox applied (on the descriptor that
// SANDBOX_LOCAL_APPLIED_FD names): sandbox-exec and the step fail before
// they exec, so their message can only be the first line;
// that line must start with RunnerFailurePrefix or StepFailurePrefix, and
// no report may have come (after one, the command ran and the line is its
// own). It returns the line.
func isRunnerFailure(stderr []byte, applied bool) (string, bool) {
	first, _, _ := bytes.Cut(stderr, []byte{'\n'})
	line := strings.TrimSuffix(string(first), "\r")
	if !applied && (strings.HasPrefix(line, RunnerFailurePrefix) || strings.HasPrefix(line, StepFailurePrefix)) {
		return line, true
	}
	return "", false
}

func TestIsRunnerFailure(t *testing.T) {
	cases := []struct {
		name   string
		stderr string
		want   bool
	}{
		{"profile error", "sandbox-exec: unbound variable: foo\n", true},
		{"nested sandbox", "sandbox-exec: sandbox_apply: Operation not permitted\n", true},
		{"CRLF", "sandbox-exec: invalid data type\r\nmore", true},
		{"the step could not be executed", "sandbox-exec: execvp() of '/bin/agent' failed: Operation not permitted\n", true},
		{"the step failed", "seatbelt-run: fatal: cannot report the sandbox applied on descriptor 3: bad file descriptor\n", true},
		{"command not found is the command's outcome", "seatbelt-run: execvp() of 'nosuch' failed: no such file or directory\n", false},
		{"later line is the command's", "warning: x\nsandbox-exec: fake\n", false},
		{"not at line start", "  sandbox-exec: indented\n", false},
		{"denial", "touch: /etc/x: Operation not permitted\n", false},
		{"empty", "", false},
	}
	for _, c := range cases {
		line, got := isRunnerFailure([]byte(c.stderr), false)
		if got != c.want {
			t.Errorf("%s: isRunnerFailure = %v, want %v", c.name, got, c.want)
		}
		if got && !strings.HasPrefix(c.stderr, line) || strings.ContainsAny(line, "\r\n") {
			t.Errorf("%s: line %q", c.name, line)
		}
		// Once the step reported the sandbox applied, the command ran:
		// no line of its stderr is a runner failure, forged or not.
		if _, got := isRunnerFailure([]byte(c.stderr), true); got {
			t.Errorf("%s: a runner failure after the sandbox was reported applied", c.name)
		}
	}
}

func TestDenialSignatures(t *testing.T) {
	closed := DenialSignatures(Spec{})
	open := DenialSignatures(Spec{AllowNetwork: true})
	has := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, s := range []string{"Operation not permitted", "operation not permitted", "deny(1)"} {
		if !has(closed, s) || !has(open, s) {
			t.Errorf("signature %q missing", s)
		}
	}
	if !has(closed, "Could not resolve host") || has(open, "Could not resolve host") {
		t.Errorf("name-resolution signatures belong only to a closed network: %q / %q", closed, open)
	}
	closed[0] = "mutated"
	if DenialSignatures(Spec{})[0] == "mutated" {
		t.Errorf("DenialSignatures shares its slice")
	}
}

func TestGaps(t *testing.T) {
	reasons := func(gs []vocab.Gap) string {
		var b strings.Builder
		for _, g := range gs {
			if g.Area == "" || g.Reason == "" {
				t.Errorf("empty gap %+v", g)
			}
			b.WriteString(g.String() + "\n")
		}
		return b.String()
	}
	full := reasons(Gaps(profileCases[0].spec))
	bare := reasons(Gaps(Spec{}))
	for _, s := range []string{"already exists", "submodule", "device node", "kern.proc.pid", "POSIX", "notify(3)", "classify: "} {
		if !strings.Contains(full, s) {
			t.Errorf("workspace-write gaps lack %q:\n%s", s, full)
		}
	}
	for _, s := range []string{"hard link", "submodule", "spelling", "device node"} {
		if strings.Contains(bare, s) {
			t.Errorf("nothing protected or writable, yet a gap mentions %q", s)
		}
	}
	// Closed by the profile: TIOCSTI is denied by number, and a protected
	// path cannot be the source of a new hard link.
	for _, s := range []string{"TIOCSTI", "can be linked from a writable root", "under another spelling"} {
		if strings.Contains(full, s) || strings.Contains(bare, s) {
			t.Errorf("closed gap %q still reported:\n%s", s, full)
		}
	}
	for _, s := range []string{"kern.proc.pid", "classify: "} {
		if !strings.Contains(bare, s) {
			t.Errorf("always-present gap %q missing", s)
		}
	}
	ro := reasons(Gaps(profileCases[1].spec))
	if strings.Contains(ro, "submodule") || !strings.Contains(ro, "hard link that already exists") {
		t.Errorf("read-only gaps:\n%s", ro)
	}
}

// TestProfileGaps: a protected path whose missing names the case-variant
// regex cannot write is a gap naming it; none otherwise.
func TestProfileGaps(t *testing.T) {
	if g := (Profile{}).Gaps(); len(g) != 0 {
		t.Errorf("gaps %v with nothing unguarded", g)
	}
	g := (Profile{Unguarded: []string{"/Users/me/ws/.git/hooks copy"}}).Gaps()
	if len(g) != 1 || g[0].Area != "fs" || !strings.Contains(g[0].Reason, "/Users/me/ws/.git/hooks copy") || !strings.Contains(g[0].Reason, "letter case") {
		t.Errorf("gaps %v", g)
	}
	p, err := Build(macFS(), Spec{WritableRoots: []string{ws}, ReadOnlySubpaths: []string{ws + "/.git/hooks copy", ws + "/.git/config.worktree"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.Unguarded, "|") != ws+"/.git/hooks copy" {
		t.Errorf("unguarded %q, want only the name with a space", p.Unguarded)
	}
}
