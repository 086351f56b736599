//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Attacks on what the guard keeps between calls (each thread's /proc
// entry, which devices are procfs), on the final's parent reached in one
// lookup, and on the final looked at lazily (launcher/ns_guard_linux.c).
// Each case names the exact outcome and has a control that shows the
// same call works on an ordinary name.

// TestGuardExecFromAThread: the leader, working in sub, creates through
// the guard (its /proc entry kept); then a thread that unshared its
// working directory into .git execs, and the kernel hands it the
// leader's pid. The new image's relative creates are the exec'ing
// thread's: commondir refused, the other name in .git, nothing in sub.
func TestGuardExecFromAThread(t *testing.T) {
	s, pol := guardWorld(t)
	wantOK(t, "exec from a thread with its own working directory", s.tool(pol, "exec-from-thread", s.ws))
	if _, err := os.Stat(filepath.Join(s.ws, "sub/by-leader")); err != nil {
		t.Errorf("control: the leader's create did not land in sub: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.ws, ".git/landed")); err != nil {
		t.Errorf("the exec'd image's create did not land in .git: %v", err)
	}
	wantAbsent(t, filepath.Join(s.ws, "sub/landed"))
	wantAbsent(t, filepath.Join(s.ws, "sub/commondir"))
	wantAbsent(t, filepath.Join(s.ws, ".git/commondir"))
}

// TestGuardThreadsShareSlots: more threads than the guard keeps entries
// for (so tids share slots), each with a working directory of its own
// (.git or sub), each creating commondir and a name of its own, in
// rounds: refused in .git, created in sub, every time.
func TestGuardThreadsShareSlots(t *testing.T) {
	s, pol := guardWorld(t)
	wantOK(t, "threads with their own working directories", s.tool(pol, "thread-cwds", s.ws, "150", "4"))
	wantAbsent(t, filepath.Join(s.ws, ".git/commondir"))
	if _, err := os.Stat(filepath.Join(s.ws, "sub/commondir")); err != nil {
		t.Errorf("control: commondir in sub was not created: %v", err)
	}
}

// TestGuardProcParents: paths whose final's parent is reached through
// /proc: another process's links (root, cwd, fd) and entries are refused
// whether the walk or the one-lookup shortcut meets them; the command's
// own (by number, through its tasks, through a descriptor of .git) reach
// .git, where commondir is refused and another name is created. Empty
// components, a trailing slash and a long path the same.
func TestGuardProcParents(t *testing.T) {
	s, pol := guardWorld(t)
	deep := filepath.Join(s.ws, strings.Repeat("d/", 60))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(s.ws, ".git"), filepath.Join(deep, "up")); err != nil {
		t.Fatal(err)
	}
	r := s.run(pol, "/bin/sh", "-c", "cd "+s.ws+" && exec "+self(t)+" "+toolArg+" proc-parents "+s.ws)
	if got := toolAnswer(t, r); got != "ok" {
		t.Errorf("proc-parents: %s (stderr %q)", got, r.stderr)
	}
	wantAbsent(t, filepath.Join(s.ws, ".git/commondir"))
	for _, p := range []string{".git/via-fd", ".git/via-task-fd", ".git/via-long", "via-task-cwd"} {
		if _, err := os.Stat(filepath.Join(s.ws, p)); err != nil {
			t.Errorf("control: %s was not created: %v", p, err)
		}
	}
}

// TestGuardLazyFinalSwapRace: a host process flips a name between an
// ordinary file and a symlink (RENAME_EXCHANGE with a spare name; to a bound .envrc, or dangling to
// .git/commondir) while the command opens it for writing with O_TRUNC,
// truncates it, and creates it: the guard looks at the final lazily
// (O_NOFOLLOW), so a symlink that appears in between must be resolved
// again, never followed by the kernel. .envrc keeps its content,
// commondir never appears, and both outcomes are seen.
func TestGuardLazyFinalSwapRace(t *testing.T) {
	s, pol := guardWorld(t)
	envrc := filepath.Join(s.ws, ".envrc")
	write(t, envrc, "export A=1\n")
	for _, target := range []string{".envrc", ".git/commondir"} {
		victim, spare := filepath.Join(s.ws, "victim"), filepath.Join(s.ws, "spare")
		os.Remove(victim)
		os.Remove(spare)
		write(t, victim, "plain\n")
		if err := os.Symlink(target, spare); err != nil {
			t.Fatal(err)
		}
		w := s.wrap(pol, self(t), toolArg, "lazy-victim", victim, "2000")
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				unix.Renameat2(unix.AT_FDCWD, victim, unix.AT_FDCWD, spare, unix.RENAME_EXCHANGE)
			}
		}()
		r := s.spawn(w, nil)
		close(stop)
		wg.Wait()
		if got := toolAnswer(t, r); got != "ok" {
			t.Errorf("flip to %s: %s (stderr %q)", target, got, r.stderr)
		}
		t.Logf("flip to %s: %s", target, strings.TrimSpace(r.stderr))
		wantContent(t, envrc, "export A=1\n")
		wantAbsent(t, filepath.Join(s.ws, ".git/commondir"))
	}
}

// guardCutsVerb is the tool's side of these tests.
func guardCutsVerb(args []string) (string, bool) {
	arg := func(i int) string { return strings.Join(args[min(i, len(args)):min(i+1, len(args))], "") }
	switch args[0] {
	case "write-pair": // write-pair: create commondir and landed in the working directory; ok when refused, made
		return writePair(), true
	case "exec-from-thread": // exec-from-thread WS
		return execFromThread(arg(1)), true
	case "thread-cwds": // thread-cwds WS THREADS ROUNDS
		n, _ := strconv.Atoi(arg(2))
		rounds, _ := strconv.Atoi(arg(3))
		return threadCwds(arg(1), n, rounds), true
	case "proc-parents": // proc-parents WS (run in WS)
		return procParents(arg(1)), true
	case "tmpfile-in": // tmpfile-in DIR: an O_TMPFILE in DIR
		fd, err := unix.Open(arg(1), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
		}
		return result(err), true
	case "wronly-directory": // wronly-directory DIR: O_WRONLY|O_DIRECTORY is EISDIR
		fd, err := unix.Open(arg(1), unix.O_WRONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
			return "opened", true
		}
		if err == unix.EISDIR {
			return "ok", true
		}
		return result(err), true
	case "o-path-writing": // o-path-writing PATH: open O_PATH with the write and create flags the kernel then ignores; ok: a path descriptor, and a write through it EBADF
		fd, err := unix.Open(arg(1), unix.O_PATH|unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(fd)
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || fl&unix.O_PATH == 0 {
			return fmt.Sprintf("error: flags %#x, %v", fl, err), true
		}
		if _, err := unix.Write(fd, []byte("x")); err != unix.EBADF {
			return fmt.Sprintf("error: a write through it: %v", err), true
		}
		return "ok", true
	case "lazy-victim": // lazy-victim PATH MS
		n, _ := strconv.Atoi(arg(2))
		return lazyVictim(arg(1), n), true
	}
	return "", false
}

// onLeader runs f on the thread whose tid is the process's pid.
func onLeader(f func()) bool {
	for i := 0; i < 2000; i++ {
		done := make(chan bool)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if unix.Gettid() != unix.Getpid() {
				done <- false
				return
			}
			f()
			done <- true
		}()
		if <-done {
			return true
		}
	}
	return false
}

func writePair() string {
	out := ""
	onLeader(func() {
		fd, err := unix.Open("commondir", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err == nil {
			unix.Close(fd)
			out = "commondir created"
			return
		} else if err != unix.EROFS {
			out = "commondir: " + result(err)
			return
		}
		if err := os.WriteFile("landed", nil, 0o644); err != nil {
			out = "landed: " + result(err)
			return
		}
		out = "ok"
	})
	if out == "" {
		return "error: never on the leader"
	}
	return out
}

func execFromThread(ws string) string {
	if err := os.Chdir(filepath.Join(ws, "sub")); err != nil {
		return result(err)
	}
	var e1 error
	if !onLeader(func() { e1 = os.WriteFile("by-leader", nil, 0o644) }) {
		return "error: never on the leader"
	}
	if e1 != nil {
		return "leader: " + result(e1)
	}
	exe, _ := os.Executable()
	fail := make(chan string)
	for i := 0; i < 100; i++ {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread execs or ends
			if unix.Gettid() == unix.Getpid() {
				fail <- ""
				return
			}
			if err := unix.Unshare(unix.CLONE_FS); err != nil {
				fail <- "unshare: " + result(err)
				return
			}
			if err := unix.Chdir(filepath.Join(ws, ".git")); err != nil {
				fail <- "chdir: " + result(err)
				return
			}
			if err := os.WriteFile("thread-before", nil, 0o644); err != nil {
				fail <- "thread create: " + result(err)
				return
			}
			err := syscall.Exec(exe, []string{exe, toolArg, "write-pair"}, os.Environ())
			fail <- "exec: " + result(err)
		}()
		if msg := <-fail; msg != "" {
			return msg
		}
	}
	return "error: no thread but the leader"
}

func threadCwds(ws string, n, rounds int) string {
	var wg sync.WaitGroup
	errs := make(chan string, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			runtime.LockOSThread() // never unlocked: the thread's working directory is its own
			if err := unix.Unshare(unix.CLONE_FS); err != nil {
				errs <- "unshare: " + result(err)
				return
			}
			dir := filepath.Join(ws, ".git")
			if i%2 == 1 {
				dir = filepath.Join(ws, "sub")
			}
			if err := unix.Chdir(dir); err != nil {
				errs <- "chdir: " + result(err)
				return
			}
			<-start
			for r := 0; r < rounds; r++ {
				fd, err := unix.Open("commondir", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
				if err == nil {
					unix.Close(fd)
				}
				if i%2 == 0 && err != unix.EROFS {
					errs <- fmt.Sprintf("tid %d in .git: commondir %s", unix.Gettid(), result(err))
					return
				}
				if i%2 == 1 && err != nil {
					errs <- fmt.Sprintf("tid %d in sub: commondir %s", unix.Gettid(), result(err))
					return
				}
				name := fmt.Sprintf("t%d", i)
				if err := os.WriteFile(name, nil, 0o644); err != nil {
					errs <- name + ": " + result(err)
					return
				}
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					errs <- name + " not where the thread works: " + result(err)
					return
				}
			}
		}(i)
	}
	close(start)
	wg.Wait()
	close(errs)
	for e := range errs {
		return e
	}
	return "ok"
}

func procParents(ws string) string {
	pids := otherPids()
	if len(pids) == 0 {
		return "error: no guard found"
	}
	gitfd, err := unix.Open(filepath.Join(ws, ".git"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "open .git: " + result(err)
	}
	defer unix.Close(gitfd)
	me, tid := os.Getpid(), unix.Gettid()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid = unix.Gettid()
	create := func(p string) error {
		fd, err := unix.Open(p, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	// Another process's: refused by the guard (EACCES), whatever follows.
	for _, pid := range append(pids, 1) {
		for _, p := range []string{
			fmt.Sprintf("/proc/%d/root%s/.git/commondir", pid, ws),
			fmt.Sprintf("/proc/%d/root%s/other-root", pid, ws),
			fmt.Sprintf("/proc/%d/cwd/x", pid),
			fmt.Sprintf("/proc/%d/task/%d/root%s/x", pid, pid, ws),
			fmt.Sprintf("/proc/%d/task/%d/cwd/x", pid, pid),
			fmt.Sprintf("/proc/%d/fd/0/x", pid),
			fmt.Sprintf("/proc//%d//task//%d//comm", pid, pid),
			fmt.Sprintf("/proc/%d/task/%d/attr/current", pid, pid),
			fmt.Sprintf("/proc/%d/net/x", pid),
		} {
			if err := create(p); err != unix.EACCES {
				return fmt.Sprintf("%s: %s, want EACCES", p, result(err))
			}
		}
	}
	// The command's own: .git through its entry's links.
	refused := []string{
		fmt.Sprintf("/proc/%d/fd/%d/commondir", me, gitfd),
		fmt.Sprintf("/proc/%d/task/%d/fd/%d/commondir", me, tid, gitfd),
		fmt.Sprintf("/proc/%d/task/%d/cwd/.git/commondir", me, tid),
		fmt.Sprintf("/proc/%d/root%s/.git/commondir", me, ws),
		fmt.Sprintf("/proc/thread-self/fd/%d/commondir", gitfd),
		ws + "//.git//commondir",
		".git///commondir",
		strings.Repeat("d/", 60) + "up/commondir",
		strings.Repeat("sub/../", 500) + ".git/commondir",
		fmt.Sprintf("/proc/%d/cwd/%s", me, strings.Repeat("d/", 60)+"up/commondir"),
	}
	for _, p := range refused {
		if err := create(p); err != unix.EROFS {
			return fmt.Sprintf("%.200s: %s, want EROFS", p, result(err))
		}
		if err := unix.Mkdir(p+"/", 0o755); err != unix.EROFS {
			return fmt.Sprintf("mkdir %.200s/: %s, want EROFS", p, result(err))
		}
	}
	if err := create(".git/commondir/"); err != unix.EISDIR {
		return fmt.Sprintf(".git/commondir/: %s, want EISDIR", result(err))
	}
	for _, p := range []string{
		fmt.Sprintf("/proc/%d/fd/%d/via-fd", me, gitfd),
		fmt.Sprintf("/proc/%d/task/%d/fd/%d/via-task-fd", me, tid, gitfd),
		fmt.Sprintf("/proc/%d/task/%d/cwd/via-task-cwd", me, tid),
		strings.Repeat("d/", 60) + "up/via-long",
	} {
		if err := create(p); err != nil {
			return fmt.Sprintf("control: %s: %s", p, result(err))
		}
	}
	return "ok"
}

// lazyVictim opens and truncates p for ms milliseconds.
func lazyVictim(p string, ms int) string {
	seen := map[string]int{}
	for i, end := 0, time.Now().Add(time.Duration(ms)*time.Millisecond); time.Now().Before(end); i++ {
		var err error
		switch i % 3 {
		case 0:
			var fd int
			if fd, err = unix.Open(p, unix.O_WRONLY|unix.O_TRUNC|unix.O_CLOEXEC, 0); err == nil {
				unix.Close(fd)
			}
		case 1:
			err = unix.Truncate(p, 0)
		case 2:
			var fd int
			if fd, err = unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644); err == nil {
				unix.Close(fd)
			}
		}
		r := result(err)
		seen[r]++
		if r != "ok" && r != "EROFS" && r != "ENOENT" && r != "ELOOP" {
			return fmt.Sprintf("call %d: %s", i, r)
		}
	}
	fmt.Fprintf(os.Stderr, "%v\n", seen)
	if seen["ok"] == 0 || seen["EROFS"] == 0 {
		return fmt.Sprintf("error: one outcome only %v", seen)
	}
	return "ok"
}

// TestGuardLazyFinalFollowsLikeTheKernel: opens the guard makes whose
// final is a symlink answer as the kernel would: O_TMPFILE in a linked
// directory works, and O_DIRECTORY for writing on a link to a directory
// is EISDIR (not ENOTDIR, what an O_NOFOLLOW look at the link gives). Each is
// first checked unconfined (the control), then in the sandbox.
func TestGuardLazyFinalFollowsLikeTheKernel(t *testing.T) {
	s, pol := guardWorld(t)
	if err := os.Symlink("sub", filepath.Join(s.ws, "to-dir")); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{
		{"tmpfile-in", filepath.Join(s.ws, "to-dir")},
		{"wronly-directory", filepath.Join(s.ws, "to-dir")},
	} {
		t.Run(c[0], func(t *testing.T) {
			control := hostTool(t, c[0], c[1:]...)
			if c[0] == "tmpfile-in" && (control == "ENOTSUP" || control == "EOPNOTSUPP") {
				t.Skipf("the file system under the workspace has no O_TMPFILE (%s unconfined: fuse-overlayfs, a container root of some engines, has none)", control)
			}
			wantOK(t, "control: "+strings.Join(c, " "), control)
			wantOK(t, strings.Join(c, " "), s.tool(pol, c[0], c[1:]...))
		})
	}
}

// TestGuardPathOnlyOpens: an open with O_PATH and write or create flags
// (which the kernel ignores with O_PATH) gives the command a path
// descriptor, as it does unconfined: the guard, which cannot hand an
// O_PATH descriptor over, lets the kernel make it. It creates nothing:
// an absent guarded name and an absent plain name stay absent (ENOENT),
// where an O_CREAT open without O_PATH of the same guarded name is
// refused (EROFS) and of the plain name creates it.
func TestGuardPathOnlyOpens(t *testing.T) {
	s, pol := guardWorld(t)
	other, cd, plain := filepath.Join(s.ws, "other"), filepath.Join(s.ws, ".git/commondir"), filepath.Join(s.ws, "plain")
	wantOK(t, "control: O_PATH|O_WRONLY of a file, unconfined", hostTool(t, "o-path-writing", other))
	wantOK(t, "O_PATH|O_WRONLY of a file", s.tool(pol, "o-path-writing", other))
	if got, err := os.ReadFile(other); err != nil || string(got) != "other\n" {
		t.Errorf("other holds %q (%v) after O_PATH|O_TRUNC, want it untouched", got, err)
	}
	for _, p := range []string{cd, plain} {
		wantDenied(t, "O_PATH|O_CREAT of an absent name", s.tool(pol, "o-path-writing", p), "ENOENT")
		wantAbsent(t, p)
	}
	wantDenied(t, "O_CREAT of the guarded name", s.tool(pol, "write", cd), "EROFS")
	wantAbsent(t, cd)
	wantOK(t, "O_CREAT of the plain name", s.tool(pol, "write", plain))
}
