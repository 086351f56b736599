//go:build linux

package integration

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/bo-agent/sandbox-local/sandbox"
	"golang.org/x/sys/unix"
)

// chmodVerbs are the calls that change a mode: fchmodat, fchmodat2 and
// fchmod, without fchmodat2 where it does not exist unconfined (ENOSYS: a
// kernel before 6.6, or a container whose seccomp profile predates it, as
// Docker 20.10's does), so a command cannot make it either.
func chmodVerbs(t *testing.T) []string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "chmod2-control")
	write(t, f, "x")
	if got := hostTool(t, "chmod2", "600", f); got == "ENOSYS" {
		t.Logf("fchmodat2 unconfined: ENOSYS; not tested here")
		return []string{"chmod", "fchmod"}
	} else if got != "ok" {
		t.Errorf("control: fchmodat2 unconfined: got %q, want ok or ENOSYS", got)
	}
	return []string{"chmod", "chmod2", "fchmod"}
}

// TestNoSetuidFilesLeftBehind: a command must not leave a setuid or setgid
// file behind, by changing a mode or by creating a file with one: a person
// (or anyone, for a root caller's files) would later run it with the
// owner's rights. High bits above the kernel's 16 must not hide the bits.
func TestNoSetuidFilesLeftBehind(t *testing.T) {
	// Unconfined control: the verb really makes a setuid file.
	ctl := filepath.Join(t.TempDir(), "ctl")
	write(t, ctl, "x")
	wantOK(t, "control: chmod 4755 unconfined", hostTool(t, "chmod", "4755", ctl))
	if m := hostToolRaw(t, "mode", ctl); m != "4755" {
		t.Fatalf("control: mode %s after chmod 4755", m)
	}
	verbs := chmodVerbs(t)
	forEachRunner(t, func(t *testing.T, s *sbx) {
		for _, mode := range []string{"4755", "2755", "6755", "40000004755"} {
			for _, verb := range verbs {
				f := filepath.Join(s.ws, "existing-"+verb+"-"+mode)
				write(t, f, "x")
				os.Chmod(f, 0o644)
				wantDenied(t, verb+" "+mode, s.tool(s.policy(), verb, mode, f), "EPERM")
				if m := hostToolRaw(t, "mode", f); m != "644" {
					t.Errorf("%s %s: the file's mode is %s on the host", verb, mode, m)
				}
			}
			for _, verb := range createVerbs {
				f := filepath.Join(s.ws, "new-"+verb+"-"+mode)
				wantDenied(t, verb+" "+mode, s.tool(s.policy(), verb, mode, f), "EPERM")
				wantAbsent(t, f)
			}
			f := filepath.Join(s.ws, "new-openat2-"+mode)
			wantDenied(t, "openat2 "+mode, s.tool(s.policy(), "create2", mode, f), "ENOSYS")
			wantAbsent(t, f)
		}
		// Positive controls: ordinary modes keep working, by every call.
		for _, verb := range verbs {
			f := filepath.Join(s.ws, "plain-"+verb)
			write(t, f, "x")
			wantOK(t, verb+" 755", s.tool(s.policy(), verb, "755", f))
			if m := hostToolRaw(t, "mode", f); m != "755" {
				t.Errorf("%s 755: mode %s", verb, m)
			}
		}
		for _, verb := range createVerbs {
			wantOK(t, verb+" 755", s.tool(s.policy(), verb, "755", filepath.Join(s.ws, "plain-"+verb+"-new")))
		}
		// A mode without O_CREAT is ignored by the kernel: such opens work.
		wantOK(t, "open without O_CREAT, a setuid mode ignored", s.tool(s.policy(), "open-plain", "4755", filepath.Join(s.ws, "plain-chmod")))
		// A setgid directory only passes its group on: allowed.
		wantOK(t, "mkdir 2775", s.tool(s.policy(), "mkdir-mode", "2775", filepath.Join(s.ws, "shared-dir")))
		// Tools fail visibly, not silently: cp -p of a setuid file.
		src := filepath.Join(s.base, "suid-src")
		write(t, src, "x")
		os.Chmod(src, 0o4755)
		r := s.run(s.policy(), "/bin/cp", "-p", src, filepath.Join(s.ws, "copied"))
		t.Logf("cp -p of a setuid file: exit %d, stderr %q (GNU cp drops the bits it cannot set)", r.code, r.stderr)
		if m := hostToolRaw(t, "mode", filepath.Join(s.ws, "copied")); strings.HasPrefix(m, "4") || strings.HasPrefix(m, "6") {
			t.Errorf("cp -p left mode %s", m)
		}
	})
}

// TestNoFileCapabilities: a file capability (security.capability) is a
// setuid of its own kind. Setting one needs CAP_SETFCAP, which the command
// never has, root caller or not.
func TestNoFileCapabilities(t *testing.T) {
	ctl := filepath.Join(t.TempDir(), "ctl")
	write(t, ctl, "x")
	control := hostToolRaw(t, "setcap", ctl)
	if os.Geteuid() == 0 {
		wantOK(t, "control: root sets a file capability unconfined", control)
	} else {
		t.Logf("as uid %d the attack cannot start (setcap unconfined: %s); the root run proves the denial", os.Geteuid(), control)
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		f := filepath.Join(s.ws, "capped")
		write(t, f, "x")
		wantDenied(t, "set security.capability", s.tool(s.policy(), "setcap", f), "EPERM")
		if _, err := unix.Getxattr(f, "security.capability", make([]byte, 64)); !errors.Is(err, unix.ENODATA) {
			t.Errorf("security.capability on the host: %v, want ENODATA", err)
		}
	})
}

// TestDeviceNodesUnchangeable: the namespaces runner's /dev holds the
// host's null, zero, full, random, urandom and tty; a root caller owns
// them, so without a read-only mount its command could chmod or touch
// them on the host (chmod 600 /dev/null breaks every other user). They
// stay usable.
func TestDeviceNodesUnchangeable(t *testing.T) {
	if !contains(linuxRunners, "namespaces") {
		t.Skip("the namespaces runner is not under test here")
	}
	s := newSbx(t, "namespaces")
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"} {
		var before unix.Stat_t
		if err := unix.Stat(dev, &before); err != nil {
			continue
		}
		mode := strings.TrimPrefix(hostToolRaw(t, "mode", dev), "0")
		// Should the attack succeed (an old launcher), put the host's device
		// back: the test must not break the machine it proves things on.
		t.Cleanup(func() {
			var now unix.Stat_t
			if unix.Stat(dev, &now) == nil && now.Mode != before.Mode {
				unix.Chmod(dev, before.Mode&0o7777)
			}
			if now.Mtim != before.Mtim {
				unix.UtimesNano(dev, []unix.Timespec{before.Atim, before.Mtim})
			}
		})
		wantDenied(t, "chmod "+dev, s.tool(s.policy(), "chmod", "600", dev), "EROFS", "EPERM")
		wantDenied(t, "utimes "+dev, s.tool(s.policy(), "utimes", dev), "EROFS", "EPERM", "EACCES")
		wantDenied(t, "setxattr "+dev, s.tool(s.policy(), "setxattr-user", dev), "EROFS", "EPERM", "EACCES")
		var after unix.Stat_t
		unix.Stat(dev, &after)
		if after.Mode != before.Mode || after.Mtim != before.Mtim || hostToolRaw(t, "mode", dev) != mode {
			t.Errorf("%s changed on the host: mode %o -> %o, mtime %v -> %v", dev, before.Mode, after.Mode, before.Mtim, after.Mtim)
		}
	}
	// Positive: the devices work, and chmod works where it may.
	r := s.run(s.policy(), "/bin/sh", "-c", "echo x > /dev/null && head -c 4 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c")
	if r.code != 0 || strings.Fields(r.stdout)[0] != "4" {
		t.Errorf("devices inside: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	f := filepath.Join(s.ws, "f")
	write(t, f, "x")
	wantOK(t, "chmod in the workspace", s.tool(s.policy(), "chmod", "600", f))
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// TestLandlockGapsAreReal holds the landlock runner's report to the truth
// for what Landlock (ABI 7) cannot confine: each leak really happens under
// landlock, and the gap that names it is in the report; under namespaces
// the same attempt fails and no such gap is reported.
func TestLandlockGapsAreReal(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		landlock := s.runner == "landlock"
		// /proc shows host processes' command lines.
		marker := randomName("cmdline-marker-")
		sleeper := exec.Command(self(t), toolArg, "sleep", marker)
		if err := sleeper.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
		if hostToolRaw(t, "find-cmdline", marker) != "found" {
			t.Fatal("control: the host's sleeper is not visible unconfined")
		}
		w := s.wrap(s.policy(), self(t), toolArg, "find-cmdline", marker)
		got := toolAnswer(t, s.spawn(w, nil))
		if named := gapNamed(w.Gaps, "every host process stays visible in /proc"); landlock != (got == "found") || landlock != named {
			t.Errorf("host command line seen: %q, gap named: %v (runner %s)", got, named, s.runner)
		}

		// A deny-read directory: inotify events and stat sizes leak.
		secret := filepath.Join(s.base, "secrets")
		os.Mkdir(secret, 0o700)
		write(t, filepath.Join(secret, "key"), "0123456789")
		pol := s.policy()
		pol.DenyRead = []string{secret}
		w = s.wrap(pol, self(t), toolArg, "stat-size", filepath.Join(secret, "key"))
		size := toolAnswer(t, s.spawn(w, nil))
		named := gapNamed(w.Gaps, "deny-read paths can still be looked up")
		if landlock != (size == "10") || landlock != named {
			t.Errorf("denied file's size seen as %q, gap named %v (runner %s)", size, named, s.runner)
		}
		w = s.wrap(pol, self(t), toolArg, "inotify-events", secret, "3000")
		cmd := w.Command(t.Context())
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, _ := out.Read(buf) // "watching", or the errno
		if strings.HasPrefix(string(buf[:n]), "watching") {
			write(t, filepath.Join(secret, "new-key"), "y")
		}
		rest, _ := io.ReadAll(out)
		cmd.Wait()
		seen := strings.Contains(string(buf[:n])+string(rest), "events")
		if landlock != seen {
			t.Errorf("inotify on a denied directory: %q %q (runner %s)", buf[:n], rest, s.runner)
		}
	})
}

// gapNamed reports whether one of gaps contains text.
func gapNamed(gaps []sandbox.Gap, text string) bool {
	for _, g := range gaps {
		if strings.Contains(g.Reason, text) {
			return true
		}
	}
	return false
}

// TestNoTerminalWithoutTerminalStdio: a command whose stdin, stdout and
// stderr are no terminal must not reach the caller's controlling terminal
// through /dev/tty (it could read what the user types, or prompt for a
// password). The consumer here has a controlling terminal (a pty) and
// hands the command pipes.
func TestNoTerminalWithoutTerminalStdio(t *testing.T) {
	withCtty := func(cmd *exec.Cmd) func() {
		m, slave, err := newPty()
		if err != nil {
			t.Fatal(err)
		}
		cmd.ExtraFiles = []*os.File{slave}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
		return func() { m.Close(); slave.Close() }
	}
	// Unconfined control: the same process opens its controlling terminal.
	ctl := exec.Command(self(t), toolArg, "open", "/dev/tty")
	done := withCtty(ctl)
	out, _ := ctl.Output()
	done()
	if strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("control: /dev/tty unconfined with a controlling terminal: %q", out)
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		w := s.wrap(s.policy(), self(t), toolArg, "open", "/dev/tty")
		var done func()
		r := s.spawn(w, func(cmd *exec.Cmd) { done = withCtty(cmd) })
		done()
		wantDenied(t, "open /dev/tty with pipes for stdio", toolAnswer(t, r), "ENXIO")
	})
}

// TestMetadataConfinedToTheWritableRoots: the calls that change a file's
// mode (fchmodat, fchmodat2, fchmod), group (fchownat, fchown), times,
// xattrs, ACL and inode flags work beneath the writable roots and nowhere
// else, under
// both runners (landlock's supervisor makes them for the command), through
// a symlink in the workspace too, in read-only mode only in the temp dir;
// the setuid bit stays refused everywhere.
func TestMetadataConfinedToTheWritableRoots(t *testing.T) {
	verbs := chmodVerbs(t)
	forEachRunner(t, func(t *testing.T, s *sbx) {
		outside := filepath.Join(s.base, "own-file")
		write(t, outside, "x")
		inside := filepath.Join(s.ws, "inside")
		write(t, inside, "x")
		link := filepath.Join(s.ws, "link-out")
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		refused := "EACCES"
		if s.runner == "namespaces" {
			refused = "EROFS"
		}
		mode := func(p string) os.FileMode {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			return fi.Mode().Perm()
		}
		for _, verb := range verbs {
			os.Chmod(outside, 0o600)
			os.Chmod(inside, 0o600)
			// Positive control: inside the workspace the mode changes.
			wantOK(t, verb+" inside the workspace", s.tool(s.policy(), verb, "640", inside))
			if m := mode(inside); m != 0o640 {
				t.Errorf("%s inside: mode %o, want 640", verb, m)
			}
			wantDenied(t, verb+" outside the writable roots", s.tool(s.policy(), verb, "644", outside), refused)
			if verb != "fchmod" {
				wantDenied(t, verb+" through a symlink out of the workspace", s.tool(s.policy(), verb, "644", link), refused)
			}
			if m := mode(outside); m != 0o600 {
				t.Errorf("%s: the file outside has mode %o, want 600", verb, m)
			}
			ro := s.policy()
			ro.Mode = sandbox.ReadOnly
			wantDenied(t, verb+" in the workspace, read-only mode", s.tool(ro, verb, "644", inside), refused)
			if m := mode(inside); m != 0o640 {
				t.Errorf("%s read-only: mode %o, want 640", verb, m)
			}
			wantDenied(t, verb+" setuid inside the workspace", s.tool(s.policy(), verb, "4755", inside), "EPERM")
		}
		for _, verb := range []string{"chgrp", "fchown-group", "utimes", "setxattr-user", "acl-other-read", "nodump"} {
			// Control: unconfined, on this file system, the call works on
			// the file outside (xattrs and ACLs need their support).
			if got := hostTool(t, verb, outside); got != "ok" {
				t.Logf("%s unconfined: %s; not tested on this file system", verb, got)
				continue
			}
			write(t, outside, "x")
			before, _ := os.Stat(outside)
			wantOK(t, verb+" inside the workspace", s.tool(s.policy(), verb, inside))
			wantDenied(t, verb+" outside the writable roots", s.tool(s.policy(), verb, outside), refused)
			if verb != "fchown-group" && verb != "nodump" {
				wantDenied(t, verb+" through a symlink out of the workspace", s.tool(s.policy(), verb, link), refused)
			}
			if after, _ := os.Stat(outside); !after.ModTime().Equal(before.ModTime()) && verb == "utimes" {
				t.Errorf("utimes: the file outside has new times")
			}
		}
		// The temp dir is writable in read-only mode too.
		ro := s.policy()
		ro.Mode = sandbox.ReadOnly
		r := s.run(ro, "/bin/sh", "-c", `f="$TMPDIR/t"; echo x > "$f" && chmod 640 "$f" && stat -c %a "$f"`)
		if r.code != 0 || strings.TrimSpace(r.stdout) != "640" {
			t.Errorf("chmod in the temp dir, read-only mode: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}

// TestFileSetattrConfined: file_setattr(2) (Linux 6.17) sets the same
// inode flags as chattr's ioctl, which the landlock supervisor confines,
// but the filter neither handed it over nor refused it: a command could
// set nodump, noatime and sync on a file outside the writable roots.
// Under landlock it now answers ENOSYS (the C library and chattr use the
// ioctl); under namespaces the file outside is on a read-only mount
// (EROFS). The control makes the same call unconfined.
func TestFileSetattrConfined(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		outside := filepath.Join(s.base, "own-file")
		write(t, outside, "x")
		switch r := hostTool(t, "file-setattr", outside); r {
		case "ENOSYS":
			t.Skip("this kernel has no file_setattr (Linux 6.17)")
		case "ENOTSUP", "EOPNOTSUPP":
			t.Skip("this file system keeps no inode flags (fuse-overlayfs in the container matrix): file_setattr cannot start here")
		case "ok":
			exec.Command("chattr", "-d", outside).Run()
		default:
			t.Fatalf("control: file_setattr unconfined: %s", r)
		}
		refused := map[string][]string{"landlock": {"ENOSYS"}, "namespaces": {"EROFS"}}[s.runner]
		wantDenied(t, "file_setattr outside the writable roots", s.tool(s.policy(), "file-setattr", outside), refused...)
		if out, err := exec.Command("lsattr", "-d", outside).Output(); err == nil && strings.Contains(strings.Fields(string(out))[0], "d") {
			t.Errorf("the file outside got the nodump flag: %s", out)
		}
	})
}

// TestMessageQueuesStayInside: under landlock the command shares the
// host's IPC namespace, and a POSIX message queue it made outlived it (red
// team): mq_open and mq_unlink are refused there. Under namespaces a
// queue would live in the sandbox's own IPC namespace and go with it. The
// control makes a queue unconfined; the host then sees none.
func TestMessageQueuesStayInside(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		name := randomName("sbx-mq-") // as the system call takes it: no leading slash
		wantOK(t, "control: mq_open unconfined", hostTool(t, "mq-open", name))
		p, _ := unix.BytePtrFromString(name)
		unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(p)), 0, 0)
		r := s.tool(s.policy(), "mq-open", name)
		if s.runner == "landlock" {
			wantDenied(t, "mq_open under landlock", r, "EACCES")
		} else if r != "ok" && r != "EACCES" {
			// Made in the sandbox's own IPC namespace, or refused by the
			// deny-read carving (Landlock confines the open of a queue,
			// which lies on no path it grants).
			t.Errorf("mq_open under namespaces: %s, want ok or EACCES", r)
		}
		if fd, _, e := unix.Syscall(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), unix.O_RDONLY, 0); e == 0 {
			unix.Close(int(fd))
			unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(p)), 0, 0)
			t.Errorf("the queue /%s outlived the sandbox", name)
		}
	})
}
