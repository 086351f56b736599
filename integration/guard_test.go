//go:build linux

package integration

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/bo-agent/sandbox-local/internal/hostinfo"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/sandbox"
	"golang.org/x/sys/unix"
)

// The namespaces runner's guard (launcher/ns_guard_linux.c): a protected
// name that does not exist (.git/commondir in a main repository, an absent
// tool config) cannot be bound read-only, so every call that creates a
// name is made by the guard, which refuses creating that one with EROFS.

// guardWorld is a git repository under namespaces with the default policy,
// an ordinary file "other" and a subdirectory "sub".
func guardWorld(t *testing.T) (*sbx, sandbox.Policy) {
	t.Helper()
	rs := only("namespaces")
	if len(rs) == 0 {
		t.Skip("the namespaces runner is not under test here")
	}
	s := newSbx(t, rs[0])
	gitRepo(t, s.ws)
	write(t, filepath.Join(s.ws, "other"), "other\n")
	if err := os.Mkdir(filepath.Join(s.ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return s, s.policy()
}

// TestGuardRefusesAbsentNames: every way of creating .git/commondir, and
// the absent tool configs at the workspace's root, fails with EROFS and
// leaves nothing on the host; the same calls on other names work.
func TestGuardRefusesAbsentNames(t *testing.T) {
	s, pol := guardWorld(t)
	w := s.wrap(pol, "true")
	if w.Enforcement != sandbox.Full {
		t.Fatalf("a plain git repository under namespaces: enforcement %s, gaps %v; want full", w.Enforcement, w.Gaps)
	}
	cd := filepath.Join(s.ws, ".git/commondir")
	other := filepath.Join(s.ws, "other")
	denials := []struct {
		what string
		argv []string
		gone string
	}{
		{"write .git/commondir", []string{self(t), toolArg, "write", cd}, cd},
		{"mkdir .git/commondir", []string{self(t), toolArg, "mkdir", cd}, cd},
		{"symlink .git/commondir", []string{self(t), toolArg, "symlink", "/tmp/x", cd}, cd},
		{"rename onto .git/commondir", []string{self(t), toolArg, "rename", other, cd}, cd},
		{"link onto .git/commondir", []string{self(t), toolArg, "link", other, cd}, cd},
		{"creat .git/commondir", []string{self(t), toolArg, "creat", "644", cd}, cd},
		{"mknod .git/commondir", []string{self(t), toolArg, "mknod-reg", "644", cd}, cd},
		{"relative from a subdirectory", []string{"/bin/sh", "-c", "cd sub && exec " + self(t) + " " + toolArg + " write ../.git/commondir"}, cd},
		{"through /proc/self/cwd", []string{self(t), toolArg, "write", "/proc/self/cwd/.git/commondir"}, cd},
		{"through /proc/thread-self/cwd", []string{self(t), toolArg, "write", "/proc/thread-self/cwd/.git/commondir"}, cd},
		{"through a symlink to .git", []string{"/bin/sh", "-c", "ln -s ../.git sub/g && exec " + self(t) + " " + toolArg + " write sub/g/commondir"}, cd},
		{"through a dangling symlink", []string{"/bin/sh", "-c", "ln -s ../.git/commondir sub/dangling && exec " + self(t) + " " + toolArg + " write sub/dangling"}, cd},
		{"through /proc/self/root", []string{self(t), toolArg, "write", "/proc/self/root" + cd}, cd},
		{"an O_TMPFILE linked in through /proc/self/fd", []string{self(t), toolArg, "tmpfile-link", filepath.Join(s.ws, ".git"), cd}, cd},
		{"openat on a descriptor of .git", []string{self(t), toolArg, "create-at", filepath.Join(s.ws, ".git"), "commondir"}, cd},
		{"in another case", []string{self(t), toolArg, "write", filepath.Join(s.ws, ".git/CommonDir")}, filepath.Join(s.ws, ".git/CommonDir")},
		{"an absent .envrc", []string{self(t), toolArg, "write", filepath.Join(s.ws, ".envrc")}, filepath.Join(s.ws, ".envrc")},
		{"an absent .vscode", []string{self(t), toolArg, "mkdir", filepath.Join(s.ws, ".vscode")}, filepath.Join(s.ws, ".vscode")},
		{"an absent .vscode by rename", []string{"/bin/sh", "-c", "mkdir sub/v && exec " + self(t) + " " + toolArg + " rename sub/v .vscode"}, filepath.Join(s.ws, ".vscode")},
		{"the absent parent of .cargo/config.toml", []string{self(t), toolArg, "mkdir", filepath.Join(s.ws, ".cargo")}, filepath.Join(s.ws, ".cargo")},
		{"an absent rust-toolchain.toml", []string{self(t), toolArg, "write", filepath.Join(s.ws, "rust-toolchain.toml")}, filepath.Join(s.ws, "rust-toolchain.toml")},
		{"an absent .tool-versions", []string{self(t), toolArg, "write", filepath.Join(s.ws, ".tool-versions")}, filepath.Join(s.ws, ".tool-versions")},
		{"an absent HEAD at the root", []string{self(t), toolArg, "write", filepath.Join(s.ws, "HEAD")}, filepath.Join(s.ws, "HEAD")},
	}
	// O_TMPFILE needs the file system's support (fuse-overlayfs in the
	// container matrix has none): without it those cases cannot start.
	tmpfileOK := true
	if fd, err := unix.Open(s.ws, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600); err == nil {
		unix.Close(fd)
	} else {
		tmpfileOK = false
		t.Logf("this file system has no O_TMPFILE (%v): the O_TMPFILE cases cannot start here", err)
	}
	for _, d := range denials {
		if !tmpfileOK && strings.Contains(d.what, "O_TMPFILE") {
			continue
		}
		r := s.run(pol, d.argv...)
		if got := strings.TrimSpace(r.stdout); got != "EROFS" {
			t.Errorf("%s: got %q (exit %d, stderr %q), want EROFS", d.what, got, r.code, r.stderr)
		}
		wantAbsent(t, d.gone)
	}
	// The shell's own redirection, as an agent would write it.
	r := s.run(pol, "/bin/sh", "-c", "echo /tmp/x > .git/commondir")
	if r.code == 0 || !strings.Contains(r.stderr, "Read-only file system") {
		t.Errorf("sh: echo > .git/commondir: exit %d stderr %q, want Read-only file system", r.code, r.stderr)
	}
	wantAbsent(t, cd)
	// The guarded parent cannot be moved away and replaced.
	wantDenied(t, "move .git away", s.tool(pol, "rename", filepath.Join(s.ws, ".git"), filepath.Join(s.ws, "g2")), "EBUSY")
	wantAbsent(t, filepath.Join(s.ws, "g2"))
	// The setuid bit at creation: the guard refuses it (libseccomp drops
	// the filter's own rule where the guard takes the call).
	wantDenied(t, "create a setuid file", s.tool(pol, "create", "4755", filepath.Join(s.ws, "suid")), "EPERM")
	wantDenied(t, "mknod a setgid file", s.tool(pol, "mknod-reg", "2755", filepath.Join(s.ws, "sgid")), "EPERM")
	wantAbsent(t, filepath.Join(s.ws, "suid"))
	wantAbsent(t, filepath.Join(s.ws, "sgid"))

	// Positive controls: the same calls on other names, in the workspace
	// and in .git.
	for _, c := range [][]string{
		{"write", filepath.Join(s.ws, "new")},
		{"write", filepath.Join(s.ws, ".git/not-commondir")},
		{"mkdir", filepath.Join(s.ws, ".git/dir")},
		{"symlink", "other", filepath.Join(s.ws, "sym")},
		{"link", other, filepath.Join(s.ws, "hard")},
		{"link", filepath.Join(s.ws, ".git/not-commondir"), filepath.Join(s.ws, ".git/hard")},
		{"rename", filepath.Join(s.ws, "new"), filepath.Join(s.ws, "renamed")},
		{"create-at", filepath.Join(s.ws, ".git"), "at-name"},
		{"write", "/proc/self/cwd/through-proc"},
		{"write", filepath.Join(s.ws, "sub/.envrc")},
		{"create", "0755", filepath.Join(s.ws, "exec")},
		{"tmpfile-link", filepath.Join(s.ws, ".git"), filepath.Join(s.ws, ".git/from-tmpfile")},
	} {
		if !tmpfileOK && c[0] == "tmpfile-link" {
			continue
		}
		wantOK(t, strings.Join(c, " "), s.tool(pol, c[0], c[1:]...))
	}
	for _, p := range []string{"renamed", ".git/not-commondir", ".git/dir", "sym", "hard", ".git/hard", ".git/at-name", "through-proc", "sub/.envrc", "exec", ".git/from-tmpfile"} {
		if !tmpfileOK && p == ".git/from-tmpfile" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(s.ws, p)); err != nil {
			t.Errorf("control: %s was not created: %v", p, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(s.ws, "sym")); err != nil || target != "other" {
		t.Errorf("control: symlink %q %v", target, err)
	}
}

// TestGuardNameAppearedSinceWrap: a guarded name that exists by launch
// (made on the host after Wrap) is bound read-only like a read-only
// subpath: the command cannot change it, and the wrap stays full.
func TestGuardNameAppearedSinceWrap(t *testing.T) {
	s, pol := guardWorld(t)
	envrc := filepath.Join(s.ws, ".envrc")
	w := s.wrap(pol, self(t), toolArg, "append", envrc)
	if w.Enforcement != sandbox.Full {
		t.Fatalf("enforcement %s, gaps %v; want full", w.Enforcement, w.Gaps)
	}
	write(t, envrc, "export A=1\n")
	r := s.spawn(w, nil)
	if got := strings.TrimSpace(r.stdout); got != "EROFS" {
		t.Errorf("append to an .envrc made after Wrap: %q (exit %d, stderr %q), want EROFS", got, r.code, r.stderr)
	}
	wantContent(t, envrc, "export A=1\n")
	// Control: the same append to an ordinary file made the same way.
	plain := filepath.Join(s.ws, "plain")
	w = s.wrap(pol, self(t), toolArg, "append", plain)
	write(t, plain, "x\n")
	wantOK(t, "append to an ordinary file made after Wrap", toolAnswer(t, s.spawn(w, nil)))
}

// TestGuardNameBehindASymlink: .cargo linked to a directory of the
// workspace without a config: the guard does not follow the link, so the
// report names the gap (and RequireFull refuses), and the launch works.
func TestGuardNameBehindASymlink(t *testing.T) {
	s, pol := guardWorld(t)
	if err := os.Mkdir(filepath.Join(s.ws, "cargo-home"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("cargo-home", filepath.Join(s.ws, ".cargo")); err != nil {
		t.Fatal(err)
	}
	w := s.wrap(pol, "true")
	found := false
	for _, g := range w.Gaps {
		found = found || strings.Contains(g.Reason, filepath.Join(s.ws, ".cargo/config.toml"))
	}
	if !found || w.Enforcement != sandbox.Partial {
		t.Errorf("no gap names .cargo/config.toml behind the link: %s %v", w.Enforcement, w.Gaps)
	}
	wantOK(t, "a launch with a guarded name behind a link", s.tool(pol, "write", filepath.Join(s.ws, "ran")))
	// The other names are still guarded.
	wantDenied(t, ".git/commondir beside it", s.tool(pol, "write", filepath.Join(s.ws, ".git/commondir")), "EROFS")
	full := pol
	full.RequireFull = true
	if _, err := s.p.Wrap(t.Context(), sandbox.Request{Argv: []string{"true"}, Policy: full}); err == nil {
		t.Errorf("RequireFull with a guarded name behind a link: wrapped, want refused")
	}
}

// TestGuardKeepsOrdinaryWork: git and a shell work as they do without the
// guard: commits, branches, checkouts, gc; redirections to /dev/stdout and
// /dev/stderr reach the command's own; umask; FIFOs; relative creates
// after cd.
func TestGuardKeepsOrdinaryWork(t *testing.T) {
	s, pol := guardWorld(t)
	script := `set -e
echo a > a && git add a && git commit -qm one
git branch topic && git checkout -q topic
echo b > b && git add b && git commit -qm two
git checkout -q - && git merge -q topic && git gc -q --prune=now
git log --oneline | wc -l
echo to-stdout > /dev/stdout
echo to-stderr > /dev/stderr
echo via-fd > /dev/fd/1
umask 077 && : > private && stat -c %a private
umask 022
mkfifo fifo && (cat fifo > fifo-out &) && echo through-fifo > fifo && wait
sleep 0.2
cat fifo-out
cd sub && : > rel && echo in-sub
`
	r := s.run(pol, "/bin/sh", "-c", script)
	want := "2\nto-stdout\nvia-fd\n600\nthrough-fifo\nin-sub\n"
	if r.code != 0 || r.stdout != want || r.stderr != "to-stderr\n" {
		t.Fatalf("exit %d\nstdout %q, want %q\nstderr %q, want %q", r.code, r.stdout, want, r.stderr, "to-stderr\n")
	}
	if _, err := os.Stat(filepath.Join(s.ws, "sub/rel")); err != nil {
		t.Errorf("a relative create after cd sub did not land in sub: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(s.ws, "private")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("umask 077: %v %v, want 0600", fi, err)
	}
	out, err := exec.Command("git", "-C", s.ws, "log", "--format=%s").Output()
	if err != nil || strings.Fields(string(out))[0] != "two" {
		t.Errorf("commits not visible on the host: %q %v", out, err)
	}
	wantAbsent(t, filepath.Join(s.ws, ".git/commondir"))
}

// TestGuardCannotBeReached: the command cannot get at the guard's
// descriptors (the listener) through /proc with O_CREAT, nor ptrace it,
// read its memory or take its descriptors with pidfd_getfd; the guard
// holds no capability and runs under a filter of its own (one filter: not
// the command's).
func TestGuardCannotBeReached(t *testing.T) {
	s, pol := guardWorld(t)
	wantOK(t, "open /proc/self/fd/N with O_CREAT", s.tool(pol, "proc-fds-creat"))
	wantOK(t, "reach the guard", s.tool(pol, "attack-guard"))
	wantDenied(t, "a second listener", s.tool(pol, "seccomp-listener"), "EBUSY")
	wantOK(t, "the guard's own filter and capabilities", s.tool(pol, "guard-status"))
}

// TestGuardRefusesNonDumpable: the guard holds no capability, so it
// cannot read the memory of a command that made itself not dumpable: that
// command's creating calls are refused (EACCES), as documented; a
// dumpable one's work.
func TestGuardRefusesNonDumpable(t *testing.T) {
	s, pol := guardWorld(t)
	wantDenied(t, "create, not dumpable", s.tool(pol, "nondumpable-create", filepath.Join(s.ws, "nd")), "EACCES")
	wantAbsent(t, filepath.Join(s.ws, "nd"))
	wantOK(t, "create, dumpable", s.tool(pol, "write", filepath.Join(s.ws, "d")))
}

// TestGuardKilledFailsClosed: the command cannot kill the guard
// (Landlock's signal scoping: it is outside the command's domain, EPERM),
// and when the guard dies anyway (killed here, from the host), every
// creating call fails (ENOSYS: nobody listens), .git/commondir is not
// created, and no other listener can be installed.
//
// The command says it is ready on its stdout, a write the guard does not
// make: were it a file created through the guard, the kill could land
// while the guard hands that file's descriptor over, and the kernel then
// completes the open with 0 and no descriptor (SECCOMP_ADDFD_FLAG_SEND
// marks the call answered before the command has taken the descriptor;
// a supervisor killed in between leaves that answer).
func TestGuardKilledFailsClosed(t *testing.T) {
	s, pol := guardWorld(t)
	w := s.wrap(pol, self(t), toolArg, "kill-guard", filepath.Join(s.ws, ".git/commondir"), filepath.Join(s.ws, "plain"))
	cmd := w.Command(t.Context())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l := <-lines:
		if l != "ready" {
			t.Fatalf("the command's first line %q, want ready", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command never got as far as trying to kill the guard")
	}
	guard := guardPid(t, cmd.Process.Pid)
	if err := unix.Kill(guard, unix.SIGKILL); err != nil {
		t.Fatalf("kill the guard (pid %d) from the host: %v", guard, err)
	}
	got := <-lines
	cmd.Wait()
	want := "EPERM,ENOSYS,ENOSYS,EBUSY"
	if hostinfo.LandlockABI() < vocab.ABIScopes {
		want = "ok,ENOSYS,ENOSYS,EBUSY" // no signal scoping: the command's own kill works
	}
	if got != want {
		t.Errorf("kill from inside, then the creates after the guard died: %q, want %s (kill, commondir, a plain file, a new listener)", got, want)
	}
	wantAbsent(t, filepath.Join(s.ws, ".git/commondir"))
	wantAbsent(t, filepath.Join(s.ws, "plain"))
	// Control: the kernel refuses a second listener only while the first
	// is open; once it is closed (the guard dead) a new one loads, which
	// is why the filter refuses it itself.
	wantOK(t, "a listener once the first is closed, unconfined", hostTool(t, "listener-after-close"))
}

// guardPid finds the guard among the launcher's descendants: stage 1 (the
// launcher) has pid 1 of the sandbox as its child, and pid 1 the command
// and the guard; the guard is the one still running ns-run's image.
func guardPid(t *testing.T, launcher int) int {
	t.Helper()
	children := func(pid int) []int {
		var out []int
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, task := range tasks {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
				}
			}
		}
		return out
	}
	for _, pid1 := range children(launcher) {
		for _, c := range children(pid1) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c))
			if argv0, _, _ := strings.Cut(string(b), "\x00"); argv0 == vocab.NsRun {
				return c
			}
		}
	}
	t.Fatalf("no guard among the descendants of the launcher %d", launcher)
	return 0
}

// TestGuardFIFOKeepsTheCommandsFlags: a FIFO open that must block is made
// by a one-shot child of the guard; the descriptor the command gets is
// close-on-exec only if it asked for that (it always was, which let a command reach it). The
// control is the same open unconfined.
func TestGuardFIFOKeepsTheCommandsFlags(t *testing.T) {
	s, pol := guardWorld(t)
	wantOK(t, "control: unconfined", hostTool(t, "fifo-fd-flags", filepath.Join(s.base, "fifo")))
	wantOK(t, "through the guard", s.tool(pol, "fifo-fd-flags", filepath.Join(s.ws, "fifo")))
}

// TestGuardSignalsDoNotRepeatCalls: a call the guard has read is not
// restarted by a signal (the filter is loaded with WAIT_KILLABLE_RECV):
// otherwise it would be made twice, and a fresh mkdir would answer EEXIST.
func TestGuardSignalsDoNotRepeatCalls(t *testing.T) {
	s, pol := guardWorld(t)
	wantOK(t, "mkdir under signals", s.tool(pol, "mkdir-under-signals", filepath.Join(s.ws, "sub"), "3000"))
}

// TestGuardRace: one thread flips the name in its buffer between an
// ordinary name and "commondir" while another creates it in .git: the
// guard reads the name once and acts on that copy, so .git/commondir never
// appears, and both outcomes are seen.
func TestGuardRace(t *testing.T) {
	s, pol := guardWorld(t)
	got := s.tool(pol, "race-create", filepath.Join(s.ws, ".git"), "20000")
	if got != "ok" {
		t.Errorf("race: %q", got)
	}
	wantAbsent(t, filepath.Join(s.ws, ".git/commondir"))
}

// TestGuardRequireFullCLI: sandbox-run --require-full runs in a plain
// repository under namespaces.
func TestGuardRequireFullCLI(t *testing.T) {
	s, _ := guardWorld(t)
	out, errs, code := cli(t, s.ws, "--runner", "namespaces", "--require-full", "--", "/bin/sh", "-c", "echo ran; echo x > .git/commondir")
	if out != "ran\n" || code == 0 || !strings.Contains(errs, "Read-only file system") {
		t.Errorf("--require-full in a git repository: exit %d stdout %q stderr %q; want ran, then the create refused", code, out, errs)
	}
	wantAbsent(t, filepath.Join(s.ws, ".git/commondir"))
}

// guardVerb is the tool's side of these tests.
func guardVerb(args []string) (string, bool) {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch args[0] {
	case "create-at": // create-at DIR NAME: openat(O_CREAT) on a descriptor of DIR
		dfd, err := unix.Open(arg(1), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(dfd)
		fd, err := unix.Openat(dfd, arg(2), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err == nil {
			unix.Close(fd)
		}
		return result(err), true
	case "tmpfile-link": // tmpfile-link DIR PATH: an O_TMPFILE in DIR, linked in at PATH through /proc/self/fd
		fd, err := unix.Open(arg(1), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(fd)
		return result(unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, arg(2), unix.AT_SYMLINK_FOLLOW)), true
	case "proc-fds-creat": // every /proc/self/fd/N opened with O_CREAT must be the tool's own
		for n := 0; n <= 64; n++ {
			mine, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", n))
			fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", n), unix.O_CREAT|unix.O_RDONLY|unix.O_CLOEXEC, 0o644)
			if err != nil {
				continue
			}
			got, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
			unix.Close(fd)
			if strings.Contains(got, "seccomp") || (mine != "" && got != mine && !strings.HasPrefix(mine, "anon_inode:")) {
				return fmt.Sprintf("leak: fd %d is %q, opened %q", n, mine, got), true
			}
		}
		return "ok", true
	case "attack-guard":
		pids := otherPids()
		if len(pids) == 0 {
			return "error: no guard found", true
		}
		for _, pid := range pids {
			if err := ptraceOnce(pid); err == nil {
				return fmt.Sprintf("leak: ptrace %d", pid), true
			}
			local := make([]byte, 8)
			if _, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &local[0], Len: 8}}, []unix.RemoteIovec{{Base: 0x400000, Len: 8}}, 0); err != unix.EPERM {
				return fmt.Sprintf("leak: process_vm_readv %d: %v", pid, err), true
			}
			if f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid)); err == nil {
				f.Close()
				return fmt.Sprintf("leak: /proc/%d/mem", pid), true
			}
			if pidfd, err := unix.PidfdOpen(pid, 0); err == nil {
				for n := 0; n <= 64; n++ {
					if fd, err := unix.PidfdGetfd(pidfd, n, 0); err == nil {
						unix.Close(fd)
						return fmt.Sprintf("leak: pidfd_getfd %d %d", pid, n), true
					}
				}
				unix.Close(pidfd)
			}
			for n := 0; n <= 64; n++ {
				for _, p := range []string{fmt.Sprintf("/proc/%d/fd/%d", pid, n), fmt.Sprintf("/proc/%d/cwd/x%d", pid, n)} {
					if fd, err := unix.Open(p, unix.O_CREAT|unix.O_RDWR|unix.O_CLOEXEC, 0o644); err == nil {
						unix.Close(fd)
						return "leak: " + p, true
					} else if err != unix.EACCES && err != unix.ENOENT {
						return fmt.Sprintf("%s: %v, want EACCES or ENOENT", p, err), true
					}
				}
			}
			// /proc/PID's own links, with O_CREAT through the proc root.
			if fd, err := unix.Open(fmt.Sprintf("/proc/self/../%d/fd/0", pid), unix.O_CREAT|unix.O_RDONLY|unix.O_CLOEXEC, 0o644); err == nil {
				unix.Close(fd)
				return "leak: /proc/self/../PID", true
			}
			// A path through /proc/PID with no link on the way: refused
			// at its parent, inside another process's entry.
			p := fmt.Sprintf("/proc/%d/task/%d/comm", pid, pid)
			if fd, err := unix.Open(p, unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
				unix.Close(fd)
				return "leak: " + p, true
			} else if err != unix.EACCES {
				return fmt.Sprintf("%s: %v, want EACCES", p, err), true
			}
		}
		// Control: the command's own entry, by number, passes the guard
		// to the kernel, which answers for a read-only /proc.
		p := fmt.Sprintf("/proc/%d/task/%d/comm", os.Getpid(), os.Getpid())
		if fd, err := unix.Open(p, unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd)
		} else if err != unix.EROFS {
			return fmt.Sprintf("control: %s: %v, want the kernel's EROFS", p, err), true
		}
		return "ok", true
	case "guard-status": // the guard's own filter (one, not the command's) and no capability
		pids := otherPids()
		if len(pids) != 1 {
			return fmt.Sprintf("error: %d guard candidates", len(pids)), true
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pids[0]))
		if err != nil {
			return result(err), true
		}
		st := string(b)
		for _, want := range []string{"\nSeccomp:\t2\n", "\nSeccomp_filters:\t1\n", "\nCapPrm:\t0000000000000000\n",
			"\nCapEff:\t0000000000000000\n", "\nCapBnd:\t0000000000000000\n", "\nNoNewPrivs:\t1\n"} {
			if !strings.Contains(st, want) {
				return fmt.Sprintf("status lacks %q", strings.TrimSpace(want)), true
			}
		}
		return "ok", true
	case "listener-after-close": // a listener, then a second (EBUSY), then a third once the first is closed
		done := make(chan string, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine, its filters with it
			prog := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW}}
			fprog := unix.SockFprog{Len: 1, Filter: &prog[0]}
			unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
			load := func() (int, error) {
				fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
				if e != 0 {
					return -1, e
				}
				return int(fd), nil
			}
			first, err := load()
			if err != nil {
				done <- "first: " + result(err)
				return
			}
			if _, err := load(); err != unix.EBUSY {
				done <- "second: " + result(err)
				return
			}
			unix.Close(first)
			third, err := load()
			if err == nil {
				unix.Close(third)
			}
			done <- result(err)
		}()
		return <-done, true
	case "nondumpable-create": // nondumpable-create PATH: create PATH after PR_SET_DUMPABLE 0
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			return "error: " + err.Error(), true
		}
		fd, err := unix.Open(arg(1), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err == nil {
			unix.Close(fd)
		}
		return result(err), true
	case "seccomp-listener":
		return result(newListener()), true
	case "fifo-fd-flags": // fifo-fd-flags PATH: a blocking O_CREAT open of a FIFO, without O_CLOEXEC; "cloexec" if it came back so
		if err := unix.Mkfifo(arg(1), 0o600); err != nil {
			return result(err), true
		}
		go func() {
			time.Sleep(100 * time.Millisecond)
			if fd, err := unix.Open(arg(1), unix.O_RDONLY, 0); err == nil {
				time.Sleep(time.Second)
				unix.Close(fd)
			}
		}()
		fd, err := unix.Open(arg(1), unix.O_WRONLY|unix.O_CREAT, 0o600)
		if err != nil {
			return result(err), true
		}
		defer unix.Close(fd)
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC != 0 {
			return "cloexec", true
		}
		return "ok", true
	case "kill-guard": // kill-guard GUARDED PLAIN: kill the guard, print ready, wait for it gone, create both, then a listener
		pids := otherPids()
		if len(pids) == 0 {
			return "error: no guard found", true
		}
		var killed error
		for _, pid := range pids {
			if err := unix.Kill(pid, unix.SIGKILL); err != nil {
				killed = err
			}
		}
		fmt.Println("ready")
		for end := time.Now().Add(10 * time.Second); len(otherPids()) > 0 && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
		out := []string{result(killed)}
		for _, p := range []string{arg(1), arg(2)} {
			fd, err := unix.Open(p, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
			if err == nil {
				unix.Close(fd)
			}
			out = append(out, result(err))
		}
		return strings.Join(append(out, result(newListener())), ","), true
	case "mkdir-under-signals": // mkdir-under-signals DIR N: N fresh mkdirs on a thread signals rain on
		n, err := strconv.Atoi(arg(2))
		if err != nil {
			return "error: n", true
		}
		sigs := make(chan os.Signal, 64)
		signal.Notify(sigs, syscall.SIGUSR1)
		defer signal.Stop(sigs)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid := unix.Gettid()
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-sigs:
				default:
					unix.Tgkill(os.Getpid(), tid, syscall.SIGUSR1)
				}
			}
		}()
		defer close(stop)
		for i := 0; i < n; i++ {
			if err := unix.Mkdir(filepath.Join(arg(1), "d"+strconv.Itoa(i)), 0o755); err != nil {
				return fmt.Sprintf("mkdir %d: %v", i, err), true
			}
		}
		return "ok", true
	case "race-create": // race-create DIR ITERATIONS
		return raceCreate(arg(1), arg(2)), true
	}
	return "", false
}

// otherPids are the sandbox's processes other than pid 1, this one and its
// ancestors: the guard.
func otherPids() []int {
	mine := map[int]bool{1: true}
	for pid := os.Getpid(); pid > 1; {
		mine[pid] = true
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			break
		}
		next := 0
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PPid:"); ok {
				next, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		pid = next
	}
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && !mine[pid] {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(b), ") Z ") {
				out = append(out, pid)
			}
		}
	}
	return out
}

// newListener loads a filter that allows everything, with a listener,
// on a thread of its own (which then exits with it).
func newListener() error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		prog := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW}}
		fprog := unix.SockFprog{Len: 1, Filter: &prog[0]}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- err
			return
		}
		fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
		if e != 0 {
			done <- e
			return
		}
		unix.Close(int(fd))
		done <- nil
	}()
	return <-done
}

// raceCreate: one thread flips buf between "ok-name" and "commondir"
// while this one creates buf's name in dir, iterations times. ok when
// commondir never appeared and both a create and a refusal were seen.
func raceCreate(dir, iterations string) string {
	n, err := strconv.Atoi(iterations)
	if err != nil {
		return "error: iterations"
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return result(err)
	}
	defer unix.Close(dfd)
	a, b := []byte("ok-name\x00\x00\x00"), []byte("commondir\x00")
	buf := make([]byte, 16)
	copy(buf, a)
	stop := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				copy(buf, b)
			} else {
				copy(buf, a)
			}
		}
	}()
	created, refused := 0, 0
	for i := 0; i < n; i++ {
		fd, _, e := syscall.Syscall6(unix.SYS_OPENAT, uintptr(dfd), uintptr(unsafe.Pointer(&buf[0])), uintptr(unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC), 0o644, 0, 0)
		switch e {
		case 0:
			unix.Close(int(fd))
			created++
			unix.Unlinkat(dfd, "ok-name", 0)
		case unix.EROFS:
			refused++
		default:
			close(stop)
			return "error: " + unix.ErrnoName(e)
		}
		if _, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil {
			close(stop)
			return "commondir appeared"
		}
	}
	close(stop)
	fmt.Fprintf(os.Stderr, "race: %d created, %d refused\n", created, refused)
	if created == 0 || refused == 0 {
		return fmt.Sprintf("error: one outcome only (%d created, %d refused)", created, refused)
	}
	return "ok"
}
