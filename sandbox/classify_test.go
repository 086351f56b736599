package sandbox

import "testing"

func TestClassify(t *testing.T) {
	const prefix = "landlock-run: fatal: [0123456789abcdef0123456789abcdef] "
	const notice = "landlock-run: notice: partial enforcement: ipc: no signal scoping"
	rule := RunnerFailureRule{Kind: RuleExitAndLine, ExitCode: 125, FatalPrefix: prefix, IgnoreLines: []string{notice}}
	sig := RunnerFailureRule{Kind: RuleSignature, Signatures: []string{"sandbox-exec:"}, ExceptPrefixes: []string{"sandbox-exec: execvp() of "}}
	den := linuxDenialSignatures
	cases := []struct {
		name   string
		rule   RunnerFailureRule
		code   int
		stderr string
		want   OutcomeKind
	}{
		{"success", rule, 0, "", OutcomeChild},
		{"exit 1", rule, 1, "failed\n", OutcomeChild},
		{"exit 2", rule, 2, "", OutcomeChild},
		{"child exit 125", rule, 125, "oops\n", OutcomeChild},
		{"126", rule, 126, "landlock-run: ./x: permission denied\n", OutcomeChild},
		{"127", rule, 127, "landlock-run: x: command not found\n", OutcomeChild},
		{"signal", rule, 137, "", OutcomeChild},
		{"real fatal", rule, 125, prefix + "landlock ruleset: boom\n", OutcomeRunnerFailure},
		{"fatal after notice", rule, 125, notice + "\n" + prefix + "x\n", OutcomeRunnerFailure},
		{"fatal line but exit 1", rule, 1, prefix + "x\n", OutcomeChild},
		{"forged fatal, wrong token", rule, 125, "landlock-run: fatal: [ffffffffffffffffffffffffffffffff] forged\n", OutcomeChild},
		{"forged unsigned fatal", rule, 125, "landlock-run: fatal: forged\n", OutcomeChild},
		{"notice with exit 1", rule, 1, notice + "\n", OutcomeChild},
		{"notice with exit 2", rule, 2, notice + "\n", OutcomeChild},
		{"notice with exit 125", rule, 125, notice + "\n", OutcomeChild},
		{"denial", rule, 1, "sh: cannot create /etc/x: Permission denied\n", OutcomeDenied},
		{"denial EROFS", rule, 1, "touch: cannot touch 'x': Read-only file system\n", OutcomeDenied},
		{"denial text but success", rule, 0, "Permission denied\n", OutcomeChild},
		{"signature rule hit", sig, 1, "sandbox-exec: profile error\n", OutcomeRunnerFailure},
		{"signature rule, exit 0", sig, 0, "sandbox-exec: x\n", OutcomeRunnerFailure},
		{"signature rule, child 125", sig, 125, "x\n", OutcomeChild},
		{"signature rule, not the first line", sig, 1, "child output\nsandbox-exec: forged later\n", OutcomeChild},
		{"signature rule, exec failure is the child's", sig, 127, "sandbox-exec: execvp() of 'nope' failed: No such file or directory\n", OutcomeChild},
		{"crlf", rule, 125, prefix + "x\r\n", OutcomeRunnerFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := classify(c.rule, den, c.code, []byte(c.stderr), false)
			if got.Kind != c.want || got.ExitCode != c.code {
				t.Fatalf("classify(%d, %q) = %+v, want %s", c.code, c.stderr, got, c.want)
			}
		})
	}
	if got := classify(rule, den, 125, []byte(prefix+"ruleset failed\n"), false); got.Reason != "ruleset failed" {
		t.Errorf("reason %q", got.Reason)
	}
}
