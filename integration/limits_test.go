//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// stormPy forks argv[1] children that sleep, and prints "ok" when all
// started, or the errno name of the fork that failed. argv[2] is a marker
// the children carry in their command line (fork keeps it), so the test
// can look for survivors.
const stormPy = `import errno, os, sys, time
for i in range(int(sys.argv[1])):
    try:
        pid = os.fork()
    except OSError as e:
        print(errno.errorcode.get(e.errno, str(e.errno)))
        sys.exit(1)
    if pid == 0:
        time.sleep(30)
        os._exit(0)
print("ok")
`

// limitOf returns the wrap's limit called name.
func limitOf(t *testing.T, w *sandbox.Wrapped, name string) sandbox.Limit {
	t.Helper()
	for _, l := range w.Limits {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("the wrap reports no %s limit: %+v", name, w.Limits)
	return sandbox.Limit{}
}

// limitGap reports whether the wrap has a limits gap about name.
func limitGap(w *sandbox.Wrapped, name string) bool {
	for _, g := range w.Gaps {
		if g.Area == sandbox.AreaLimits && strings.HasPrefix(g.Reason, name+" ") {
			return true
		}
	}
	return false
}

// wantNotHeld asserts what a wrap whose limit name is not held here says
// so: no mechanism, a note, a gap, and RequireFull refuses it.
func wantNotHeld(t *testing.T, s *sbx, pol sandbox.Policy, w *sandbox.Wrapped, name string) {
	t.Helper()
	l := limitOf(t, w, name)
	if l.Note == "" || !limitGap(w, name) || w.Enforcement != sandbox.Partial {
		t.Errorf("%s limit not held, but the report does not say so: limit %+v, gaps %v", name, l, w.Gaps)
	}
	pol.RequireFull = true
	if _, err := s.p.Wrap(context.Background(), sandboxRequest(pol, "true")); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("RequireFull with the %s limit not held: Wrap = %v, want SANDBOX_UNAVAILABLE", name, err)
	}
	t.Logf("%s limit not held here (%s runner, uid %d): %s", name, s.runner, os.Getuid(), l.Note)
}

// noSurvivors asserts that no process carrying marker in its command line
// is left, within 3 s: a fork storm's children end with the sandbox.
func noSurvivors(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		var left []string
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), marker) {
				left = append(left, filepath.Base(filepath.Dir(p)))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes of the fork storm outlived the sandbox: %v", len(left), left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wrapCgroups returns the cgroups the wrap's launcher joins (-cgroup).
func wrapCgroups(w *sandbox.Wrapped) []string {
	var out []string
	for i, a := range w.Args {
		if a == "-cgroup" && i+1 < len(w.Args) {
			out = append(out, w.Args[i+1])
		}
	}
	return out
}

// TestLimitsForkStorm: a command that tries to start 300 processes under a
// limit of 50 is stopped at the limit (fork fails with EAGAIN), and leaves
// nothing behind; with a limit of 400 the same command starts them all.
func TestLimitsForkStorm(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed for the fork storm")
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		marker := randomName("sbx-storm-")
		pol := s.policy()
		pol.Limits.MaxProcesses = 50
		w := s.wrap(pol, "python3", "-c", stormPy, "300", marker)
		l := limitOf(t, w, sandbox.LimitProcesses)
		if l.Value != 50 || l.Default {
			t.Errorf("process limit reported as %+v, want the policy's 50", l)
		}
		if l.Mechanism == "" {
			wantNotHeld(t, s, pol, w, sandbox.LimitProcesses)
			return
		}
		r := s.spawn(w, nil)
		if strings.TrimSpace(r.stdout) != "EAGAIN" || r.code != 1 {
			t.Errorf("fork storm under a limit of 50 (%s): exit %d, stdout %q, stderr %q; want EAGAIN", l.Mechanism, r.code, r.stdout, r.stderr)
		}
		noSurvivors(t, marker)
		if err := exec.Command("true").Run(); err != nil {
			t.Errorf("the host cannot start a process after the storm: %v", err)
		}

		pol.Limits.MaxProcesses = 400
		r = s.run(pol, "python3", "-c", stormPy, "300", marker)
		if strings.TrimSpace(r.stdout) != "ok" || r.code != 0 {
			t.Errorf("300 processes under a limit of 400: exit %d, stdout %q, stderr %q; want ok", r.code, r.stdout, r.stderr)
		}
		noSurvivors(t, marker)
	})
}

// TestLimitsDefaultProcesses: a policy without limits has the default
// process limit, reported as such, and no gap for it even where it is not
// held.
func TestLimitsDefaultProcesses(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		w := s.wrap(s.policy(), "true")
		l := limitOf(t, w, sandbox.LimitProcesses)
		if l.Value != sandbox.DefaultMaxProcesses || !l.Default {
			t.Errorf("default process limit reported as %+v", l)
		}
		if limitGap(w, sandbox.LimitProcesses) {
			t.Errorf("the default process limit made a gap: %v", w.Gaps)
		}
		if len(w.Limits) != 1 {
			t.Errorf("limits beyond the default: %+v", w.Limits)
		}
		if r := s.spawn(w, nil); r.code != 0 {
			t.Errorf("true under the default limits: exit %d, stderr %q", r.code, r.stderr)
		}
	})
}

// TestLimitsTempSize: under a temp dir limit of 8 MiB, writing 20 MB to
// $TMPDIR fails with ENOSPC, and 4 MB works (the namespaces runner's
// tmpfs); the landlock runner, which mounts nothing, reports the gap.
func TestLimitsTempSize(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		pol := s.policy()
		pol.Limits.MaxTempSize = 8 << 20
		fill := func(n string) *sandbox.Wrapped {
			return s.wrap(pol, "sh", "-c", `exec "$0" tool fill "$TMPDIR/big" "$1"`, self(t), n)
		}
		w := fill("20000000")
		l := limitOf(t, w, sandbox.LimitTempSize)
		if l.Value != 8<<20 {
			t.Errorf("temp size limit reported as %+v", l)
		}
		if l.Mechanism == "" {
			wantNotHeld(t, s, pol, w, sandbox.LimitTempSize)
			return
		}
		wantDenied(t, "write 20 MB to a temp dir of 8 MiB", toolAnswer(t, s.spawn(w, nil)), "ENOSPC")
		wantAbsent(t, filepath.Join(w.TempDir, "big")) // the host's temp dir holds nothing of it
		wantOK(t, "write 4 MB to a temp dir of 8 MiB", toolAnswer(t, s.spawn(fill("4000000"), nil)))
	})
}

// TestLimitsMemory: under a memory limit of 64 MiB, a program that
// allocates and touches 200 MB fails (out of memory under RLIMIT_AS,
// killed under a memory cgroup); under 512 MiB it succeeds.
func TestLimitsMemory(t *testing.T) {
	// tail -c N of a pipe keeps the last N bytes in memory, all written.
	const alloc = `head -c 210000000 /dev/zero | tail -c 200000000 >/dev/null; echo "tail=$?"`
	forEachRunner(t, func(t *testing.T, s *sbx) {
		pol := s.policy()
		pol.Limits.MaxMemory = 64 << 20
		w := s.wrap(pol, "sh", "-c", alloc)
		l := limitOf(t, w, sandbox.LimitMemory)
		if l.Value != 64<<20 || l.Mechanism == "" {
			t.Fatalf("memory limit reported as %+v", l)
		}
		r := s.spawn(w, nil)
		want := "tail=137" // killed by the kernel: the cgroup is full
		if l.Mechanism == sandbox.MechASRlimit {
			want = "tail=1" // its allocation refused: "memory exhausted"
			if !limitGap(w, sandbox.LimitMemory) {
				t.Errorf("a memory limit held per process only makes no gap: %v", w.Gaps)
			}
		}
		if got := strings.TrimSpace(r.stdout); got != want {
			t.Errorf("200 MB under a memory limit of 64 MiB (%s): %q (stderr %q), want %q", l.Mechanism, got, r.stderr, want)
		}
		pol.Limits.MaxMemory = 512 << 20
		r = s.run(pol, "sh", "-c", alloc)
		if got := strings.TrimSpace(r.stdout); got != "tail=0" {
			t.Errorf("200 MB under a memory limit of 512 MiB: %q (stderr %q), want tail=0", got, r.stderr)
		}
	})
}

// TestLimitsCannotBeRaised: the command cannot lift its process limit: it
// cannot raise RLIMIT_NPROC, write its cgroup's pids.max, or move itself
// out of its cgroup. The positive control: unconfined, the same writes
// to the cgroup work (the provider made it; the test is its owner).
func TestLimitsCannotBeRaised(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		pol := s.policy()
		pol.Limits.MaxProcesses = 50
		w := s.wrap(pol, "true")
		cgroups := wrapCgroups(w)
		switch l := limitOf(t, w, sandbox.LimitProcesses); l.Mechanism {
		case sandbox.MechNprocRlimit:
			r := s.run(pol, "python3", "-c", `import resource
try:
    resource.setrlimit(resource.RLIMIT_NPROC, (4096, 4096))
    print("ok")
except (ValueError, OSError) as e:
    print("EPERM")`)
			if got := strings.TrimSpace(r.stdout); got != "EPERM" {
				t.Errorf("raise RLIMIT_NPROC inside: %q (stderr %q), want EPERM", got, r.stderr)
			}
			r = s.run(pol, "python3", "-c", `import resource
resource.setrlimit(resource.RLIMIT_NPROC, (40, 50))
print("ok")`)
			if got := strings.TrimSpace(r.stdout); got != "ok" {
				t.Errorf("lower RLIMIT_NPROC inside (the control): %q (stderr %q), want ok", got, r.stderr)
			}
		case sandbox.MechPidsCgroup:
			if len(cgroups) == 0 {
				t.Fatalf("pids cgroup reported, none in the launcher's arguments: %q", w.Args)
			}
			for _, cg := range cgroups {
				wantDenied(t, "write pids.max inside", s.tool(pol, "write-value", filepath.Join(cg, "pids.max"), "max"))
				wantDenied(t, "leave the cgroup inside", s.tool(pol, "write-value", filepath.Join(filepath.Dir(cg), "cgroup.procs"), "0"))
				wantControl(t, "write pids.max unconfined", hostTool(t, "write-value", filepath.Join(cg, "pids.max"), "50"))
			}
		default:
			wantNotHeld(t, s, pol, w, sandbox.LimitProcesses)
		}
	})
}

// TestLimitsCgroupsRemoved: the cgroups a wrap makes are gone after its
// Cleanup, even when the command left processes behind.
func TestLimitsCgroupsRemoved(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		pol := s.policy()
		pol.Limits.MaxProcesses = 50
		w, err := s.p.Wrap(context.Background(), sandboxRequest(pol, "sh", "-c", "sleep 30 & sleep 30 & echo started"))
		if err != nil {
			t.Fatal(err)
		}
		cgroups := wrapCgroups(w)
		if len(cgroups) == 0 {
			w.Cleanup()
			t.Logf("no cgroup made here (process limit by %q): nothing to remove", limitOf(t, w, sandbox.LimitProcesses).Mechanism)
			return
		}
		for _, cg := range cgroups {
			if _, err := os.Stat(cg); err != nil {
				t.Fatalf("the wrap's cgroup %s: %v", cg, err)
			}
		}
		if r := s.spawn(w, nil); strings.TrimSpace(r.stdout) != "started" {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		if err := w.Cleanup(); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
		for _, cg := range cgroups {
			if _, err := os.Stat(cg); !os.IsNotExist(err) {
				t.Errorf("the cgroup %s is left after Cleanup (%v)", cg, err)
			}
		}
	})
}

// TestCLILimits: sandbox-run's --max-processes, --max-memory and
// --max-temp-size reach the wrap, its report names each limit and its
// mechanism, and a bad value is INVALID_POLICY naming the field, with the
// command not run.
func TestCLILimits(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		report := filepath.Join(s.base, "report.json")
		out, errs, code := cli(t, s.ws, "--runner", s.runner, "--json-report", report, "--max-processes", "50",
			"--max-memory", "64M", "--max-temp-size", "8M", "--", "/bin/sh", "-c", "echo ran")
		if code != 0 || out != "ran\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
		}
		var rep struct {
			Limits []sandbox.Limit `json:"limits"`
			Gaps   []sandbox.Gap   `json:"gaps"`
		}
		b, err := os.ReadFile(report)
		if err != nil || json.Unmarshal(b, &rep) != nil || len(rep.Limits) == 0 {
			t.Fatalf("report %s: %v %s", report, err, b)
		}
		want := map[string]int64{sandbox.LimitProcesses: 50, sandbox.LimitMemory: 64 << 20, sandbox.LimitTempSize: 8 << 20}
		for _, l := range rep.Limits {
			if want[l.Name] != l.Value {
				t.Errorf("report's limit %+v, want %s %d", l, l.Name, want[l.Name])
			}
			delete(want, l.Name)
			if l.Mechanism == "" && (!strings.Contains(gapText(rep.Gaps), l.Name+" limit not held") || !strings.Contains(errs, "partial enforcement")) {
				t.Errorf("%s limit not held, and the report's gaps and the notice do not say so: %q, %s", l.Name, errs, b)
			}
		}
		if len(want) > 0 {
			t.Errorf("the report names no %v limit: %s", want, b)
		}

		marker := filepath.Join(s.ws, "ran")
		for _, bad := range [][]string{{"--max-processes", "5"}, {"--max-memory", "1M"}, {"--max-temp-size", "12x"}} {
			_, errs, code := cli(t, s.ws, append(append([]string{"--runner", s.runner}, bad...), "--", "/bin/sh", "-c", "touch "+marker)...)
			field := "limits.max_" + strings.ReplaceAll(strings.TrimPrefix(bad[0], "--max-"), "-", "_")
			if code != 125 || (bad[1] != "12x" && !strings.Contains(errs, "INVALID_POLICY: "+field+" ")) {
				t.Errorf("%q: exit %d, stderr %q; want 125 and INVALID_POLICY naming %s", bad, code, errs, field)
			}
			wantAbsent(t, marker)
		}
	})
}

// TestLimitsFailClosed: a launcher that cannot hold a limit it was given
// fails with its signed line and exit 125, and the command never runs: a
// cgroup that cannot be joined (both runners), a temp dir size under
// landlock, which mounts nothing. The same wrap unchanged runs (the
// control).
func TestLimitsFailClosed(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		marker := filepath.Join(s.ws, "ran")
		cases := map[string][]string{"a cgroup that is not there": {"-cgroup", filepath.Join(s.base, "no-cgroup")}}
		if s.runner == "landlock" {
			cases["-tmpsize under landlock"] = []string{"-tmpsize", "8388608"}
		}
		for name, opts := range cases {
			w := s.wrap(s.policy(), self(t), toolArg, "write", marker)
			w.Args = withOptions(w.Args, opts...)
			r := s.spawn(w, nil)
			if r.code != 125 || !strings.HasPrefix(r.stderr, w.RunnerFailure.FatalPrefix) || w.Classify(r.code, []byte(r.stderr)).Kind != sandbox.OutcomeRunnerFailure {
				t.Errorf("%s: exit %d, stderr %q; want a runner failure", name, r.code, r.stderr)
			}
			wantAbsent(t, marker)
		}
		wantOK(t, "the same wrap unchanged", toolAnswer(t, s.run(s.policy(), self(t), toolArg, "write", marker)))
	})
}

// TestLimitsCgroupOfAKilledCLI: a CLI killed by SIGKILL cannot remove its
// cgroup; the next wrap that makes one there removes it (its name carries
// the dead CLI's pid).
func TestLimitsCgroupOfAKilledCLI(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		cgs := wrapCgroups(s.wrap(s.policy(), "true"))
		if len(cgs) == 0 {
			t.Logf("no cgroup made here (%s runner, uid %d): nothing to leave behind", s.runner, os.Getuid())
			return
		}
		cli := exec.Command(helperBinary(t, "sandbox-run"), "--runner", s.runner, "--quiet", "--", "sleep", "30")
		cli.Dir = s.ws
		if err := cli.Start(); err != nil {
			t.Fatal(err)
		}
		pattern := filepath.Join(filepath.Dir(cgs[0]), "sandbox-local-"+strconv.Itoa(cli.Process.Pid)+"-*")
		var left []string
		for deadline := time.Now().Add(10 * time.Second); len(left) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			left, _ = filepath.Glob(pattern)
		}
		cli.Process.Kill()
		cli.Wait()
		if len(left) == 0 {
			t.Fatalf("the CLI made no cgroup %s", pattern)
		}
		// The sandbox dies with the CLI (docs/contract.md, Lifetime); its
		// cgroup stays, empty.
		deadline := time.Now().Add(5 * time.Second)
		for {
			b, err := os.ReadFile(filepath.Join(left[0], "cgroup.procs"))
			if err != nil {
				t.Fatal(err)
			}
			if len(strings.TrimSpace(string(b))) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("processes still in the killed CLI's cgroup: %q", b)
			}
			time.Sleep(20 * time.Millisecond)
		}
		s.wrap(s.policy(), "true")
		if _, err := os.Stat(left[0]); !os.IsNotExist(err) {
			t.Errorf("the killed CLI's cgroup %s is left after the next wrap (%v)", left[0], err)
		}
	})
}

// gapText is a report's gaps as one string, "area: reason" each.
func gapText(gaps []sandbox.Gap) string {
	var b strings.Builder
	for _, g := range gaps {
		b.WriteString(g.String() + "; ")
	}
	return b.String()
}
