//go:build linux

package integration

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// sessionStep is one thing an agent does in a project: a shell snippet run
// in the workspace, and the line it must print. Scratch goes to the wrap's
// TMPDIR; the toolchains' caches (Go's, npm's, cargo's) to the
// workspace's own, which the default policy gives.
type sessionStep struct {
	tool, script, want string
}

// sessionSteps is an agent's session on a small project, one step per
// tool: git, go build and test, make, npm, python with a venv and pip,
// cargo.
func sessionSteps() []sessionStep {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	return []sessionStep{
		{"git", `git init -q && git add -A && git -c user.email=a@b -c user.name=a commit -qm init && git log --oneline | wc -l`, "1"},
		{goBin, `export GOTOOLCHAIN=local GOFLAGS=; ` + goBin + ` build -o "$TMPDIR/app" . && ` + goBin + ` test ./... >/dev/null && "$TMPDIR/app"`, "hello"},
		{"make", `make -s hello`, "made"},
		{"npm", `npm test --silent`, "tested"},
		{"python3", `python3 -m venv "$TMPDIR/venv" && "$TMPDIR/venv/bin/pip" --version >/dev/null && "$TMPDIR/venv/bin/python" -c 'print("venv")'`, "venv"},
		{"cargo", `cd crate && CARGO_TARGET_DIR="$TMPDIR/target" cargo build -q --offline && "$TMPDIR/target/debug/crate"`, "crated"},
	}
}

// writeProject fills dir with the project the session works on.
func writeProject(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"go.mod":            "module example.com/app\n\ngo 1.22\n",
		"main.go":           "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(greeting()) }\n\nfunc greeting() string { return \"hello\" }\n",
		"main_test.go":      "package main\n\nimport \"testing\"\n\nfunc TestGreeting(t *testing.T) {\n\tif greeting() != \"hello\" {\n\t\tt.Fatal(greeting())\n\t}\n}\n",
		"Makefile":          "hello:\n\t@echo made\n",
		"package.json":      `{"name":"app","version":"1.0.0","scripts":{"test":"node -e \"console.log('tested')\""}}` + "\n",
		"crate/Cargo.toml":  "[package]\nname = \"crate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"crate/src/main.rs": "fn main() { println!(\"crated\"); }\n",
		"README":            "a project\n",
		".gitignore":        "crate/target\n",
	}
	for name, content := range files {
		write(t, filepath.Join(dir, name), content)
	}
}

// TestAgentSession: the tools an agent runs work under both runners with
// the default policy (credential stores denied, environment filtered,
// git's hooks and config read-only), each step checked first unconfined
// in a copy of the project (a tool this machine or this user lacks is
// left out, and said so).
func TestAgentSession(t *testing.T) {
	var steps []sessionStep
	for _, st := range sessionSteps() {
		ctl := t.TempDir()
		writeProject(t, ctl)
		tmp := t.TempDir()
		cmd := exec.Command("/bin/sh", "-c", st.script)
		cmd.Dir = ctl
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		out, err := cmd.CombinedOutput()
		if _, lerr := exec.LookPath(st.tool); lerr != nil || err != nil || lastLine(string(out)) != st.want {
			t.Logf("%s: not in this session (unconfined: %v, %v, %q)", filepath.Base(st.tool), lerr, err, lastLine(string(out)))
			continue
		}
		steps = append(steps, st)
	}
	if len(steps) < 4 {
		t.Fatalf("only %d of the session's tools work here unconfined", len(steps))
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		writeProject(t, s.ws)
		for _, st := range steps {
			r := s.run(s.policy(), "/bin/sh", "-c", st.script)
			if r.code != 0 || lastLine(r.stdout) != st.want {
				t.Errorf("%s under %s: exit %d stdout %q stderr %.600q", filepath.Base(st.tool), s.runner, r.code, r.stdout, r.stderr)
			}
			removeCacheDir(t, r.w.CacheDir)
		}
	})
}

// removeCacheDir removes a test workspace's cache dir (under the user's
// own cache dir) at the end of the test, its read-only directories too.
func removeCacheDir(t *testing.T, dir string) {
	if dir == "" || !strings.Contains(dir, string(filepath.Separator)+"sandbox-local"+string(filepath.Separator)) {
		return
	}
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Type()&fs.ModeSymlink == 0 {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
		os.Remove(dir + ".json")
	})
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
