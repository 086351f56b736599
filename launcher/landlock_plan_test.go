//go:build linux && cgo && sandbox_ctest

package launcher

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// TestCLandlockPlanMatchesGo: landlock-run plans its Landlock rules in C
// (landlock_run_linux.c) in a cgo build and in Go (planFS) without cgo;
// on the same real trees the two plans are the same grants, in the same
// order, with the same classes.
func TestCLandlockPlanMatchesGo(t *testing.T) {
	r, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(r, "home", "u")
	for _, d := range []string{".ssh", ".aws", "proj/.git", "notes", ".config/gcloud", "empty"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".ssh/id_ed25519", ".aws/credentials", ".bashrc", "notes/a", ".config/other"} {
		if err := os.WriteFile(filepath.Join(home, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc", filepath.Join(home, "link")); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(home, "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pty := filepath.Join(r, "pts-stand-in")
	if err := os.WriteFile(pty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deny := []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".aws", "credentials"), filepath.Join(home, ".netrc"),
		filepath.Join(home, ".config", "gcloud"), filepath.Join(home, "link")}
	cases := map[string]struct {
		spec vocab.Spec
		ptys []string
	}{
		"deny-read around a home": {spec: vocab.Spec{Writable: []string{filepath.Join(home, "proj")}, TempDir: filepath.Join(r, "tmp"), DenyRead: deny,
			UnixSockets: []string{sock, filepath.Join(home, "gone.sock")}}, ptys: []string{pty, "/nonexistent/pts"}},
		"network allowed: no socket grants": {spec: vocab.Spec{Writable: []string{home}, DenyRead: deny, UnixSockets: []string{sock}, Network: vocab.NetworkAllow}},
		"nested denials":                    {spec: vocab.Spec{Writable: []string{filepath.Join(home, "notes")}, DenyRead: []string{home, filepath.Join(home, ".ssh"), filepath.Join(r, "home")}}},
		"read-only, nothing denied":         {spec: vocab.Spec{}},
		"the whole tree denied":             {spec: vocab.Spec{Writable: []string{home}, DenyRead: []string{"/"}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			c.spec.Token, c.spec.Argv = tok, []string{"true"}
			// Other tests create and remove entries in / and /tmp while
			// this runs: compare only a Go plan that a C plan before and
			// after it agree on.
			var got, want []grant
			for try := 0; try < 5; try++ {
				before, err := cLandlockPlan(c.spec, c.ptys)
				if err != nil {
					t.Fatal(err)
				}
				want = planFS(c.spec, osLister{}, c.ptys)
				if got, err = cLandlockPlan(c.spec, c.ptys); err != nil {
					t.Fatal(err)
				}
				if reflect.DeepEqual(before, got) {
					break
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("C and Go plans differ:\n C %v\nGo %v", got, want)
			}
			if len(got) == 0 {
				t.Fatal("an empty plan")
			}
		})
	}
}
