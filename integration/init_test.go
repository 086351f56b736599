//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// helperBinary returns a program of this module: prebuilt in $SBX_HELPERS
// (the test script builds them, so an unprivileged run needs no
// toolchain), or built once per test binary.
func helperBinary(t *testing.T, name string) string {
	t.Helper()
	if dir := os.Getenv("SBX_HELPERS"); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("SBX_HELPERS has no %s: %v", name, err)
		}
		return p
	}
	helpersMu.Lock()
	defer helpersMu.Unlock()
	if p, ok := helpers[name]; ok {
		return p
	}
	if helpersDir == "" {
		d, err := os.MkdirTemp("", "sbx-helpers-")
		if err != nil {
			t.Fatal(err)
		}
		helpersDir = d
	}
	pkg := "./testdata/" + name
	var flags []string
	switch name {
	case "sandbox-run":
		pkg = "../cmd/sandbox-run"
	case "sandbox-run-libm":
		// The CLI linked with one more shared library than libc, as a
		// consumer's binary may be: the planted-library cases need a
		// library to plant (sandbox-run itself needs only libc).
		pkg, flags = "../cmd/sandbox-run", []string{"-ldflags", sandboxRunLibmLDFlags}
	}
	out := filepath.Join(helpersDir, name)
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", out, pkg)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s (set SBX_HELPERS to prebuilt helpers): %v\n%s", name, err, b)
	}
	helpers[name] = out
	return out
}

// sandboxRunLibmLDFlags build sandbox-run-libm; scripts/test passes the
// same.
const sandboxRunLibmLDFlags = `-extldflags "-Wl,--no-as-needed -lm"`

var (
	helpersMu  sync.Mutex
	helpers    = map[string]string{}
	helpersDir string
)

func TestForgottenInitFailsClosed(t *testing.T) {
	ws := t.TempDir()
	out, err := exec.Command(helperBinary(t, "noinit"), ws).CombinedOutput()
	if err != nil {
		t.Fatalf("noinit: %v\n%s", err, out)
	}
	got := string(out)
	if !strings.HasPrefix(got, "SANDBOX_UNAVAILABLE") || !strings.Contains(got, "launcher.Init()") {
		t.Fatalf("noinit got %q, want SANDBOX_UNAVAILABLE naming launcher.Init()", got)
	}
}

func TestLateInitFailsTheProbe(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		out, err := exec.Command(helperBinary(t, "lateinit"), "run", s.ws, s.runner).CombinedOutput()
		if err != nil {
			t.Fatalf("lateinit: %v\n%s", err, out)
		}
		got := string(out)
		if s.runner == "namespaces" || landlockInC {
			// ns-run, and landlock-run in a cgo build, are C that runs
			// from a constructor before main: a late Init cannot break
			// them, and their probe passes.
			if got != "<nil>\n" {
				t.Fatalf("lateinit with %s got %q, want a wrap", s.runner, got)
			}
			return
		}
		if !strings.HasPrefix(got, "SANDBOX_UNAVAILABLE") || !strings.Contains(got, "did not answer the probe") {
			t.Fatalf("lateinit got %q, want SANDBOX_UNAVAILABLE from a failed probe", got)
		}
	})
}
