//go:build linux

package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// The launch-overhead benchmarks: run them with
//
//	go test -run '^$' -bench . -benchtime 200x ./integration/
//
// Each iteration starts /bin/true once and waits for it.

func benchWorkspace(b *testing.B) string {
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return ws
}

func runOrFail(b *testing.B, cmd *exec.Cmd) {
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
}

// BenchmarkTrueBare is the baseline: /bin/true with no sandbox.
func BenchmarkTrueBare(b *testing.B) {
	for b.Loop() {
		runOrFail(b, exec.Command("/bin/true"))
	}
}

// BenchmarkTrueFloor is /bin/true behind a minimal Go binary that only
// execs it: the cost of one Go start.
func BenchmarkTrueFloor(b *testing.B) {
	floor := buildHelper(b, "floor", nil)
	for b.Loop() {
		runOrFail(b, exec.Command(floor, "/bin/true"))
	}
}

// BenchmarkTrueLandlock and BenchmarkTrueNamespaces are what an agent pays
// per command with the library: Wrap, spawn, wait, Cleanup.
func BenchmarkTrueLandlock(b *testing.B)   { benchRunner(b, "landlock") }
func BenchmarkTrueNamespaces(b *testing.B) { benchRunner(b, "namespaces") }

func benchRunner(b *testing.B, runner string) {
	p := sandbox.New(sandbox.Config{Runners: []string{runner}})
	pol := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: benchWorkspace(b)}
	ctx := context.Background()
	for b.Loop() {
		w, err := p.Wrap(ctx, sandbox.Request{Argv: []string{"/bin/true"}, Policy: pol})
		if err != nil {
			b.Fatal(err)
		}
		runOrFail(b, w.Command(ctx))
		w.Cleanup()
	}
}

// BenchmarkWrap is Wrap and Cleanup alone, without spawning.
func BenchmarkWrap(b *testing.B) {
	benchWrap(b, sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: benchWorkspace(b)})
}

func benchWrap(b *testing.B, pol sandbox.Policy) {
	p := sandbox.New(sandbox.Config{Runners: []string{"landlock"}})
	ctx := context.Background()
	for b.Loop() {
		w, err := p.Wrap(ctx, sandbox.Request{Argv: []string{"/bin/true"}, Policy: pol})
		if err != nil {
			b.Fatal(err)
		}
		w.Cleanup()
	}
}

// BenchmarkTrueCLI is sandbox-run -- /bin/true: landlock confining the
// CLI's own process (one Go start), dynamically and statically linked, and
// namespaces (the CLI execs itself as ns-run: two Go starts).
func BenchmarkTrueCLI(b *testing.B) {
	ws := benchWorkspace(b)
	static := []string{"-ldflags", "-linkmode external -extldflags -static"}
	for _, v := range []struct {
		name, runner string
		flags        []string
	}{
		{"landlock-dynamic", "landlock", nil},
		{"landlock-static", "landlock", static},
		{"namespaces-dynamic", "namespaces", nil},
	} {
		b.Run(v.name, func(b *testing.B) {
			cli := buildHelper(b, "../cmd/sandbox-run", v.flags)
			for b.Loop() {
				cmd := exec.Command(cli, "--runner", v.runner, "--workspace", ws, "--", "/bin/true")
				cmd.Dir = ws
				runOrFail(b, cmd)
			}
		})
	}
}

// BenchmarkTrueBwrap is Debian's bubblewrap with the closest equivalent
// policy, when it is installed.
func BenchmarkTrueBwrap(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("bwrap is not installed (apt-get install bubblewrap)")
	}
	ws := benchWorkspace(b)
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--bind", ws, ws, "--unshare-all", "--die-with-parent", "--new-session", "/bin/true"}
	for b.Loop() {
		runOrFail(b, exec.Command(bwrap, args...))
	}
}

// buildHelper builds a program of this module into a temp dir.
func buildHelper(b *testing.B, pkg string, flags []string) string {
	b.Helper()
	if filepath.Base(pkg) == pkg {
		if dir := os.Getenv("SBX_HELPERS"); dir != "" {
			return filepath.Join(dir, pkg)
		}
		pkg = "./testdata/" + pkg
	}
	out := filepath.Join(b.TempDir(), filepath.Base(pkg))
	args := append([]string{"build", "-o", out}, flags...)
	cmd := exec.Command("go", append(args, pkg)...)
	if o, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, o)
	}
	return out
}

// BenchmarkWrapScaling is Wrap and Cleanup as the policy grows: N extra
// writable roots and N deny-read paths.
func BenchmarkWrapScaling(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			base := benchWorkspace(b)
			pol := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: base}
			for i := range n {
				root := filepath.Join(base, "root"+strconv.Itoa(i))
				secret := filepath.Join(base, "secret"+strconv.Itoa(i))
				if err := os.Mkdir(root, 0o755); err != nil {
					b.Fatal(err)
				}
				os.Mkdir(secret, 0o700)
				pol.WritableRoots = append(pol.WritableRoots, root)
				pol.DenyRead = append(pol.DenyRead, secret)
			}
			benchWrap(b, pol)
		})
	}
}

// BenchmarkKillToGoneLandlock and BenchmarkKillToGoneNamespaces: SIGKILL
// of the launcher while the command waits for a background sleeper, until
// every process of the command is gone. gone-ms/op is that
// time alone; ns/op also holds the Wrap, the spawn and seeing the sleeper.
func BenchmarkKillToGoneLandlock(b *testing.B)   { benchKillToGone(b, "landlock") }
func BenchmarkKillToGoneNamespaces(b *testing.B) { benchKillToGone(b, "namespaces") }

func benchKillToGone(b *testing.B, runner string) {
	p := sandbox.New(sandbox.Config{Runners: []string{runner}})
	pol := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: benchWorkspace(b)}
	ctx := context.Background()
	var gone time.Duration
	for b.Loop() {
		marker := newMarker(b)
		w, err := p.Wrap(ctx, sandbox.Request{Argv: []string{"/bin/sh", "-c", markedScript(b, waitingScript, marker)}, Policy: pol})
		if err != nil {
			b.Fatal(err)
		}
		cmd := w.Command(ctx)
		startReady(b, cmd)
		sleeperAlive(b, marker)
		stop := time.Now()
		cmd.Process.Kill()
		cmd.Wait()
		for len(markedAlive(marker)) > 0 {
			if time.Since(stop) > goneBound {
				b.Fatalf("processes %v outlived the sandbox (%v after the kill)", markedAlive(marker), goneBound)
			}
			time.Sleep(time.Millisecond)
		}
		gone += time.Since(stop)
		w.Cleanup()
	}
	b.ReportMetric(float64(gone.Microseconds())/1000/float64(b.N), "gone-ms/op")
}
