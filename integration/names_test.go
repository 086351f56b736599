//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// TestOddPathNames: a workspace, writable root and deny-read path whose
// names hold spaces, a newline, a tab, a leading dash and bytes that are
// not UTF-8 are confined exactly like plain ones: no name is split,
// joined or mistaken for an option on the way to the launcher.
func TestOddPathNames(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		odd := filepath.Join(s.base, "-w ws with space\nnewline\xff\xfe")
		extra := filepath.Join(s.base, "-- extra\troot")
		secretDir := filepath.Join(s.base, "se cret\n-d")
		// A sibling that shares the odd workspace's name up to the newline.
		lookalike := filepath.Join(s.base, "-w ws with space")
		for _, d := range []string{odd, extra, secretDir, lookalike} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		secret := filepath.Join(secretDir, "key")
		write(t, secret, "PRIVATE")
		wantOK(t, "control: the secret reads unconfined", hostTool(t, "read-secret", secret, "PRIVATE"))

		pol := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: odd, WritableRoots: []string{extra}, DenyRead: []string{secretDir}}
		wantOK(t, "write in the odd workspace", s.tool(pol, "write", filepath.Join(odd, "made")))
		wantContent(t, filepath.Join(odd, "made"), "written by the sandbox\n")
		wantOK(t, "write in the odd writable root", s.tool(pol, "write", filepath.Join(extra, "made")))
		wantContent(t, filepath.Join(extra, "made"), "written by the sandbox\n")

		wantDenied(t, "write in the look-alike sibling", s.tool(pol, "write", filepath.Join(lookalike, "escape")))
		wantAbsent(t, filepath.Join(lookalike, "escape"))
		wantDenied(t, "write beside the odd workspace", s.tool(pol, "write", filepath.Join(s.base, "escape")))
		wantAbsent(t, filepath.Join(s.base, "escape"))
		if got := s.tool(pol, "read-secret", secret, "PRIVATE"); got != "hidden" {
			wantDenied(t, "read under the odd deny-read path", got, "EACCES", "ENOENT")
		}
	})
}
