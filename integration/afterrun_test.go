//go:build linux

package integration

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// TestCLIReportThroughPlantedDirectoryLink: a command plants a link to a
// directory of its choice (ws/out -> a directory holding a file it must
// not change) inside a writable root; a later run's --json-report
// ws/out/report.json must not follow it, and refuses the run
// (INVALID_POLICY, the command does not run). Links on the way that no
// writable root contains are followed, as the user named them.
func TestCLIReportThroughPlantedDirectoryLink(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		extra := filepath.Join(s.base, "extra")
		if err := os.Mkdir(extra, 0o755); err != nil {
			t.Fatal(err)
		}
		decoy := filepath.Join(s.base, "decoy")
		if err := os.Mkdir(decoy, 0o755); err != nil {
			t.Fatal(err)
		}
		run := func(report, marker string) (string, int) {
			t.Helper()
			_, errs, code := cli(t, s.ws, "--runner", s.runner, "--allow-write", extra, "--json-report", report, "--", "/bin/sh", "-c", "touch "+marker+"; exit 7")
			return errs, code
		}
		for _, root := range []string{s.ws, extra} {
			for _, depth := range []string{"out", "sub/out"} {
				t.Run(filepath.Base(root)+"/"+depth, func(t *testing.T) {
					link := filepath.Join(root, depth)
					os.MkdirAll(filepath.Dir(link), 0o755)
					os.Remove(link)
					write(t, filepath.Join(decoy, "report.json"), "precious\n")
					os.Remove(filepath.Join(decoy, "new.json"))
					// The first run plants the link, as any command may.
					if _, errs, code := cli(t, s.ws, "--runner", s.runner, "--allow-write", extra, "--", "ln", "-s", decoy, link); code != 0 {
						t.Fatalf("planting run: exit %d, stderr %q", code, errs)
					}
					if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
						t.Fatalf("the command did not plant the link (%v): the attack never started", err)
					}
					for _, name := range []string{"report.json", "new.json"} {
						marker := filepath.Join(s.ws, "ran")
						os.Remove(marker)
						errs, code := run(filepath.Join(link, name), marker)
						if code != 125 || !strings.Contains(errs, "sandbox-run: INVALID_POLICY:") || !strings.Contains(errs, "symbolic link inside the writable root") {
							t.Errorf("%s: exit %d, stderr %q; want 125 and INVALID_POLICY naming the link", name, code, errs)
						}
						wantAbsent(t, marker)
					}
					wantContent(t, filepath.Join(decoy, "report.json"), "precious\n")
					wantAbsent(t, filepath.Join(decoy, "new.json"))
					// A link outside the roots that leads through the
					// planted one is refused as well.
					via := filepath.Join(s.base, "via")
					os.Remove(via)
					if err := os.Symlink(link, via); err != nil {
						t.Fatal(err)
					}
					marker := filepath.Join(s.ws, "ran")
					if errs, code := run(filepath.Join(via, "report.json"), marker); code != 125 || !strings.Contains(errs, "INVALID_POLICY") {
						t.Errorf("through %s: exit %d, stderr %q; want 125 and INVALID_POLICY", via, code, errs)
					}
					wantAbsent(t, marker)
					wantContent(t, filepath.Join(decoy, "report.json"), "precious\n")
					os.Remove(link)
				})
			}
		}

		// A writable root that a policy file gives is as much the
		// command's as one a flag gives.
		fromFile := filepath.Join(s.base, "fromfile")
		os.Mkdir(fromFile, 0o755)
		policy := writeFile(t, filepath.Join(s.base, "policy.json"), `{"mode": "workspace-write", "workspace": "`+s.ws+`", "writable_roots": ["`+fromFile+`"]}`)
		link := filepath.Join(fromFile, "out")
		if _, errs, code := cli(t, s.ws, "--runner", s.runner, "--policy", policy, "--", "ln", "-s", decoy, link); code != 0 {
			t.Fatalf("planting run under the policy file: exit %d, stderr %q", code, errs)
		}
		marker := filepath.Join(s.ws, "ran")
		os.Remove(marker)
		if _, errs, code := cli(t, s.ws, "--runner", s.runner, "--policy", policy, "--json-report", filepath.Join(link, "report.json"), "--", "touch", marker); code != 125 || !strings.Contains(errs, "symbolic link inside the writable root") {
			t.Errorf("a link in a policy file's writable root: exit %d, stderr %q; want 125 and INVALID_POLICY naming the link", code, errs)
		}
		wantAbsent(t, marker)
		wantContent(t, filepath.Join(decoy, "report.json"), "precious\n")

		// Positive controls: a real directory in the workspace, and a link
		// the user made outside every writable root (as /tmp ->
		// /private/tmp), which leads into the workspace.
		real := filepath.Join(s.ws, "out")
		os.Remove(real)
		if err := os.Mkdir(real, 0o755); err != nil {
			t.Fatal(err)
		}
		alias := filepath.Join(s.base, "alias")
		if err := os.Symlink(s.ws, alias); err != nil {
			t.Fatal(err)
		}
		for _, report := range []string{filepath.Join(real, "report.json"), filepath.Join(alias, "out", "report.json")} {
			os.Remove(filepath.Join(real, "report.json"))
			marker := filepath.Join(s.ws, "ran")
			os.Remove(marker)
			if errs, code := run(report, marker); code != 7 {
				t.Errorf("control %s: exit %d, stderr %q; want the command's 7", report, code, errs)
			}
			wantContent(t, marker, "")
			b, err := os.ReadFile(filepath.Join(real, "report.json"))
			if err != nil || !strings.Contains(string(b), `"exit_code": 7`) {
				t.Errorf("control %s: report %q (%v)", report, b, err)
			}
		}
	})
}

// TestSquattedTempParent: another user who creates the per-user temp
// parent (<TMPDIR>/sandbox-local-<uid>) first must not make every wrap
// SANDBOX_UNAVAILABLE, nor get the wraps' private dirs: the provider falls
// back to a parent of its own, and finds it again on the next wrap. Root
// plants it as another user's (nobody's) directory; an ordinary user, who
// cannot, plants an open one (mode 0777) and a symlink to a decoy.
func TestSquattedTempParent(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		for _, kind := range []string{"another user's", "open to all", "symlink"} {
			t.Run(kind, func(t *testing.T) {
				tmp := t.TempDir()
				t.Setenv("TMPDIR", tmp)
				squat := filepath.Join(tmp, "sandbox-local-"+strconv.Itoa(os.Getuid()))
				decoy := filepath.Join(tmp, "decoy")
				os.Mkdir(decoy, 0o777)
				switch kind {
				case "another user's":
					if os.Geteuid() != 0 {
						t.Skip("only root can make a directory owned by another user; the other cases run here")
					}
					os.Mkdir(squat, 0o777)
					os.Chmod(squat, 0o777)
					if err := os.Chown(squat, 65534, 65534); err != nil {
						t.Fatal(err)
					}
				case "open to all":
					os.Mkdir(squat, 0o777)
					os.Chmod(squat, 0o777)
				case "symlink":
					os.Symlink(decoy, squat)
				}
				var dirs []string
				for i := 0; i < 2; i++ {
					w := s.wrap(s.policy(), self(t), toolArg, "write-in-env-dir", "TMPDIR", "f")
					if r := s.spawn(w, nil); r.code != 0 {
						t.Fatalf("wrap %d with a squatted parent: exit %d stderr %q", i, r.code, r.stderr)
					}
					if strings.HasPrefix(w.TempDir, squat+"/") || strings.HasPrefix(w.TempDir, decoy+"/") {
						t.Errorf("the temp dir %s is inside the squatted parent", w.TempDir)
					}
					dirs = append(dirs, filepath.Dir(w.TempDir))
					w.Cleanup()
				}
				if dirs[0] != dirs[1] || !strings.HasPrefix(filepath.Base(dirs[0]), "sandbox-local-"+strconv.Itoa(os.Getuid())+"-") {
					t.Errorf("fallback parents %v: want one sandbox-local-<uid>-* dir, found again", dirs)
				}
				if ents, _ := os.ReadDir(decoy); len(ents) != 0 {
					t.Errorf("the decoy got %d entries", len(ents))
				}
				if kind != "symlink" {
					if ents, _ := os.ReadDir(squat); len(ents) != 0 {
						t.Errorf("the squatted parent got %d entries", len(ents))
					}
				}
			})
		}
	})
}

// TestVerdictCacheOutOfReach: the runner verdict cache lives in the
// per-user temp parent. A command must not be able to forge it (a forged
// verdict would make every later run a runner failure for an hour, on a
// machine where the preferred runner fails at launch): no policy may make
// that parent writable, and a command cannot write beside its own temp dir.
func TestVerdictCacheOutOfReach(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		tmp, err := filepath.EvalSymlinks(os.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		pol := s.policy()
		pol.WritableRoots = []string{tmp}
		if _, err := s.p.Wrap(t.Context(), sandboxRequest(pol, "/bin/true")); !errors.Is(err, sandbox.ErrInvalidPolicy) || !strings.Contains(err.Error(), "holds the temp directory") {
			t.Errorf("a writable root holding the temp directory: %v, want INVALID_POLICY", err)
		}
		w := s.wrap(s.policy(), self(t), toolArg, "write", "")
		verdict := filepath.Join(filepath.Dir(w.TempDir), "verdict.json")
		os.Remove(verdict)
		w.Args[len(w.Args)-1] = verdict
		wantDenied(t, "forge the verdict beside the wrap's temp dir", toolAnswer(t, s.spawn(w, nil)))
		wantAbsent(t, verdict)
		// Positive control: the same write into its own temp dir works.
		own := s.wrap(s.policy(), self(t), toolArg, "write-in-env-dir", "TMPDIR", "verdict.json")
		wantOK(t, "write into its own TMPDIR", toolAnswer(t, s.spawn(own, nil)))
	})
}

// wrapDirs counts this user's wrap dirs under the temp directory tmp.
func wrapDirs(t *testing.T, tmp string) int {
	t.Helper()
	ds, _ := filepath.Glob(filepath.Join(tmp, "sandbox-local-"+strconv.Itoa(os.Getuid())+"*", "wrap-*"))
	return len(ds)
}

// TestCLISweepsStaleTempDirs: the CLI removes its wrap's temp dir after
// the command, so 20 runs leave none; a run killed by SIGKILL leaves its
// own, and the next run removes it.
func TestCLISweepsStaleTempDirs(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		tmp := filepath.Join(s.base, "tmp")
		if err := os.Mkdir(tmp, 0o700); err != nil {
			t.Fatal(err)
		}
		cliCmd := func(argv ...string) *exec.Cmd {
			cmd := exec.Command(helperBinary(t, "sandbox-run"), append([]string{"--runner", s.runner, "--"}, argv...)...)
			cmd.Dir, cmd.Env = s.ws, append(os.Environ(), "TMPDIR="+tmp)
			return cmd
		}
		for i := 0; i < 20; i++ {
			if out, err := cliCmd("/bin/true").CombinedOutput(); err != nil {
				t.Fatalf("run %d: %v %q", i, err, out)
			}
		}
		if n := wrapDirs(t, tmp); n != 0 {
			t.Errorf("%d wrap dirs after 20 runs; want 0", n)
		}
		killed := cliCmd("/bin/sh", "-c", "echo ready; exec sleep 60")
		out, err := killed.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := killed.Start(); err != nil {
			t.Fatal(err)
		}
		if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
			killed.Process.Kill()
			killed.Wait()
			t.Fatalf("the run to kill said %q, want ready", line)
		}
		killed.Process.Kill()
		killed.Wait()
		if n := wrapDirs(t, tmp); n != 1 {
			t.Fatalf("control: %d wrap dirs after a run killed by SIGKILL; want its own, 1", n)
		}
		if out, err := cliCmd("/bin/true").CombinedOutput(); err != nil {
			t.Fatalf("the run after: %v %q", err, out)
		}
		if n := wrapDirs(t, tmp); n != 0 {
			t.Errorf("%d wrap dirs after the run that followed a SIGKILLed one; want 0", n)
		}
	})
}
