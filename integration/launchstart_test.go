//go:build linux

package integration

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/sandbox"
)

// The launcher starts before it has confined itself: its dynamic loader,
// its C start-up and (landlock-run) its Go runtime run with the rights of
// the caller. Whatever a previous command left in a writable root must not
// reach that start. These cases plant a shared library named like one the
// launcher binary needs in the workspace and start wraps with an
// environment that would make the loader find it.

// plantedLibrary builds, in dir, a shared library named like the first
// library bin needs beyond libc and the loader, whose constructor writes
// marker: the marker appearing means the library ran. It returns the
// library's path.
func plantedLibrary(t *testing.T, bin, dir, marker string) string {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, err := f.ImportedLibraries()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if staticELF(t, bin) {
		return "" // nothing to plant: no loader runs (see staticELF)
	}
	name := ""
	for _, l := range libs {
		if !strings.HasPrefix(l, "libc.so") && !strings.HasPrefix(l, "ld-linux") {
			name = l
			break
		}
	}
	if name == "" {
		t.Fatalf("%s needs no library to plant beyond libc (%v)", bin, libs)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("the planted-library cases need gcc: %v", err)
	}
	src := filepath.Join(t.TempDir(), "planted.c")
	write(t, src, fmt.Sprintf(`#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
	int fd = open(%q, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, "loaded\n", 7) < 0) {}
		close(fd);
	}
}
`, marker))
	lib := filepath.Join(dir, name)
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return lib
}

// loaderTraps are environments that make the dynamic loader look in the
// workspace: an empty entry in LD_LIBRARY_PATH (the current directory, a
// common slip), a relative one, and the workspace itself (a build's output
// directory).
func loaderTraps(ws string) map[string]string {
	return map[string]string{
		"empty entry":    ":/nonexistent-lib-dir",
		"relative entry": ".",
		"the workspace":  ws,
	}
}

func withVar(env []string, name, value string) []string {
	return append(dropEnv(env, name), name+"="+value)
}

// runUnconfined runs bin with args in dir with env, as a consumer runs a
// helper of its own: the positive control that the loader does pick the
// planted library up.
func runUnconfined(t *testing.T, bin, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("unconfined %s: %v\n%s", bin, err, out)
	}
}

// staticELF reports whether bin is a static executable: no interpreter
// (the dynamic loader) and no library it needs, so a library planted in
// the workspace, or LD_LIBRARY_PATH and the like, can reach nothing when
// it starts. A CGO_ENABLED=0 build is one; the planted-library cases hold
// for it by construction, and this is their check.
func staticELF(t *testing.T, bin string) bool {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	if len(libs) > 0 {
		t.Fatalf("%s has no interpreter but needs %v", bin, libs)
	}
	t.Logf("%s is a static executable: no dynamic loader runs, no library can be planted", bin)
	return true
}

// TestPlantedLibraryNeverReachesTheLauncher: a library a previous command
// planted in the workspace is not loaded by the launcher's dynamic loader,
// whatever LD_LIBRARY_PATH the caller has; the same library is loaded when
// the consumer runs its own binary unconfined with that environment.
func TestPlantedLibraryNeverReachesTheLauncher(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		marker := filepath.Join(s.base, "planted-library-ran")
		if plantedLibrary(t, self(t), s.ws, marker) == "" {
			return
		}
		for what, llp := range loaderTraps(s.ws) {
			env := withVar(os.Environ(), "LD_LIBRARY_PATH", llp)
			runUnconfined(t, self(t), s.ws, env, toolArg, "has-env", "HOME")
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("%s: positive control: the planted library did not run unconfined (%v): the attack cannot start here", what, err)
			}
			os.Remove(marker)

			req := sandboxRequest(s.policy(), "/bin/true")
			req.Env = env
			w, err := s.p.Wrap(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			r := s.spawn(w, nil)
			w.Cleanup()
			if r.code != 0 {
				t.Errorf("%s: exit %d, stderr %q", what, r.code, r.stderr)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("%s: the launcher loaded the library planted in the workspace, unconfined", what)
				os.Remove(marker)
			}
		}
	})
}

// TestPlantedLibraryAndAJSONConsumer: a consumer that spawns from the JSON
// with its own environment, holding nothing back, in the directory the
// wrap names: the neutral directory alone keeps an empty LD_LIBRARY_PATH
// entry from finding the planted library.
func TestPlantedLibraryAndAJSONConsumer(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		marker := filepath.Join(s.base, "planted-library-ran")
		if plantedLibrary(t, self(t), s.ws, marker) == "" {
			return
		}
		w := s.wrap(s.policy(), "/bin/sh", "-c", "pwd")
		b, err := jsonRoundTrip(w)
		if err != nil {
			t.Fatal(err)
		}
		env := append(withVar(os.Environ(), "LD_LIBRARY_PATH", ":/nonexistent-lib-dir"), b.LaunchEnv...)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, b.Path)
		cmd.Args, cmd.Env, cmd.Dir = b.Args, env, b.Dir
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != s.ws {
			t.Errorf("spawned from the JSON: %v, pwd %q, want %s", err, out, s.ws)
		}
		wantAbsent(t, marker)
	})
}

// TestLauncherStartsInRoot: the launcher is spawned in / (the wrap's Dir),
// and the command runs in its own directory, which the launcher entered
// once confined. ns-run's first stage stays the spawned process, so its
// working directory is seen from outside.
func TestLauncherStartsInRoot(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		sub := filepath.Join(s.ws, "sub")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		req := sandboxRequest(s.policy(), "/bin/sh", "-c", "pwd; read x")
		req.Dir = sub
		w, err := s.p.Wrap(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Cleanup()
		if w.Dir != "/" {
			t.Errorf("Wrapped.Dir = %q, want /", w.Dir)
		}
		cmd := w.Command(t.Context())
		if cmd.Dir != "/" {
			t.Errorf("Command().Dir = %q, want /", cmd.Dir)
		}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(out.String(), "\n") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if s.runner == "namespaces" {
			if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", cmd.Process.Pid)); err != nil || cwd != "/" {
				t.Errorf("ns-run's first stage works in %q (%v), want /", cwd, err)
			}
		}
		stdin.Close()
		cmd.Wait()
		if got := strings.TrimSpace(out.String()); got != sub {
			t.Errorf("the command works in %q, want %s", got, sub)
		}
	})
}

// commandEnviron runs env -0 under the wrap of req and returns the
// command's environment, sorted.
func commandEnviron(t *testing.T, s *sbx, env []string) ([]string, *sandbox.Wrapped) {
	t.Helper()
	req := sandboxRequest(s.policy(), "/usr/bin/env", "-0")
	req.Env = env
	req.Policy.Caches.Off = true // the wrap's cache variables are not what is compared
	w, err := s.p.Wrap(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Cleanup() })
	r := s.spawn(w, nil)
	if r.code != 0 {
		t.Fatalf("env -0: exit %d, stderr %q", r.code, r.stderr)
	}
	return environ(r.stdout, ""), w
}

// environ parses env -0's output, sorted, without the variable drop.
func environ(out, drop string) []string {
	var vars []string
	for _, kv := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		if drop == "" || !strings.HasPrefix(kv, drop+"=") {
			vars = append(vars, kv)
		}
	}
	sort.Strings(vars)
	return vars
}

// TestCommandGetsHeldVariablesExactly: the variables the launcher starts
// without reach the command exactly as the caller set them, odd values
// included, and nothing else changes but TMPDIR.
func TestCommandGetsHeldVariablesExactly(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		env := []string{
			"PATH=" + os.Getenv("PATH"),
			"LD_LIBRARY_PATH=:/nonexistent-lib-dir",
			"LD_BIND_NOW=",
			"LD_ODD=a=b=c",
			"MALLOC_TOP_PAD_=4096",
			"MALLOC_ODD=line one\nline two",
			"GODEBUG=madvdontneed=1,asyncpreemptoff=1",
			"GOGC=off",
			"GOMEMLIMIT=1GiB",
			"GOTRACEBACK=all",
			"GLIBC_TUNABLES=glibc.malloc.check=0",
			"TZDIR=",
			"LOCPATH=/nonexistent-locales",
			"NOT_HELD==leading equals",
		}
		got, w := commandEnviron(t, s, env)
		want := append(append([]string(nil), env...), "TMPDIR="+w.TempDir)
		sort.Strings(want)
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("the command's environment:\n got %q\nwant %q", got, want)
		}
	})
}

// TestHeldPrefixCannotInject: a caller's variable that already carries the
// launcher's held prefix is dropped: it neither becomes a variable of the
// command nor overrides one the caller set.
func TestHeldPrefixCannotInject(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		env := []string{
			"PATH=" + os.Getenv("PATH"),
			"LD_LIBRARY_PATH=/the-callers",
			vocab.HeldEnvPrefix + "LD_LIBRARY_PATH=/injected",
			vocab.HeldEnvPrefix + "LD_PRELOAD=" + filepath.Join(s.ws, "injected.so"),
			vocab.HeldEnvPrefix + "INJECTED=1",
			vocab.HeldEnvPrefix + "=empty name",
		}
		got, w := commandEnviron(t, s, env)
		want := []string{"LD_LIBRARY_PATH=/the-callers", "PATH=" + os.Getenv("PATH"), "TMPDIR=" + w.TempDir}
		sort.Strings(want)
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("the command's environment:\n got %q\nwant %q", got, want)
		}
	})
}

// TestCLIStartsInTheWorkspace: sandbox-run started outside --workspace
// runs the command in the workspace, and neither its in-place launcher nor
// the one it spawns for a report loads a library planted there. sandbox-run
// needs no library but libc, so the CLI here is built with libm as well,
// the library planted.
func TestCLIStartsInTheWorkspace(t *testing.T) {
	bin := helperBinary(t, "sandbox-run-libm")
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			marker := filepath.Join(s.base, "planted-library-ran")
			planted := plantedLibrary(t, bin, s.ws, marker) != ""
			env := withVar(os.Environ(), "LD_LIBRARY_PATH", ":/nonexistent-lib-dir")
			if planted {
				runUnconfined(t, bin, s.ws, env, "--help")
				if _, err := os.Stat(marker); err != nil {
					t.Fatalf("positive control: the planted library did not run unconfined (%v)", err)
				}
				os.Remove(marker)
			}
			for _, extra := range [][]string{nil, {"--json-report", filepath.Join(s.base, "report.json")}} {
				args := append(append([]string{"--runner", runner, "--workspace", s.ws}, extra...), "--", "/bin/sh", "-c", "pwd")
				cmd := exec.Command(bin, args...)
				cmd.Dir, cmd.Env = s.base, env
				var errb bytes.Buffer
				cmd.Stderr = &errb
				out, err := cmd.Output()
				if err != nil || strings.TrimSpace(string(out)) != s.ws {
					t.Errorf("%q: %v, pwd %q (stderr %q), want %s", extra, err, out, errb.String(), s.ws)
				}
				wantAbsent(t, marker)
			}
		})
	}
}

// jsonRoundTrip is w as a consumer reads it from the JSON.
func jsonRoundTrip(w *sandbox.Wrapped) (*sandbox.Wrapped, error) {
	b, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	var out sandbox.Wrapped
	return &out, json.Unmarshal(b, &out)
}

// TestCLIGivesTheCommandHeldVariables: through sandbox-run (the launcher
// in place, exec'd or in-process, and spawned for a report) the command
// gets the caller's environment exactly, held variables included, TMPDIR
// aside; a caller's held-prefix variable is dropped.
func TestCLIGivesTheCommandHeldVariables(t *testing.T) {
	bin := helperBinary(t, "sandbox-run")
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"LD_LIBRARY_PATH=:/nonexistent-lib-dir",
		"LD_ODD=a=b=c",
		"MALLOC_ODD=line one\nline two",
		"GODEBUG=",
		"GOTRACEBACK=all",
	}
	want := append([]string(nil), env...)
	sort.Strings(want)
	for _, runner := range linuxRunners {
		t.Run(runner, func(t *testing.T) {
			s := newSbx(t, runner)
			for _, extra := range [][]string{nil, {"--json-report", filepath.Join(s.base, "report.json")}} {
				args := append(append([]string{"--runner", runner, "--workspace", s.ws, "--no-caches"}, extra...), "--", "/usr/bin/env", "-0")
				cmd := exec.Command(bin, args...)
				cmd.Dir, cmd.Env = s.ws, append(env, vocab.HeldEnvPrefix+"INJECTED=1")
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%q: %v", extra, err)
				}
				if got := environ(string(out), "TMPDIR"); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
					t.Errorf("%q: the command's environment:\n got %q\nwant %q", extra, got, want)
				}
			}
		})
	}
}
