//go:build linux && cgo

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// errataShim makes libc's syscall(2) answer Landlock's errata query with
// none fixed, the way a kernel with the signal scoping erratum unfixed
// answers it; every other call goes to libc.
const errataShim = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
long syscall(long n, ...) {
	va_list ap;
	va_start(ap, n);
	long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
	long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
	va_end(ap);
	if (n == 444 && a == 0 && b == 0 && c == 2)
		return 0;
	static long (*real)(long, ...);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(n, a, b, c, d, e, f);
}
`

// TestErratumKernelStillScopesSignals: on a kernel whose signal scoping
// erratum is unfixed, the provider plans for one ABI below the scopes (and
// reports the signal gap), but the C landlock launcher builds its ruleset
// for the kernel's own level, as go-landlock builds the Go launcher's: the
// command still cannot signal a process outside the sandbox. The erratum
// is faked with a libc shim (LD_PRELOAD, given to the launcher by hand):
// with the ABI the provider saw on this kernel, the launcher must refuse
// (the shim took effect); with the lowered one, it runs, and the signal
// out is refused while a signal to its own shell goes through.
func TestErratumKernelStillScopesSignals(t *testing.T) {
	if !slices.Contains(linuxRunners, sandbox.RunnerLandlock) {
		t.Skip("the landlock runner is not among SBX_RUNNERS")
	}
	s := newSbx(t, sandbox.RunnerLandlock)
	abi := s.p.Diagnose(t.Context()).Host.LandlockABI
	if abi < 6 {
		t.Skipf("the kernel's Landlock ABI %d has no signal scoping", abi)
	}
	dir := t.TempDir()
	src, shim := filepath.Join(dir, "shim.c"), filepath.Join(dir, "shim.so")
	if err := os.WriteFile(src, []byte(errataShim), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cc", "-shared", "-fPIC", "-o", shim, src, "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("build the shim: %v %s", err, out)
	}
	os.Chmod(dir, 0o755)
	outside := exec.Command("sleep", "60")
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { outside.Process.Kill(); outside.Wait() }()
	script := `kill -0 ` + strconv.Itoa(outside.Process.Pid) + ` 2>/dev/null; echo "out=$?"; kill -0 $$; echo "self=$?"`
	run := func(setABI string) ran {
		w := s.wrap(s.policy(), "/bin/sh", "-c", script)
		for i := range w.Args {
			if w.Args[i] == "-abi" && setABI != "" {
				w.Args[i+1] = setABI
			}
		}
		w.Env = append(w.Env, "LD_PRELOAD="+shim)
		return s.spawn(w, nil)
	}
	r := run("")
	if r.code != 125 || !strings.Contains(r.stderr, "the kernel reports 5") {
		t.Fatalf("with the shim and -abi %d: exit %d stderr %q, want the launcher to refuse a kernel that reports 5 (the shim not in effect?)", abi, r.code, r.stderr)
	}
	r = run("5")
	if r.code != 0 || !strings.Contains(r.stdout, "self=0") {
		t.Fatalf("with the shim and -abi 5: exit %d stdout %q stderr %q, want the command to run and signal its own shell", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "out=1") {
		t.Errorf("on a kernel with the erratum unfixed, the command signalled a process outside the sandbox: %q", r.stdout)
	}
}
