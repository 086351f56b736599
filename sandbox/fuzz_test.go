package sandbox

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzValidate: validation never panics, and what it accepts is only
// absolute, clean, NUL-free paths and a known mode.
func FuzzValidate(f *testing.F) {
	ws := f.TempDir()
	f.Add("workspace-write", ws, "", ws+"/.ssh", ".git/x", "deny", "/run/agent.sock")
	f.Add("read-only", ws, ws, "relative", "../up", "allow", ws)
	f.Add("", "", "\x00", "/a/../b", "/abs", "maybe", "sock")
	f.Fuzz(func(t *testing.T, mode, workspace, root, deny, ro, network, sock string) {
		req := Request{Argv: []string{"true"}, Policy: Policy{Mode: Mode(mode), Workspace: workspace,
			WritableRoots: []string{root}, DenyRead: []string{deny}, ReadOnlySubpaths: []string{ro}, Network: NetworkMode(network),
			AllowUnixSockets: []string{sock}}}
		r, err := validate(req)
		if err != nil {
			return
		}
		if r.mode != ReadOnly && r.mode != WorkspaceWrite {
			t.Fatalf("accepted mode %q", r.mode)
		}
		for _, p := range append(append(append([]string{r.workspace, r.dir}, r.writableRoots...), r.denyRead...), r.unixSockets...) {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.IndexByte(p, 0) >= 0 {
				t.Fatalf("accepted path %q", p)
			}
		}
		for _, p := range r.writableRoots {
			if saneWritable("writable root", p) != nil {
				t.Fatalf("accepted an insane writable root %q", p)
			}
		}
	})
}
