//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// The consumer's secrets and an innocuous variable, set with t.Setenv
// (restored after each test): the wrap reads the process's environment.
const (
	envToken    = "ghp_integrationTestValue0000000000000000"
	envAWSKey   = "aws-integration-secret-value"
	envInnocent = "innocent-integration-value"
)

func setConsumerSecrets(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", envToken)
	t.Setenv("AWS_SECRET_ACCESS_KEY", envAWSKey)
	t.Setenv("SBX_INNOCUOUS", envInnocent)
}

// commandEnv parses env(1)'s output into NAME=value entries.
func commandEnv(t *testing.T, r ran) []string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("env: exit %d, stderr %q", r.code, r.stderr)
	}
	return strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
}

// TestCredentialsWithheldFromTheCommand: the command sees the innocuous
// variable (the positive control) and not the secrets; the wrap names
// them, and its JSON never holds a value. With Keep it sees the kept one.
func TestCredentialsWithheldFromTheCommand(t *testing.T) {
	setConsumerSecrets(t)
	forEachRunner(t, func(t *testing.T, s *sbx) {
		r := s.run(s.policy(), "/usr/bin/env")
		env := commandEnv(t, r)
		if !slices.Contains(env, "SBX_INNOCUOUS="+envInnocent) {
			t.Errorf("the innocuous variable did not reach the command: %q", env)
		}
		for _, secret := range []string{envToken, envAWSKey} {
			if strings.Contains(r.stdout, secret) {
				t.Errorf("the command saw a secret: %q", env)
			}
		}
		for _, name := range []string{"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"} {
			if !slices.Contains(r.w.WithheldEnv, name) {
				t.Errorf("WithheldEnv %q lacks %s", r.w.WithheldEnv, name)
			}
		}
		if !slices.Contains(env, "TMPDIR="+r.w.TempDir) {
			t.Errorf("TMPDIR is not the wrap's temp dir: %q", env)
		}
		b, err := json.Marshal(r.w)
		if err != nil || strings.Contains(string(b), envToken) || strings.Contains(string(b), envAWSKey) || !strings.Contains(string(b), `"withheld_env":[`) {
			t.Errorf("the wrap's JSON (%v): %s", err, b)
		}

		pol := s.policy()
		pol.Env.Keep = []string{"GITHUB_TOKEN"}
		r = s.run(pol, "/usr/bin/env")
		env = commandEnv(t, r)
		if !slices.Contains(env, "GITHUB_TOKEN="+envToken) || strings.Contains(r.stdout, envAWSKey) {
			t.Errorf("with Keep GITHUB_TOKEN: %q", env)
		}
		if slices.Contains(r.w.WithheldEnv, "GITHUB_TOKEN") {
			t.Errorf("a kept variable is reported withheld: %q", r.w.WithheldEnv)
		}
	})
}

// TestEnvPolicyStartUnsetSet: an empty start, Set and Unset reach the
// command exactly; the launcher's variables never do, and TMPDIR stays.
func TestEnvPolicyStartUnsetSet(t *testing.T) {
	setConsumerSecrets(t)
	forEachRunner(t, func(t *testing.T, s *sbx) {
		pol := s.policy()
		pol.Env = sandbox.EnvPolicy{Start: sandbox.EnvEmpty, Set: map[string]string{"A": "1", "API_KEY": "set-by-caller"}}
		pol.Caches.Off = true // the wrap's cache variables are not what is compared
		r := s.run(pol, "/usr/bin/env")
		if got, want := commandEnv(t, r), []string{"A=1", "API_KEY=set-by-caller", "TMPDIR=" + r.w.TempDir}; !slices.Equal(got, want) {
			t.Errorf("empty start: %q, want %q", got, want)
		}
		pol.Env = sandbox.EnvPolicy{Start: sandbox.EnvMinimal, Unset: []string{"LC_*"}, Keep: []string{"SBX_INNOCUOUS"}}
		env := commandEnv(t, s.run(pol, "/usr/bin/env"))
		if !slices.Contains(env, "SBX_INNOCUOUS="+envInnocent) || slices.ContainsFunc(env, func(kv string) bool {
			return strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "SANDBOX_LOCAL_") || strings.HasPrefix(kv, "GITHUB_TOKEN=")
		}) {
			t.Errorf("minimal start: %q", env)
		}
	})
}

// TestSSHAgentSocketFollowsTheAllowList: SSH_AUTH_SOCK is withheld, unless
// the socket it names is one the policy lets the command reach.
func TestSSHAgentSocketFollowsTheAllowList(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		agent := filepath.Join(s.base, "agent.sock")
		t.Setenv("SSH_AUTH_SOCK", agent)
		r := s.run(s.policy(), "/usr/bin/env")
		if slices.Contains(commandEnv(t, r), "SSH_AUTH_SOCK="+agent) || !slices.Contains(r.w.WithheldEnv, "SSH_AUTH_SOCK") {
			t.Errorf("without the socket allowed: %q, withheld %q", r.stdout, r.w.WithheldEnv)
		}
		pol := s.policy()
		pol.AllowUnixSockets = []string{agent}
		r = s.run(pol, "/usr/bin/env")
		if !slices.Contains(commandEnv(t, r), "SSH_AUTH_SOCK="+agent) || slices.Contains(r.w.WithheldEnv, "SSH_AUTH_SOCK") {
			t.Errorf("with the socket allowed: %q, withheld %q", r.stdout, r.w.WithheldEnv)
		}
	})
}

// TestInvalidEnvPolicyRunsNothing: a name with NUL or '=', or an empty
// one, is INVALID_POLICY at Wrap: no wrap, and the command never ran.
func TestInvalidEnvPolicyRunsNothing(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		marker := filepath.Join(s.ws, "ran")
		for name, ep := range map[string]sandbox.EnvPolicy{
			"NUL in a kept name":  {Keep: []string{"A\x00B"}},
			"'=' in a kept name":  {Keep: []string{"A=B"}},
			"'=' in a set name":   {Set: map[string]string{"A=B": "c"}},
			"NUL in a set name":   {Set: map[string]string{"A\x00": "c"}},
			"an empty unset name": {Unset: []string{""}},
		} {
			pol := s.policy()
			pol.Env = ep
			w, err := s.p.Wrap(context.Background(), sandbox.Request{Argv: []string{"/bin/touch", marker}, Policy: pol})
			if !errors.Is(err, sandbox.ErrInvalidPolicy) || w != nil {
				t.Errorf("%s: %v, want INVALID_POLICY and no wrap", name, err)
			}
		}
		wantAbsent(t, marker)
	})
}

// TestCLIEnv: --setenv, --unsetenv, --clearenv and --keep-env, and the
// withheld names in --json-report.
func TestCLIEnv(t *testing.T) {
	setConsumerSecrets(t)
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			report := filepath.Join(s.base, "report.json")
			out, errs, code := cli(t, s.ws, "--runner", runner, "--json-report", report, "--setenv", "B=x=y", "--unsetenv", "SBX_INNOCUOUS", "--", "/usr/bin/env")
			if code != 0 || strings.Contains(out, envToken) || strings.Contains(out, envAWSKey) || strings.Contains(out, "SBX_INNOCUOUS=") || !strings.Contains(out, "\nB=x=y\n") {
				t.Errorf("--setenv, --unsetenv: exit %d stdout %q stderr %q", code, out, errs)
			}
			b, err := os.ReadFile(report)
			var rep struct {
				WithheldEnv []string `json:"withheld_env"`
			}
			if err != nil || json.Unmarshal(b, &rep) != nil || !slices.Contains(rep.WithheldEnv, "GITHUB_TOKEN") || !slices.Contains(rep.WithheldEnv, "AWS_SECRET_ACCESS_KEY") {
				t.Errorf("report (%v): %s", err, b)
			}
			if strings.Contains(string(b), envToken) || strings.Contains(string(b), envAWSKey) {
				t.Errorf("the report holds a secret's value: %s", b)
			}

			out, errs, code = cli(t, s.ws, "--runner", runner, "--no-caches", "--clearenv", "--keep-env", "GITHUB_TOKEN", "--setenv", "A=1", "--", "/usr/bin/env")
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if code != 0 || len(lines) != 3 || lines[0] != "GITHUB_TOKEN="+envToken || lines[1] != "A=1" || !strings.HasPrefix(lines[2], "TMPDIR=") {
				t.Errorf("--clearenv --keep-env --setenv: exit %d stdout %q stderr %q", code, out, errs)
			}

			marker := filepath.Join(s.ws, "ran")
			for _, args := range [][]string{{"--setenv", "NOVALUE"}, {"--setenv", "=x"}, {"--keep-env", "A=B"}, {"--unsetenv", ""}, {"--clearenv", "--minimal-env"}} {
				_, errs, code := cli(t, s.ws, append(append([]string{"--runner", runner}, args...), "--", "/bin/touch", marker)...)
				if code != 125 || !strings.HasPrefix(errs, "sandbox-run: INVALID_POLICY: ") {
					t.Errorf("%q: exit %d stderr %q, want 125 and INVALID_POLICY", args, code, errs)
				}
			}
			wantAbsent(t, marker)
		})
	}
}
