//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// The CLI writes its --json-report after the command exited, as an
// unconfined process. The command can replace the report's name in the
// workspace meanwhile (a link to ~/.bashrc, a dangling link): the report
// must still reach only the file named when the CLI started.
func TestCLIReportThroughPlantedLink(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		decoy := filepath.Join(s.base, "decoy")
		report := filepath.Join(s.ws, "report.json")
		readReport := func(p string) sandbox.Outcome {
			t.Helper()
			var rep struct {
				Outcome sandbox.Outcome `json:"outcome"`
			}
			b, err := os.ReadFile(p)
			if err != nil || json.Unmarshal(b, &rep) != nil {
				t.Fatalf("report %s: %v %q", p, err, b)
			}
			return rep.Outcome
		}

		// Positive control: the same run without planting writes the report.
		os.Remove(report)
		if _, errs, code := cli(t, s.ws, "--runner", s.runner, "--json-report", report, "--", "/bin/sh", "-c", "exit 7"); code != 7 {
			t.Fatalf("control: exit %d, stderr %q", code, errs)
		}
		if o := readReport(report); o.ExitCode != 7 {
			t.Errorf("control: outcome %+v", o)
		}

		for name, target := range map[string]string{"to a file": decoy, "dangling": filepath.Join(s.base, "created")} {
			t.Run(name, func(t *testing.T) {
				os.Remove(report)
				write(t, decoy, "precious\n")
				// The command writes a file it then renames over the
				// report's name, so the control below proves it could.
				planted := filepath.Join(s.ws, "planted")
				_, errs, code := cli(t, s.ws, "--runner", s.runner, "--json-report", report, "--",
					"/bin/sh", "-c", "ln -s "+target+" "+planted+" && mv -f "+planted+" "+report+" && exit 3")
				if code != 3 {
					t.Fatalf("exit %d, stderr %q; want the command's 3", code, errs)
				}
				if fi, err := os.Lstat(report); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Fatalf("the command did not plant the link (%v): the attack never started", err)
				}
				wantContent(t, decoy, "precious\n")
				if target != decoy {
					wantAbsent(t, target)
				}
				if !strings.Contains(errs, "was replaced or removed during the run") {
					t.Errorf("stderr %q does not say the report file was replaced", errs)
				}
			})
		}

		refused := map[string]func(){
			"symlink":   func() { os.Symlink(decoy, report) },
			"hard link": func() { os.Link(decoy, report) },
			"fifo":      func() { syscall.Mkfifo(report, 0o600) },
		}
		for name, plant := range refused {
			t.Run("pre-existing "+name, func(t *testing.T) {
				os.Remove(report)
				write(t, decoy, "precious\n")
				plant()
				if _, err := os.Lstat(report); err != nil {
					t.Fatalf("plant %s: %v", name, err)
				}
				marker := filepath.Join(s.ws, "ran")
				_, errs, code := cli(t, s.ws, "--runner", s.runner, "--json-report", report, "--", "/bin/sh", "-c", "touch "+marker)
				if code != 125 || !strings.Contains(errs, "sandbox-run: INVALID_POLICY:") {
					t.Errorf("exit %d, stderr %q; want 125 and INVALID_POLICY", code, errs)
				}
				wantAbsent(t, marker)
				wantContent(t, decoy, "precious\n")
			})
		}
		os.Remove(report)
	})
}
