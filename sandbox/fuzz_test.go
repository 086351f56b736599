package sandbox

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzValidate: validation never panics, and what it accepts is only
// absolute, clean, NUL-free paths, a known mode, and environment names
// without '=' or NUL.
func FuzzValidate(f *testing.F) {
	ws := f.TempDir()
	f.Add("workspace-write", ws, "", ws+"/.ssh", ".git/x", "deny", "/run/agent.sock", "GITHUB_TOKEN", "A=B")
	f.Add("read-only", ws, ws, "relative", "../up", "allow", ws, "AWS_[", "")
	f.Add("", "", "\x00", "/a/../b", "/abs", "maybe", "sock", "A\x00", "TMPDIR")
	f.Fuzz(func(t *testing.T, mode, workspace, root, deny, ro, network, sock, keep, set string) {
		req := Request{Argv: []string{"true"}, Policy: Policy{Mode: Mode(mode), Workspace: workspace,
			WritableRoots: []string{root}, DenyRead: []string{deny}, ReadOnlySubpaths: []string{ro}, Network: NetworkMode(network),
			AllowUnixSockets: []string{sock}, Env: EnvPolicy{Keep: []string{keep}, Unset: []string{keep}, Set: map[string]string{set: keep}}}}
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
		for _, n := range []string{keep, set} {
			if n == "" || strings.ContainsAny(n, "=\x00") {
				t.Fatalf("accepted env name %q", n)
			}
		}
		for _, kv := range r.env {
			if strings.IndexByte(kv, 0) >= 0 {
				t.Fatalf("env entry with a NUL: %q", kv)
			}
		}
		for _, p := range r.writableRoots {
			if saneWritable("writable root", p) != nil {
				t.Fatalf("accepted an insane writable root %q", p)
			}
		}
	})
}
