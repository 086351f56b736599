// Command benchguard measures what the namespaces runner's guard costs a
// command that creates files (docs/runners/namespaces.md, "Cost"): the
// same command under namespaces with the guard (the default policy in a
// workspace without the default tool configs: every one is guarded) and
// without it (every tool config released, no .git: nothing to guard, no
// listener), rounds interleaved, each in a fresh workspace.
//
//	go run ./scripts/benchguard [-rounds 15] [-n 20000] [-dir /var/tmp]
//
// The command is this binary again: it creates N new files with
// open(O_CREAT) and closes them, then opens the same files again for
// writing without O_CREAT (handed to the guard too, which refuses writing
// to a protected name a host process replaced), and prints the
// microseconds per call of each. Put -dir on a tmpfs to measure the guard
// rather than the disk.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/bo-agent/sandbox-local/launcher"
	"github.com/bo-agent/sandbox-local/sandbox"
)

func main() {
	if launcher.Init() {
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "create" {
		create(os.Args[2])
		return
	}
	rounds := flag.Int("rounds", 15, "rounds (each runs both variants once)")
	n := flag.Int("n", 20000, "files each run creates")
	dir := flag.String("dir", "/var/tmp", "where the workspaces are made (a tmpfs measures the guard, not the disk)")
	flag.Parse()
	if err := run(*rounds, *n, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "benchguard:", err)
		os.Exit(1)
	}
}

// create is the command: N creates, then N opens for writing, in microseconds
// per call.
func create(arg string) {
	n, err := strconv.Atoi(arg)
	if err != nil {
		panic(err)
	}
	per := func(fl int) float64 {
		start := time.Now()
		for i := range n {
			fd, err := syscall.Open("f"+strconv.Itoa(i), fl|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644)
			if err != nil {
				panic(err)
			}
			syscall.Close(fd)
		}
		return float64(time.Since(start).Nanoseconds()) / float64(n) / 1000
	}
	c := per(syscall.O_CREAT)
	p := per(0)
	fmt.Printf("%f %f\n", c, p)
}

func run(rounds, n int, dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	p := sandbox.New(sandbox.Config{Runners: []string{sandbox.RunnerNamespaces}})
	variants := []struct {
		name     string
		released []string
	}{{"guard", nil}, {"no guard", sandbox.DefaultToolConfigs()}}
	creates := map[string][]float64{}
	plains := map[string][]float64{}
	for range rounds {
		for _, v := range variants {
			ws, err := os.MkdirTemp(dir, "benchguard-")
			if err != nil {
				return err
			}
			pol := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws, WritableConfigs: v.released}
			w, err := p.Wrap(context.Background(), sandbox.Request{Argv: []string{self, "create", strconv.Itoa(n)}, Policy: pol})
			if err != nil {
				os.RemoveAll(ws)
				return err
			}
			var out bytes.Buffer
			cmd := w.Command(context.Background())
			cmd.Stdout, cmd.Stderr = &out, os.Stderr
			err = cmd.Run()
			w.Cleanup()
			os.RemoveAll(ws)
			if err != nil {
				return fmt.Errorf("%s: %v", v.name, err)
			}
			var c, pl float64
			if _, err := fmt.Sscan(out.String(), &c, &pl); err != nil {
				return fmt.Errorf("%s: output %q", v.name, out.String())
			}
			creates[v.name] = append(creates[v.name], c)
			plains[v.name] = append(plains[v.name], pl)
		}
	}
	fmt.Printf("%d rounds, %d files each, in %s\n", rounds, n, dir)
	fmt.Printf("%-9s %28s %24s\n", "variant", "open(O_CREAT) us median (p25-p75)", "open(O_WRONLY) us median")
	for _, v := range variants {
		c, pl := creates[v.name], plains[v.name]
		fmt.Printf("%-9s %14.1f (%.1f-%.1f) %24.2f\n", v.name, q(c, 0.5), q(c, 0.25), q(c, 0.75), q(pl, 0.5))
	}
	return nil
}

// q is the quantile f of xs (nearest rank).
func q(xs []float64, f float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[int(f*float64(len(s)-1)+0.5)]
}
