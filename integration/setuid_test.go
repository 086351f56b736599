//go:build linux

package integration

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// setuidProbe returns a copy of testdata/euid installed setuid to another
// user, and that user's uid. As root the test makes it itself (owned by
// nobody); the unprivileged run gets one owned by root from scripts/test
// (SBX_HELPERS/euid-setuid-root), as no ordinary user can make one.
func setuidProbe(t *testing.T) (string, int) {
	t.Helper()
	if os.Getuid() != 0 {
		dir := os.Getenv("SBX_HELPERS")
		if dir == "" {
			t.Skip("an ordinary user cannot make a setuid-root probe: scripts/test makes one for its unprivileged run")
		}
		p := filepath.Join(dir, "euid-setuid-root")
		fi, err := os.Stat(p)
		if err != nil || fi.Mode()&os.ModeSetuid == 0 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Fatalf("SBX_HELPERS has no setuid-root euid probe (%v): scripts/test installs it", err)
		}
		return p, 0
	}
	const nobody = 65534
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	p := filepath.Join(dir, "euid-setuid")
	src, err := os.Open(helperBinary(t, "euid"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Chown(p, nobody, nobody)
	}
	if err == nil {
		err = os.Chmod(p, 0o755|os.ModeSetuid) // after chown, which clears it
	}
	if err != nil {
		t.Fatal(err)
	}
	return p, nobody
}

// TestSetuidBinariesGainNothing: a setuid binary runs with the caller's
// own identity inside (no_new_privs, and nosuid mounts under namespaces),
// while unconfined it takes its owner's.
func TestSetuidBinariesGainNothing(t *testing.T) {
	probe, owner := setuidProbe(t)
	out, err := exec.Command(probe).Output()
	if want := fmt.Sprintf("euid %d\n", owner); err != nil || string(out) != want {
		t.Fatalf("control: the setuid probe unconfined said %q (%v), want %q", out, err, want)
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		r := s.run(s.policy(), probe)
		if want := fmt.Sprintf("euid %d", os.Geteuid()); r.code != 0 || strings.TrimSpace(r.stdout) != want {
			t.Errorf("setuid probe inside: exit %d stdout %q stderr %q, want %q", r.code, r.stdout, r.stderr, want)
		}
	})
}

// TestNoHostSettings: the hostname, the clock and kernel modules are the
// whole host's. Where the caller may change them (root), the command may
// not; where it may not, the command gains nothing. A kernel without
// loadable modules has nothing to unload: that case is skipped, saying so.
func TestNoHostSettings(t *testing.T) {
	for _, kind := range []string{"hostname", "clock", "module"} {
		t.Run(kind, func(t *testing.T) {
			control := hostToolRaw(t, "host-setting", kind)
			switch {
			case kind == "module" && control == "ENOSYS":
				t.Skip("this kernel has no loadable modules (delete_module: ENOSYS)")
			case kind == "module" && control == "ENOENT", control == "ok":
				// The caller is privileged: a real attack.
			case control == "EPERM":
				// An ordinary caller: the command must gain nothing.
			default:
				t.Fatalf("control: %s unconfined: %q", kind, control)
			}
			forEachRunner(t, func(t *testing.T, s *sbx) {
				r := s.run(s.policy(), self(t), toolArg, "host-setting", kind)
				if got := strings.TrimSpace(r.stdout); got != "EPERM" {
					t.Errorf("%s inside (unconfined: %s): %q, want EPERM", kind, control, got)
				}
			})
		})
	}
}
