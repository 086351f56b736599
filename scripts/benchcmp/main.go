// Command benchcmp measures launch overhead: every
// variant runs once per round, rounds interleaved (A B C A B C ...), so
// machine noise hits all of them alike; it reports medians, ratios to the
// Go floor and to bwrap, the quartiles around them (the spread), and the
// peak RSS of the launcher process.
//
//	go run ./scripts/benchcmp [-rounds 200] [-only true] [-variants landlock,floor]
//
// Variants: no sandbox; a floor Go binary that only execs; landlock and
// namespaces through the library (Wrap, spawn, wait, Cleanup), with
// network deny and with the proxied network; the CLI
// with the landlock runner, dynamically and statically linked (cgo), and
// built with CGO_ENABLED=0 (the Go chain);
// Debian's bwrap with the closest policy, when installed. Commands: /bin/true,
// sh -c 'exit 0', and git status in a small repository; with -work, the
// file-heavy workloads of work.go instead (-rounds 7 is plenty).
//
// -against REV builds the CLI of git revision REV too (checked out in a
// temporary git worktree) and runs its CLI variants, named NAME@REV, in
// the same interleaved rounds beside the current tree's: a change's cost
// measured against its base in one run, under the same noise.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bo-agent/sandbox-local/launcher"
	"github.com/bo-agent/sandbox-local/sandbox"
)

type variant struct {
	name string
	run  func(argv []string) (time.Duration, error) // wall time
}

func main() {
	if launcher.Init() {
		return
	}
	rounds := flag.Int("rounds", 200, "rounds per command")
	only := flag.String("only", "", "run only the commands whose name starts with this (true, sh, git)")
	names := flag.String("variants", "", "run only these variants, comma-separated (landlock,namespaces); empty: all")
	work := flag.Bool("work", false, "time file-heavy work (untar of GOROOT/src, chmod -R) instead of launches; as root on a tmpfs")
	against := flag.String("against", "", "also run the CLI variants of the CLI built at this git `REV`, named NAME@REV")
	flag.Parse()
	if err := run(*rounds, *only, *names, *against, *work); err != nil {
		fmt.Fprintln(os.Stderr, "benchcmp:", err)
		os.Exit(1)
	}
}

func run(rounds int, only, names, against string, work bool) error {
	dir, err := os.MkdirTemp("/var/tmp", "benchcmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if work {
		d, done, err := workDir()
		if err != nil {
			return err
		}
		defer done()
		dir = d
	}
	ws := filepath.Join(dir, "repo")
	if err := os.Mkdir(ws, 0o755); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "b@example.com"}, {"config", "user.name", "b"}} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v %s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(ws, "f"), []byte("x\n"), 0o644)
	floor := filepath.Join(dir, "floor")
	if out, err := exec.Command("go", "build", "-o", floor, "./integration/testdata/floor").CombinedOutput(); err != nil {
		return fmt.Errorf("build the floor (run from the repository root): %v %s", err, out)
	}
	// The CLI built three ways: with cgo (the C landlock launcher), static,
	// and with CGO_ENABLED=0 (the Go chain), so the two landlock launchers
	// are compared in one run behind the same CLI.
	clis := map[string]string{"cli-dynamic": filepath.Join(dir, "cli-dynamic"), "cli-static": filepath.Join(dir, "cli-static"),
		"cli-nocgo": filepath.Join(dir, "cli-nocgo")}
	if !withCgo {
		delete(clis, "cli-static") // external linking needs cgo
		delete(clis, "cli-nocgo")
		fmt.Println("build: CGO_ENABLED=0: landlock's launcher is the Go chain; no namespaces runner")
	}
	if err := buildCLIs(".", clis); err != nil {
		return err
	}
	var base map[string]string // the CLIs of -against's revision
	if against != "" {
		src, done, err := checkout(dir, against)
		if err != nil {
			return err
		}
		defer done()
		base = map[string]string{}
		for name, out := range clis {
			base[name] = out + "@base"
		}
		if err := buildCLIs(src, base); err != nil {
			return fmt.Errorf("-against %s: %w", against, err)
		}
	}
	pol := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws}
	// The proxied network: a proxy started and stopped per wrap, and for
	// namespaces the bridge and the listener handed over at launch.
	proxied := pol
	proxied.Network, proxied.AllowDomains = sandbox.NetworkProxied, []string{"example.com"}
	// Without warming from the user's caches: under namespaces no overlay
	// of the user's Go module cache (which the default mounts when the
	// user has one), so the pair shows what it costs a launch.
	nowarm := pol
	nowarm.Caches.NoWarm = true
	variants := []variant{
		{"bare", func(argv []string) (time.Duration, error) { return timed(exec.Command(argv[0], argv[1:]...), ws) }},
		{"floor", func(argv []string) (time.Duration, error) {
			return timed(exec.Command(floor, argv...), ws)
		}},
		library(sandbox.RunnerLandlock, pol, ws),
		library(sandbox.RunnerNamespaces, pol, ws),
		library(sandbox.RunnerNamespaces+"-nowarm", nowarm, ws),
		library(sandbox.RunnerLandlock+"-proxied", proxied, ws),
		library(sandbox.RunnerNamespaces+"-proxied", proxied, ws),
		cli("cli-landlock-dyn", sandbox.RunnerLandlock, clis["cli-dynamic"], ws),
		cli("cli-landlock-static", sandbox.RunnerLandlock, clis["cli-static"], ws),
		cli("cli-landlock-nocgo", sandbox.RunnerLandlock, clis["cli-nocgo"], ws),
		cli("cli-namespaces", sandbox.RunnerNamespaces, clis["cli-dynamic"], ws),
	}
	if !withCgo {
		variants = slices.DeleteFunc(variants, func(v variant) bool {
			return strings.Contains(v.name, sandbox.RunnerNamespaces) || v.name == "cli-landlock-static" || v.name == "cli-landlock-nocgo"
		})
	}
	if base != nil {
		// Each CLI variant of the revision right after the current one.
		var with []variant
		for _, v := range variants {
			with = append(with, v)
			if bin := cliBins[v.name]; bin != "" {
				with = append(with, cli(v.name+"@"+against, cliRunners[v.name], base[bin], ws))
			}
		}
		variants = with
	}
	if bwrap, err := exec.LookPath("bwrap"); err == nil {
		variants = append(variants, variant{"bwrap", func(argv []string) (time.Duration, error) {
			args := append([]string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
				"--bind", ws, ws, "--ro-bind", ws + "/.git/hooks", ws + "/.git/hooks", "--ro-bind", ws + "/.git/config", ws + "/.git/config",
				"--unshare-all", "--die-with-parent", "--new-session", "--chdir", ws}, argv...)
			return timed(exec.Command(bwrap, args...), ws)
		}})
	}
	if names != "" {
		keep := strings.Split(names, ",")
		variants = slices.DeleteFunc(variants, func(v variant) bool {
			name, _, _ := strings.Cut(v.name, "@")
			return !slices.Contains(keep, name)
		})
		if len(variants) == 0 {
			return fmt.Errorf("no variant named in -variants %q", names)
		}
	}
	if work {
		if names == "" { // the runners and the Go chain against bare and bwrap
			variants = slices.DeleteFunc(variants, func(v variant) bool {
				name, _, _ := strings.Cut(v.name, "@")
				return name == "floor" || strings.HasSuffix(name, "-proxied") || name == "cli-landlock-static"
			})
		}
		tarball, err := sourceTar(dir)
		if err != nil {
			return err
		}
		return runWork(rounds, variants, ws, tarball)
	}
	commands := [][]string{{"/bin/true"}, {"/bin/sh", "-c", "exit 0"}, {"git", "status", "--short"}}
	// A selection (scripts/launchphases traces one) spawns nothing else.
	if names == "" {
		if err := peakRSS(dir, ws, floor, pol); err != nil {
			fmt.Fprintln(os.Stderr, "benchcmp: peak RSS:", err)
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "command\tvariant\tmedian\tp25-p75\tvs floor\tvs bwrap\t\n")
	for _, argv := range commands {
		if !strings.HasPrefix(filepath.Base(argv[0]), only) {
			continue
		}
		path, err := exec.LookPath(argv[0])
		if err != nil {
			return err
		}
		argv = append([]string{path}, argv[1:]...)
		times := make([][]time.Duration, len(variants))
		for r := 0; r < rounds; r++ {
			for i, v := range variants {
				d, err := v.run(argv)
				if err != nil {
					return fmt.Errorf("%s %v: %w", v.name, argv, err)
				}
				times[i] = append(times[i], d)
			}
		}
		med := make([]time.Duration, len(variants))
		for i := range variants {
			med[i] = quantile(times[i], 2)
		}
		for i, v := range variants {
			fmt.Fprintf(tw, "%s\t%s\t%.2f ms\t%.2f-%.2f\t%s\t%s\t\n", filepath.Base(argv[0])+more(argv), v.name, ms(med[i]),
				ms(quantile(times[i], 1)), ms(quantile(times[i], 3)),
				ratio(med[i], med, variants, "floor"), ratio(med[i], med, variants, "bwrap"))
		}
	}
	return tw.Flush()
}

// library is a variant that wraps through the provider, as an agent does;
// name is the runner's, or the runner's and a suffix after a dash.
func library(name string, pol sandbox.Policy, ws string) variant {
	runner, _, _ := strings.Cut(name, "-")
	p := sandbox.New(sandbox.Config{Runners: []string{runner}})
	return variant{name, func(argv []string) (time.Duration, error) {
		ctx := context.Background()
		start := time.Now()
		w, err := p.Wrap(ctx, sandbox.Request{Argv: argv, Policy: pol})
		if err != nil {
			return 0, err
		}
		defer w.Cleanup()
		_, err = timed(w.Command(ctx), ws)
		return time.Since(start), err // Wrap, spawn and wait
	}}
}

// cliBins names, for each CLI variant, its build (a key of the clis map),
// and cliRunners its runner.
var (
	cliBins = map[string]string{"cli-landlock-dyn": "cli-dynamic", "cli-landlock-static": "cli-static",
		"cli-landlock-nocgo": "cli-nocgo", "cli-namespaces": "cli-dynamic"}
	cliRunners = map[string]string{"cli-landlock-dyn": sandbox.RunnerLandlock, "cli-landlock-static": sandbox.RunnerLandlock,
		"cli-landlock-nocgo": sandbox.RunnerLandlock, "cli-namespaces": sandbox.RunnerNamespaces}
)

// buildCLIs builds sandbox-run from the module at src once per entry of
// outs (name: path): cli-static statically linked, cli-nocgo with
// CGO_ENABLED=0, the others as go build does by default.
func buildCLIs(src string, outs map[string]string) error {
	for name, out := range outs {
		if !filepath.IsAbs(out) {
			return fmt.Errorf("build %s: %s is not absolute", name, out)
		}
		args := []string{"build", "-o", out}
		if name == "cli-static" {
			args = append(args, "-ldflags", "-linkmode external -extldflags -static")
		}
		build := exec.Command("go", append(args, "./cmd/sandbox-run")...)
		build.Dir = src
		if name == "cli-nocgo" {
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		if o, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build sandbox-run (%s): %v %s", name, err, o)
		}
	}
	return nil
}

// checkout checks git revision rev out in a detached worktree below dir
// and returns its path, and a function that removes the worktree again.
func checkout(dir, rev string) (string, func(), error) {
	src := filepath.Join(dir, "against")
	if out, err := exec.Command("git", "worktree", "add", "--detach", "--quiet", src, rev).CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("-against %s: git worktree add: %v %s", rev, err, out)
	}
	done := func() {
		if out, err := exec.Command("git", "worktree", "remove", "--force", src).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "benchcmp: git worktree remove %s: %v %s\n", src, err, out)
		}
	}
	return src, done, nil
}

// cli is a variant that runs sandbox-run --runner RUNNER (built
// dynamically or statically): the CLI's Go start, Wrap, the launcher and
// the command, Cleanup.
func cli(name, runner, bin, ws string) variant {
	return variant{name, func(argv []string) (time.Duration, error) {
		return timed(exec.Command(bin, append([]string{"--runner", runner, "--workspace", ws, "--"}, argv...)...), ws)
	}}
}

// timed runs cmd to completion and returns its wall time.
func timed(cmd *exec.Cmd, dir string) (time.Duration, error) {
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	return d, nil
}

// quantile returns the q-th quartile of ds (2: the median).
func quantile(ds []time.Duration, q int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)*q/4]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func ratio(d time.Duration, med []time.Duration, vs []variant, to string) string {
	for i, v := range vs {
		if v.name == to && med[i] > 0 {
			return fmt.Sprintf("%.2fx", float64(d)/float64(med[i]))
		}
	}
	return "-"
}

func more(argv []string) string {
	if len(argv) > 1 {
		return " ..."
	}
	return ""
}

// peakRSS prints, for /bin/true, the maximum resident set of each variant
// as GNU time measures it (the launcher and everything it runs). The
// launchers are reached through symlinks named after them in a directory
// put first in PATH, so that argv[0] is the launcher name reexec and the
// ns-run constructor dispatch on.
func peakRSS(dir, ws, floor string, pol sandbox.Policy) error {
	gnuTime := "/usr/bin/time"
	if _, err := os.Stat(gnuTime); err != nil {
		return fmt.Errorf("%s not installed (apt-get install time)", gnuTime)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return err
	}
	measure := func(env []string, argv ...string) (string, error) {
		cmd := exec.Command(gnuTime, append([]string{"-f", "%M"}, argv...)...)
		cmd.Dir, cmd.Env = ws, append(env, "PATH="+bin+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%v: %v: %s", argv, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return lines[len(lines)-1] + " KiB", nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "variant\tpeak RSS\t\n")
	rows := [][2]string{}
	v, err := measure(os.Environ(), "/bin/true")
	if err != nil {
		return err
	}
	rows = append(rows, [2]string{"bare", v})
	if v, err = measure(os.Environ(), floor, "/bin/true"); err != nil {
		return err
	}
	rows = append(rows, [2]string{"floor", v})
	runners := []string{sandbox.RunnerLandlock, sandbox.RunnerNamespaces}
	if !withCgo {
		runners = runners[:1]
	}
	for _, runner := range runners {
		w, err := sandbox.New(sandbox.Config{Runners: []string{runner}}).Wrap(context.Background(), sandbox.Request{Argv: []string{"/bin/true"}, Policy: pol})
		if err != nil {
			return err
		}
		link := filepath.Join(bin, w.Args[0])
		os.Remove(link)
		if err := os.Symlink(w.Path, link); err != nil {
			w.Cleanup()
			return err
		}
		v, err := measure(w.Env, w.Args...)
		w.Cleanup()
		if err != nil {
			return err
		}
		rows = append(rows, [2]string{runner, v})
	}
	if bwrap, err := exec.LookPath("bwrap"); err == nil {
		v, err := measure(os.Environ(), bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
			"--bind", ws, ws, "--unshare-all", "--die-with-parent", "/bin/true")
		if err != nil {
			return err
		}
		rows = append(rows, [2]string{"bwrap", v})
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t\n", r[0], r[1])
	}
	return tw.Flush()
}
