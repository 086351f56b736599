//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
