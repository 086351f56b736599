// Command launchphases shows where a launch's time goes. It runs benchcmp
// for one variant under perf's scheduler and system-call tracepoints (low
// cost: no ptrace, no sampling), follows each launch's process tree from
// the spawn of the launcher to the exit of its last process, and prints the
// steps every launch shares with the median time from one to the next.
//
//	go run ./scripts/launchphases [-variant landlock] [-rounds 100] [-extra TRACEPOINT,...]
//
// It needs perf (apt-get install linux-perf) and root (or a low
// kernel.perf_event_paranoid). Each step is "process: event": the launch's
// processes are named P0 (the one the consumer spawned), P1, P2 ... in the
// order they appear; "thread" is a clone3 that starts a thread (cgo and
// the Go runtime), "fork" a new process, "exec NAME" a finished exec.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

var events = []string{
	"sched:sched_process_exec", "sched:sched_process_fork", "sched:sched_process_exit",
	"syscalls:sys_enter_clone3", "syscalls:sys_enter_unshare", "syscalls:sys_enter_pivot_root",
	"syscalls:sys_enter_landlock_create_ruleset", "syscalls:sys_enter_landlock_restrict_self",
	"syscalls:sys_enter_seccomp", "syscalls:sys_enter_execve",
}

func main() {
	variant := flag.String("variant", "landlock", "the benchcmp variant to trace (landlock, namespaces, floor, bwrap, ...)")
	rounds := flag.Int("rounds", 100, "launches to trace")
	extra := flag.String("extra", "", "more tracepoints, comma-separated (syscalls:sys_enter_exit_group,...)")
	flag.Parse()
	if *extra != "" {
		events = append(events, strings.Split(*extra, ",")...)
	}
	if err := run(*variant, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "launchphases:", err)
		os.Exit(1)
	}
}

func run(variant string, rounds int) error {
	dir, err := os.MkdirTemp("", "launchphases-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bench := filepath.Join(dir, "benchcmp")
	if out, err := exec.Command("go", "build", "-o", bench, "./scripts/benchcmp").CombinedOutput(); err != nil {
		return fmt.Errorf("build benchcmp (run from the repository root): %v %s", err, out)
	}
	data := filepath.Join(dir, "perf.data")
	args := []string{"record", "-q", "-o", data}
	for _, e := range events {
		args = append(args, "-e", e)
	}
	args = append(args, "--", bench, "-rounds", strconv.Itoa(rounds), "-only", "true", "-variants", variant)
	rec := exec.Command("perf", args...)
	rec.Stdout, rec.Stderr = os.Stdout, os.Stderr
	if err := rec.Run(); err != nil {
		return fmt.Errorf("perf record: %w", err)
	}
	out, err := exec.Command("perf", "script", "-i", data, "-F", "pid,tid,time,event,trace").Output()
	if err != nil {
		return fmt.Errorf("perf script: %w", err)
	}
	launches := split(parse(out), bench)
	if len(launches) == 0 {
		return fmt.Errorf("no launch of %s found in the trace", bench)
	}
	report(os.Stdout, variant, launches)
	return nil
}

// event is one tracepoint hit.
type event struct {
	pid, tid int
	at       time.Duration
	name     string // the tracepoint, without its group
	trace    string
}

var line = regexp.MustCompile(`^\s*(\d+)/(\d+)\s+([\d.]+):\s+\S+?:(\S+):\s?(.*)$`)

func parse(out []byte) []event {
	var evs []event
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		tid, _ := strconv.Atoi(m[2])
		sec, _ := strconv.ParseFloat(m[3], 64)
		evs = append(evs, event{pid, tid, time.Duration(sec * float64(time.Second)), m[4], m[5]})
	}
	return evs
}

func field(trace, key string) string {
	for _, f := range strings.Fields(trace) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// setup are the programs benchcmp runs to set up, not launches.
var setup = map[string]bool{"git": true, "go": true, "time": true}

// step is one event of a launch: what happened, and when after its start.
type step struct {
	label string
	at    time.Duration
}

// split cuts the trace into launches: a launch starts with an exec by a
// child of benchcmp (the launcher, or the binary a variant spawns) other
// than benchcmp's set-up, and holds the events of every process it starts.
func split(evs []event, bench string) [][]step {
	var launches [][]step
	benchPid := -1
	parent := map[int]int{}      // child pid -> parent pid (processes and threads)
	launch := map[int]int{}      // pid -> index of its launch
	names := map[int]string{}    // pid -> P0, P1, ...
	threadNext := map[int]bool{} // tid -> its next fork event is a thread's
	count := map[int]int{}       // launch -> processes named so far
	var starts []time.Duration
	for _, e := range evs {
		child := -1
		switch e.name {
		case "sched_process_exec":
			if benchPid < 0 && field(e.trace, "filename") == bench {
				benchPid = e.pid
				continue
			}
			if setup[filepath.Base(field(e.trace, "filename"))] {
				continue // benchcmp's own set-up, not a launch
			}
			if _, in := launch[e.pid]; !in && parent[e.pid] == benchPid && benchPid >= 0 {
				launch[e.pid] = len(launches)
				names[e.pid] = "P0"
				count[len(launches)] = 1
				launches = append(launches, nil)
				starts = append(starts, e.at)
			}
		case "sched_process_fork":
			child, _ = strconv.Atoi(field(e.trace, "child_pid"))
			parent[child] = e.pid
			if threadNext[e.tid] {
				threadNext[e.tid] = false
				continue // a thread of e.pid, recorded at its clone3
			}
			if i, in := launch[e.pid]; in {
				launch[child] = i
				names[child] = fmt.Sprintf("P%d", count[i])
				count[i]++
			}
		case "sys_enter_clone3":
			threadNext[e.tid] = true
		}
		i, in := launch[e.pid]
		if !in {
			continue
		}
		label := names[e.pid] + ": "
		switch e.name {
		case "sched_process_exec":
			f := field(e.trace, "filename")
			if f == bench {
				f = "launcher"
			}
			label += "exec " + filepath.Base(f)
		case "sched_process_fork":
			label += "fork " + names[child]
		case "sched_process_exit":
			if field(e.trace, "group_dead") != "true" {
				continue
			}
			label += "exit"
		case "sys_enter_clone3":
			label += "thread"
		default:
			label += strings.TrimPrefix(e.name, "sys_enter_")
		}
		launches[i] = append(launches[i], step{label, e.at - starts[i]})
	}
	return launches
}

// report prints the steps of the most common sequence of steps, with the
// median time of each from the step before and from the start.
func report(w *os.File, variant string, launches [][]step) {
	seqs := map[string][][]time.Duration{}
	for _, l := range launches {
		var labels []string
		var ats []time.Duration
		for _, s := range l {
			labels = append(labels, s.label)
			ats = append(ats, s.at)
		}
		key := strings.Join(labels, "\n")
		seqs[key] = append(seqs[key], ats)
	}
	best := ""
	for k, v := range seqs {
		if len(v) > len(seqs[best]) {
			best = k
		}
	}
	steps := strings.Split(best, "\n")
	runs := seqs[best]
	fmt.Fprintf(w, "variant %s: %d launches traced, %d share the most common sequence of %d steps\n",
		variant, len(launches), len(runs), len(steps))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "step\tfrom the one before\tfrom the start\t\n")
	for i, s := range steps {
		var delta, at []time.Duration
		for _, r := range runs {
			at = append(at, r[i])
			if i > 0 {
				delta = append(delta, r[i]-r[i-1])
			} else {
				delta = append(delta, 0)
			}
		}
		fmt.Fprintf(tw, "%s\t%.3f ms\t%.3f ms\t\n", s, ms(median(delta)), ms(median(at)))
	}
	tw.Flush()
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
