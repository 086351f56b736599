//go:build linux

package integration

// The terminal: an interactive command the user hands the terminal keeps
// working confined. The test is the user's terminal emulator: it opens a
// pseudo-terminal, starts the command as the session leader with the slave
// as its controlling terminal and stdio, types on the master and reads what
// the command draws there. Every case runs unconfined first (the control:
// a failure there is the harness's), then under each runner through the
// CLI (exec in place, and as its child with --json-report) and through the
// library's Wrap.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ptyWait bounds every wait for the terminal, a process or an event: a
// case that works takes a few milliseconds per step.
const ptyWait = 5 * time.Second

// launch starts argv the way one kind of consumer does.
type launch struct {
	runner string // "" for the unconfined control
	mode   string // unconfined, cli, cli-report, library
	ws     string // the command's working directory (the workspace)
	cmd    func(argv ...string) *exec.Cmd
}

var launchModes = []string{"cli", "cli-report", "library"}

// forEachLaunch runs fn unconfined, and fails the test there if the control
// fails; then under every runner in every launch mode, each in its own
// workspace.
func forEachLaunch(t *testing.T, fn func(t *testing.T, l launch)) {
	ok := t.Run("unconfined", func(t *testing.T) {
		ws := t.TempDir()
		fn(t, launch{mode: "unconfined", ws: ws, cmd: func(argv ...string) *exec.Cmd {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = ws
			return terminalEnv(cmd)
		}})
	})
	if !ok {
		t.Fatal("the unconfined control failed: the harness is wrong, not a sandbox")
	}
	for _, runner := range linuxRunners {
		for _, mode := range launchModes {
			t.Run(runner+"-"+mode, func(t *testing.T) {
				s := newSbx(t, runner)
				fn(t, launch{runner: runner, mode: mode, ws: s.ws, cmd: func(argv ...string) *exec.Cmd {
					if mode == "library" {
						return terminalEnv(s.wrap(s.policy(), argv...).Command(context.Background()))
					}
					opts := []string{"--runner", runner}
					if mode == "cli-report" {
						opts = append(opts, "--json-report", filepath.Join(s.base, "report.json"))
					}
					cmd := exec.Command(helperBinary(t, "sandbox-run"), append(append(opts, "--"), argv...)...)
					cmd.Dir = s.ws
					return terminalEnv(cmd)
				}})
			})
		}
	}
}

// terminalEnv gives a command what a terminal session has (TERM), and
// keeps bash's history and less's out of the real home (the control would
// write there); vim is told so by its -i NONE.
func terminalEnv(cmd *exec.Cmd) *exec.Cmd {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "TERM=xterm", "HISTFILE=", "LESSHISTFILE=-")
	return cmd
}

// terminal is the master side of a pseudo-terminal whose slave is the
// controlling terminal and stdio of a session the test started.
type terminal struct {
	t    *testing.T
	m    *os.File
	sid  int
	mu   sync.Mutex
	out  []byte // everything the session wrote
	seen int    // how much of out expect has consumed
	eof  bool
	grew chan struct{}
	done chan struct{} // closed once the session leader was reaped
	ps   *os.ProcessState
}

// startTerminal starts cmd as a session leader on a new 100x30 terminal.
func startTerminal(t *testing.T, cmd *exec.Cmd) *terminal {
	t.Helper()
	if cmd.Err != nil {
		t.Fatal(cmd.Err)
	}
	m, slave, err := newPty()
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 30, Col: 100}); err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	tm := &terminal{t: t, m: m, sid: cmd.Process.Pid, grew: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		cmd.Wait()
		tm.ps = cmd.ProcessState
		close(tm.done)
	}()
	go tm.read()
	t.Cleanup(func() {
		killSession(tm.sid)
		select {
		case <-tm.done:
		case <-time.After(ptyWait):
			t.Errorf("session %d still running after SIGKILL", tm.sid)
		}
		m.Close()
	})
	return tm
}

func (tm *terminal) read() {
	b := make([]byte, 4096)
	for {
		n, err := tm.m.Read(b)
		tm.mu.Lock()
		tm.out = append(tm.out, b[:n]...)
		tm.eof = err != nil // EIO: no slave is open any more
		tm.mu.Unlock()
		select {
		case tm.grew <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// transcript is the end of what the session wrote, for failure messages.
func (tm *terminal) transcript() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return strconv.Quote(string(tm.out[max(0, len(tm.out)-1500):]))
}

func (tm *terminal) send(keys string) {
	tm.t.Helper()
	if _, err := tm.m.WriteString(keys); err != nil {
		tm.t.Fatalf("type %q: %v", keys, err)
	}
}

// expect waits until the session writes want after what earlier expects
// consumed, and consumes up to its end.
func (tm *terminal) expect(want string) {
	tm.t.Helper()
	deadline := time.After(ptyWait)
	for {
		tm.mu.Lock()
		i := bytes.Index(tm.out[tm.seen:], []byte(want))
		if i >= 0 {
			tm.seen += i + len(want)
		}
		eof := tm.eof
		tm.mu.Unlock()
		if i >= 0 {
			return
		}
		if eof {
			tm.t.Fatalf("the terminal closed before %q appeared; it shows %s", want, tm.transcript())
		}
		select {
		case <-tm.grew:
		case <-deadline:
			tm.t.Fatalf("%q did not appear within %v; the terminal shows %s", want, ptyWait, tm.transcript())
		}
	}
}

// run types a command line and waits for want in its output.
func (tm *terminal) run(line, want string) {
	tm.t.Helper()
	tm.send(line + "\r")
	tm.expect(want)
}

// foreground is the terminal's foreground process group.
func (tm *terminal) foreground() int {
	tm.t.Helper()
	pgrp, err := unix.IoctlGetInt(int(tm.m.Fd()), unix.TIOCGPGRP)
	if err != nil {
		tm.t.Fatalf("TIOCGPGRP: %v", err)
	}
	return pgrp
}

// wait waits for the session leader to exit and returns how it ended.
func (tm *terminal) wait() string {
	tm.t.Helper()
	select {
	case <-tm.done:
		return waitOutcome(tm.ps.Sys().(syscall.WaitStatus))
	case <-time.After(ptyWait):
		tm.t.Fatalf("the session leader did not end within %v; the terminal shows %s", ptyWait, tm.transcript())
		return ""
	}
}

// waitOutcome says how a wait4 status ended or changed a process.
func waitOutcome(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exit %d", ws.ExitStatus())
	case ws.Signaled():
		return "killed by " + unix.SignalName(ws.Signal())
	case ws.Stopped():
		return "stopped by " + unix.SignalName(ws.StopSignal())
	case ws.Continued():
		return "continued"
	}
	return fmt.Sprintf("status %#x", int(ws))
}

// eventually polls cond until it holds, failing with what after ptyWait.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(ptyWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, ptyWait)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// proc is one line of /proc/PID/stat, as the test's pid namespace sees it.
type proc struct {
	pid, ppid, pgrp, sid int
	state                byte
}

func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 {
		return proc{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 4 {
		return proc{}, false
	}
	p := proc{pid: pid, state: f[0][0]}
	p.ppid, _ = strconv.Atoi(f[1])
	p.pgrp, _ = strconv.Atoi(f[2])
	p.sid, _ = strconv.Atoi(f[3])
	return p, true
}

func allProcs() []proc {
	ents, _ := os.ReadDir("/proc")
	var ps []proc
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if p, ok := readProc(pid); ok {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// killSession kills every process of session sid: what a command left
// behind in another process group (a background job) included.
func killSession(sid int) {
	for _, p := range allProcs() {
		if p.sid == sid {
			unix.Kill(p.pid, unix.SIGKILL)
		}
	}
}

// findCommand waits for the process running argv among root and its
// descendants (the command itself, not a launcher that will exec it) and
// returns its pid.
func findCommand(t *testing.T, root int, argv ...string) int {
	t.Helper()
	want := strings.Join(argv, "\x00") + "\x00"
	found := 0
	eventually(t, fmt.Sprintf("a process running %q under pid %d", argv, root), func() bool {
		ps := allProcs()
		in := map[int]bool{root: true}
		for grew := true; grew; {
			grew = false
			for _, p := range ps {
				if in[p.ppid] && !in[p.pid] {
					in[p.pid], grew = true, true
				}
			}
		}
		for pid := range in {
			if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); string(b) == want {
				found = pid
				return true
			}
		}
		return false
	})
	return found
}

// wantState waits until pid is stopped (T) or, stopped false, not stopped.
func wantState(t *testing.T, pid int, stopped bool) {
	t.Helper()
	eventually(t, fmt.Sprintf("pid %d stopped=%v", pid, stopped), func() bool {
		p, ok := readProc(pid)
		return ok && (p.state == 'T') == stopped
	})
}

// noJobControlWarnings fails if bash said it could not take the terminal.
func (tm *terminal) noJobControlWarnings() {
	tm.t.Helper()
	tm.mu.Lock()
	out := string(tm.out)
	tm.mu.Unlock()
	for _, w := range []string{"cannot set terminal process group", "no job control", "Inappropriate ioctl"} {
		if strings.Contains(out, w) {
			tm.t.Errorf("bash warned %q; the terminal shows %s", w, tm.transcript())
		}
	}
}

// TestPtyJobControl: an interactive bash handed the terminal has job
// control: it takes the terminal's foreground for itself and its jobs,
// Ctrl-Z stops the foreground job (and the shell gets the terminal back),
// bg and fg resume it, kill %1 ends it, Ctrl-C interrupts a foreground job
// and the shell survives, and exit 7 is the exit status.
func TestPtyJobControl(t *testing.T) {
	forEachLaunch(t, func(t *testing.T, l launch) {
		tm := startTerminal(t, l.cmd("bash", "--norc", "--noprofile", "-i"))
		tm.run("echo $((20+22))", "42") // the typed line echoes "$((20+22))", never 42
		shell := tm.foreground()
		away := func() bool { return tm.foreground() != shell }
		home := func() bool { return tm.foreground() == shell }

		tm.run("sleep 100 &", "[1] ")
		tm.run("jobs", "Running")
		sleep := findCommand(t, tm.sid, "sleep", "100")

		// fg gives the job the terminal and it runs (resumed if it was
		// stopped); Ctrl-Z stops it and the shell takes the terminal back.
		fgThenCtrlZ := func() {
			tm.run("fg", "sleep 100")
			wantState(t, sleep, false)
			eventually(t, "fg gives the job the terminal", away)
			tm.send("\x1a")
			tm.expect("Stopped")
			wantState(t, sleep, true)
			eventually(t, "the shell takes the terminal back after Ctrl-Z", home)
		}
		fgThenCtrlZ()
		tm.run("bg", "sleep 100 &")
		tm.run("jobs", "Running")
		wantState(t, sleep, false)
		fgThenCtrlZ()
		fgThenCtrlZ()

		tm.run("bg", "sleep 100 &")
		tm.run("kill %1; wait %1; echo status=$?", "status=143")
		tm.run("jobs; echo $((40+4))", "44")

		// Ctrl-C only once sleep runs: bash's child takes the terminal
		// before it stops ignoring SIGINT and execs.
		tm.send("sleep 100\r")
		findCommand(t, tm.sid, "sleep", "100")
		eventually(t, "a foreground sleep has the terminal", away)
		tm.send("\x03")
		tm.run("echo status=$?", "status=130")
		tm.run("echo $((40+5))", "45")

		tm.send("exit 7\r")
		if got := tm.wait(); got != "exit 7" {
			t.Errorf("exit 7: the session leader ended with %s", got)
		}
		tm.noJobControlWarnings()
	})
}

// interrupted is how each launch ends when the terminal's Ctrl-C kills a
// bare `sleep 100`: as the command run bare, killed by SIGINT. Every
// launcher dies of the signal its command died of (landlock-run's relay,
// ns-run's stage 1), and so does the CLI.
func (l launch) interrupted() string { return "killed by SIGINT" }

// TestPtyCtrlCWithoutAShell: the terminal's Ctrl-C ends a bare command
// started as the session leader (no shell in between), at once.
func TestPtyCtrlCWithoutAShell(t *testing.T) {
	forEachLaunch(t, func(t *testing.T, l launch) {
		tm := startTerminal(t, l.cmd("sleep", "100"))
		findCommand(t, tm.sid, "sleep", "100")
		tm.send("\x03")
		if got, want := tm.wait(), l.interrupted(); got != want {
			t.Errorf("Ctrl-C: %s, want %s; the terminal shows %s", got, want, tm.transcript())
		}
	})
}

// jobShellArg makes the test binary a minimal job-control shell (jobShell),
// as toolArg makes it the attack tool.
const jobShellArg = "job-shell"

// jobShell PATH ARGV0 ARG...: started by the test as the session leader of
// a terminal, it runs PATH as one job, in its own process group and in the
// terminal's foreground, as bash runs a command line, and writes on fd 3
// the job's pid, then every change wait4 (WUNTRACED, WCONTINUED) reports,
// until the job ends. A job needs such a parent for Ctrl-Z: the kernel
// discards the terminal's SIGTSTP to an orphaned process group, and a
// session leader's own group is one (its parent, the test, is in another
// session).
func jobShell(args []string) int {
	events := os.NewFile(3, "events")
	p, err := os.StartProcess(args[0], args[1:], &os.ProcAttr{
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Foreground: true, Ctty: 0},
	})
	if err != nil {
		fmt.Fprintf(events, "error %v\n", err)
		return 1
	}
	fmt.Fprintf(events, "pid %d\n", p.Pid)
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(p.Pid, &ws, syscall.WUNTRACED|unix.WCONTINUED, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			fmt.Fprintf(events, "error %v\n", err)
			return 1
		}
		fmt.Fprintln(events, waitOutcome(ws))
		if ws.Exited() || ws.Signaled() {
			return 0
		}
	}
}

// jobEvents are the lines a job shell writes on fd 3.
type jobEvents struct {
	t     *testing.T
	lines chan string
}

// startJob starts cmd as the one job of a job shell on a new terminal and
// returns the job's pid.
func startJob(t *testing.T, cmd *exec.Cmd) (*terminal, *jobEvents, int) {
	t.Helper()
	if cmd.Err != nil {
		t.Fatal(cmd.Err)
	}
	shell := exec.Command(self(t), append([]string{jobShellArg, cmd.Path}, cmd.Args...)...)
	shell.Env, shell.Dir = cmd.Env, cmd.Dir
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	shell.ExtraFiles = []*os.File{w}
	tm := startTerminal(t, shell)
	w.Close()
	ev := &jobEvents{t: t, lines: make(chan string, 16)}
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ev.lines <- sc.Text()
		}
		close(ev.lines)
	}()
	first := ev.next()
	pid, err := strconv.Atoi(strings.TrimPrefix(first, "pid "))
	if err != nil {
		t.Fatalf("job shell: %q", first)
	}
	return tm, ev, pid
}

func (ev *jobEvents) next() string {
	ev.t.Helper()
	select {
	case l, ok := <-ev.lines:
		if !ok {
			ev.t.Fatal("the job shell ended without saying how its job did")
		}
		return l
	case <-time.After(ptyWait):
		ev.t.Fatalf("the job shell reported nothing within %v", ptyWait)
		return ""
	}
}

// TestPtyCtrlZWithoutAShell: a bare command run as a job (the user typed
// it in a shell) stops on the terminal's Ctrl-Z, the command itself
// included, resumes on SIGCONT to its process group (what fg and bg send),
// and Ctrl-C then ends it.
func TestPtyCtrlZWithoutAShell(t *testing.T) {
	forEachLaunch(t, func(t *testing.T, l launch) {
		tm, ev, job := startJob(t, l.cmd("sleep", "100"))
		sleep := findCommand(t, job, "sleep", "100")
		if fg := tm.foreground(); fg != job {
			t.Fatalf("the terminal's foreground is %d, not the job %d", fg, job)
		}
		tm.send("\x1a")
		if got := ev.next(); got != "stopped by SIGTSTP" {
			t.Fatalf("Ctrl-Z: the job %s, want stopped by SIGTSTP", got)
		}
		wantState(t, sleep, true)
		if err := unix.Kill(-job, unix.SIGCONT); err != nil {
			t.Fatal(err)
		}
		if got := ev.next(); got != "continued" {
			t.Fatalf("SIGCONT: the job %s, want continued", got)
		}
		wantState(t, sleep, false)
		tm.send("\x03")
		if got, want := ev.next(), l.interrupted(); got != want {
			t.Errorf("Ctrl-C after SIGCONT: the job %s, want %s", got, want)
		}
	})
}

// TestPtyVim: vim edits a file in the workspace through the terminal
// (-i NONE: no ~/.viminfo, which the control would write in the real home).
func TestPtyVim(t *testing.T) {
	forEachLaunch(t, func(t *testing.T, l launch) {
		write(t, filepath.Join(l.ws, "note.txt"), "")
		tm := startTerminal(t, l.cmd("vim", "-u", "NONE", "-i", "NONE", "-N", "note.txt"))
		tm.expect(`"note.txt"`) // the status line: vim has drawn its screen
		tm.send("ihello\x1b:wq\r")
		if got := tm.wait(); got != "exit 0" {
			t.Errorf("vim :wq: %s; the terminal shows %s", got, tm.transcript())
		}
		wantContent(t, filepath.Join(l.ws, "note.txt"), "hello\n")
	})
}

// TestPtyLess: less pages a file on the terminal and q quits it.
func TestPtyLess(t *testing.T) {
	forEachLaunch(t, func(t *testing.T, l launch) {
		write(t, filepath.Join(l.ws, "page.txt"), "the first line of the page\nthe second\n")
		tm := startTerminal(t, l.cmd("less", "page.txt"))
		tm.expect("the first line of the page")
		tm.send("q")
		if got := tm.wait(); got != "exit 0" {
			t.Errorf("less q: %s; the terminal shows %s", got, tm.transcript())
		}
	})
}

// TestPtyWindowSize: the command sees the terminal's size (100x30).
func TestPtyWindowSize(t *testing.T) {
	forEachLaunch(t, func(t *testing.T, l launch) {
		tm := startTerminal(t, l.cmd("stty", "size"))
		tm.expect("30 100\r\n")
		if got := tm.wait(); got != "exit 0" {
			t.Errorf("stty size: %s; the terminal shows %s", got, tm.transcript())
		}
	})
}
