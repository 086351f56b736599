//go:build linux

package integration

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// TestToolConfigsReadOnlyByDefault: the editor, agent and tool configs that
// exist in the workspace (sandbox.DefaultToolConfigs) cannot be written,
// replaced or moved away under the default policy where the runner
// enforces read-only subpaths, and are named as gaps where it cannot; each
// is writable once Policy.WritableConfigs releases it, and the rest of the
// workspace stays writable (the positive controls).
func TestToolConfigsReadOnlyByDefault(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		files := map[string]string{
			".vscode/tasks.json":      `{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}` + "\n",
			".envrc":                  "export A=1\n",
			".mcp.json":               "{}\n",
			".cargo/config.toml":      "[build]\n",
			".npmrc":                  "fund=false\n",
			".claude/settings.json":   "{}\n",
			".pre-commit-config.yaml": "repos: []\n",
		}
		for name, content := range files {
			write(t, filepath.Join(s.ws, name), content)
		}
		pol := s.policy()
		w := s.wrap(pol, "true")
		if !s.traits().enforcesReadOnly {
			for _, name := range []string{".vscode", ".envrc", ".mcp.json", ".cargo/config.toml", ".npmrc", ".claude", ".pre-commit-config.yaml"} {
				p := filepath.Join(s.ws, name)
				found := false
				for _, g := range w.Gaps {
					found = found || g.Area == "fs" && strings.Contains(g.Reason, p)
				}
				if !found {
					t.Errorf("no gap names the tool config %s: %v", p, w.Gaps)
				}
			}
			if w.Enforcement != sandbox.Partial {
				t.Errorf("enforcement %s with unconfinable tool configs, want partial", w.Enforcement)
			}
			return
		}
		deny := []string{"EROFS", "EACCES", "EPERM", "EBUSY", "EXDEV"}
		for name, content := range files {
			p := filepath.Join(s.ws, name)
			wantDenied(t, "append to "+name, s.tool(pol, "append", p), deny...)
			wantContent(t, p, content)
		}
		wantDenied(t, "plant a task", s.tool(pol, "write", filepath.Join(s.ws, ".vscode/settings.json")), deny...)
		wantAbsent(t, filepath.Join(s.ws, ".vscode/settings.json"))
		wantDenied(t, "move .vscode away", s.tool(pol, "rename", filepath.Join(s.ws, ".vscode"), filepath.Join(s.ws, ".vscode-old")), deny...)
		wantAbsent(t, filepath.Join(s.ws, ".vscode-old"))
		wantDenied(t, "move .envrc away", s.tool(pol, "rename", filepath.Join(s.ws, ".envrc"), filepath.Join(s.ws, "envrc-old")), deny...)
		wantAbsent(t, filepath.Join(s.ws, "envrc-old"))

		// Positive controls: the workspace is writable, and a released
		// config is too.
		wantOK(t, "write beside the configs", s.tool(pol, "write", filepath.Join(s.ws, "main.go")))
		released := pol
		released.WritableConfigs = []string{".vscode", ".envrc"}
		wantOK(t, "write a released .vscode", s.tool(released, "write", filepath.Join(s.ws, ".vscode/settings.json")))
		wantOK(t, "append to a released .envrc", s.tool(released, "append", filepath.Join(s.ws, ".envrc")))
		wantDenied(t, ".npmrc stays protected when others are released", s.tool(released, "append", filepath.Join(s.ws, ".npmrc")), deny...)
	})
}

// TestWritableConfigsMustNameADefault: a release that names no default is
// refused before anything runs, so a typo cannot pass for a release.
func TestWritableConfigsMustNameADefault(t *testing.T) {
	s := newSbx(t, runnersUnderTest()[0])
	pol := s.policy()
	for _, bad := range []string{".vscod", ".git/config", "/abs/.vscode", ".vscode/settings.json", "a\x00b"} {
		pol.WritableConfigs = []string{bad}
		_, err := s.p.Wrap(t.Context(), sandbox.Request{Argv: []string{"true"}, Policy: pol})
		if !errors.Is(err, sandbox.ErrInvalidPolicy) {
			t.Errorf("WritableConfigs %q: %v, want INVALID_POLICY", bad, err)
		}
	}
}
