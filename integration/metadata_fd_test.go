//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// ownDescriptorForms are the paths by which a process names a descriptor it
// holds: /proc/self/fd/N, /proc/thread-self/fd/N, /dev/fd/N and
// /proc/PID/fd/N with its own pid or tid (the tool verb fdpath).
var ownDescriptorForms = []string{"self", "thread-self", "devfd", "pid", "tid"}

// TestMetadataThroughOwnDescriptors: GNU tar, and glibc's fchmodat with
// AT_SYMLINK_NOFOLLOW, change a mode by chmod("/proc/self/fd/N") on an
// O_PATH descriptor they hold. Under landlock the supervisor makes the call,
// and its /proc/self is itself: it must read the path as the command's
// descriptor N, then confine the object that descriptor names, never the
// path string. So: mode, group and times through every such path work in
// the workspace (and beneath a directory descriptor) and are refused
// outside; a descriptor on a symlink out of the workspace is the symlink
// itself (EOPNOTSUPP, as unconfined), never its target; AT_EMPTY_PATH on a
// descriptor works inside and is refused outside; fchmod of an O_PATH
// descriptor is EBADF, as the kernel answers; an fchmod from a thread
// other than the leader is confined the same. A symlink the command
// makes to /proc/self/fd/N is refused under landlock (the supervisor cannot
// read /proc/self as the command does) and works under namespaces.
func TestMetadataThroughOwnDescriptors(t *testing.T) {
	// Controls: unconfined, each form reaches the descriptor's object, and
	// a descriptor on a symlink is the symlink (its mode: EOPNOTSUPP).
	ctlDir := t.TempDir()
	ctl := filepath.Join(ctlDir, "f")
	write(t, ctl, "x")
	for _, form := range ownDescriptorForms {
		os.Chmod(ctl, 0o600)
		wantOK(t, "control: chmod through "+form, hostTool(t, "fdpath", "chmod", form, "640", ctl))
		if m := hostToolRaw(t, "mode", ctl); m != "640" {
			t.Fatalf("control: chmod through %s: mode %s", form, m)
		}
	}
	ctlLink := filepath.Join(ctlDir, "link")
	os.Symlink(ctl, ctlLink)
	wantDenied(t, "control: chmod through a descriptor on a symlink", hostTool(t, "fdpath", "chmod", "self", "644", ctlLink), "EOPNOTSUPP", "ENOTSUP")
	emptyOps := []string{"chmod", "chown", "utimes"}
	if got := hostTool(t, "emptypath", "chmod", "640", ctl); got == "ENOSYS" {
		t.Logf("fchmodat2 unconfined: ENOSYS; its AT_EMPTY_PATH not tested here")
		emptyOps = emptyOps[1:]
	}
	for _, op := range emptyOps {
		wantOK(t, "control: "+op+" by AT_EMPTY_PATH", hostTool(t, "emptypath", op, "640", ctl))
	}
	wantDenied(t, "control: fchmod of an O_PATH descriptor", hostTool(t, "opath-fchmod", "640", ctl), "EBADF")
	os.Chmod(ctl, 0o600)
	wantOK(t, "control: fchmod from a thread other than the leader", hostTool(t, "thread-fchmod", "640", ctl))
	if m := hostToolRaw(t, "mode", ctl); m != "640" {
		t.Fatalf("control: fchmod from a thread other than the leader: mode %s", m)
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		refused := "EACCES"
		if s.runner == "namespaces" {
			refused = "EROFS"
		}
		inside := filepath.Join(s.ws, "inside")
		outside := filepath.Join(s.base, "own-file")
		insideDir := filepath.Join(s.ws, "dir")
		outsideDir := filepath.Join(s.base, "dir")
		write(t, filepath.Join(insideDir, "sub"), "x")
		write(t, filepath.Join(outsideDir, "sub"), "x")
		linkOut := filepath.Join(s.ws, "link-out")
		reset := func() {
			for _, p := range []string{inside, outside} {
				write(t, p, "x")
				os.Chmod(p, 0o600)
			}
		}
		wantMode := func(what, p string, want os.FileMode) {
			t.Helper()
			if fi, err := os.Lstat(p); err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s: %s has mode %v (%v), want %o", what, p, fi.Mode().Perm(), err, want)
			}
		}
		unchanged := func(what string) {
			t.Helper()
			wantMode(what, outside, 0o600)
			if fi, err := os.Stat(outside); err != nil || time.Since(fi.ModTime()) > time.Hour {
				t.Errorf("%s: the file outside has new times (%v)", what, err)
			}
		}
		for _, form := range ownDescriptorForms {
			for _, op := range []string{"chmod", "chown", "utimes"} {
				reset()
				what := op + " through " + form
				wantOK(t, what+" inside the workspace", s.tool(s.policy(), "fdpath", op, form, "640", inside))
				switch fi, _ := os.Stat(inside); op {
				case "chmod":
					wantMode(what, inside, 0o640)
				case "utimes":
					if fi.ModTime().Unix() != 0 {
						t.Errorf("%s: mtime %v, want the epoch", what, fi.ModTime())
					}
				}
				wantDenied(t, what+" outside the writable roots", s.tool(s.policy(), "fdpath", op, form, "640", outside), refused)
				unchanged(what)
			}
			// A directory descriptor, then more of the path beneath it.
			os.Chmod(filepath.Join(insideDir, "sub"), 0o600)
			os.Chmod(filepath.Join(outsideDir, "sub"), 0o600)
			wantOK(t, "chmod through "+form+" and beneath", s.tool(s.policy(), "fdpath", "chmod", form, "640", insideDir, "/sub"))
			wantMode("chmod beneath "+form, filepath.Join(insideDir, "sub"), 0o640)
			wantOK(t, "chmod through "+form+"/", s.tool(s.policy(), "fdpath", "chmod", form, "750", insideDir, "/"))
			wantMode("chmod "+form+"/", insideDir, 0o750)
			wantDenied(t, "chmod through "+form+" beneath a directory outside", s.tool(s.policy(), "fdpath", "chmod", form, "640", outsideDir, "/sub"), refused)
			wantMode("chmod beneath "+form+" outside", filepath.Join(outsideDir, "sub"), 0o600)
		}
		// The descriptor on a symlink out of the workspace is the symlink
		// itself, as the kernel reads it: reading the path string back and
		// following it would change the file outside.
		reset()
		os.Symlink(outside, linkOut)
		wantDenied(t, "chmod through a descriptor on a symlink out", s.tool(s.policy(), "fdpath", "chmod", "self", "644", linkOut), "EOPNOTSUPP", "ENOTSUP")
		wantOK(t, "utimes through a descriptor on a symlink out (its own)", s.tool(s.policy(), "fdpath", "utimes", "self", "644", linkOut))
		unchanged("a descriptor on a symlink out")
		for _, op := range emptyOps {
			reset()
			wantOK(t, op+" by AT_EMPTY_PATH inside", s.tool(s.policy(), "emptypath", op, "640", inside))
			wantDenied(t, op+" by AT_EMPTY_PATH outside", s.tool(s.policy(), "emptypath", op, "640", outside), refused)
			unchanged(op + " by AT_EMPTY_PATH")
		}
		// fchmod of an O_PATH descriptor: EBADF, as the kernel answers.
		reset()
		wantDenied(t, "fchmod of an O_PATH descriptor", s.tool(s.policy(), "opath-fchmod", "640", inside), "EBADF")
		wantMode("fchmod of an O_PATH descriptor", inside, 0o600)
		// From a thread other than the leader: the supervisor takes the
		// descriptor from that thread (a pidfd of the thread), and
		// confines it the same.
		reset()
		wantOK(t, "fchmod from a thread other than the leader, inside", s.tool(s.policy(), "thread-fchmod", "640", inside))
		wantMode("fchmod from a thread other than the leader", inside, 0o640)
		wantDenied(t, "fchmod from a thread other than the leader, outside", s.tool(s.policy(), "thread-fchmod", "640", outside), refused)
		unchanged("fchmod from a thread other than the leader")
		// A symlink to /proc/self/fd/N.
		reset()
		got := s.tool(s.policy(), "magic-link", "640", inside, filepath.Join(s.ws, "magic"))
		if s.runner == "landlock" {
			wantDenied(t, "chmod through a symlink to /proc/self/fd/N", got, "EACCES")
			wantMode("a symlink to /proc/self/fd/N", inside, 0o600)
		} else {
			wantOK(t, "chmod through a symlink to /proc/self/fd/N", got)
			wantMode("a symlink to /proc/self/fd/N", inside, 0o640)
		}
	})
}
