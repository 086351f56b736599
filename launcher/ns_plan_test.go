//go:build linux && cgo && sandbox_ctest

package launcher

import (
	"cmp"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// The plan of ns-run's stage 2 (ns_plan_linux.c), run on real trees: which
// paths become writable and read-only binds, pins and deny-read mounts,
// which names the guard refuses, which deny-read paths Landlock carves,
// and what the planner refuses. Nothing is mounted.

// planTree makes the entries under root: "d/" a directory, "f" a file,
// "l -> t" a symlink to t, "h == f" a hard link to f, "s=" a listening
// UNIX socket; "$R" in a target is root.
func planTree(t *testing.T, root string, entries []string) {
	t.Helper()
	for _, e := range entries {
		name, _, _ := strings.Cut(strings.TrimSuffix(e, "="), " ")
		err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755)
		switch {
		case err != nil:
		case strings.Contains(e, " -> "):
			name, target, _ := strings.Cut(e, " -> ")
			err = os.Symlink(strings.ReplaceAll(target, "$R", root), filepath.Join(root, name))
		case strings.Contains(e, " == "):
			name, target, _ := strings.Cut(e, " == ")
			err = os.Link(filepath.Join(root, target), filepath.Join(root, name))
		case strings.HasSuffix(e, "="):
			var l net.Listener
			l, err = net.Listen("unix", filepath.Join(root, strings.TrimSuffix(e, "=")))
			if err == nil {
				t.Cleanup(func() { l.Close() })
			}
		case strings.HasSuffix(e, "/"):
			err = os.MkdirAll(filepath.Join(root, e), 0o755)
		default:
			err = os.WriteFile(filepath.Join(root, e), []byte("x"), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// renderPlan writes the plan with root as "$R": a layer as "kind path",
// "/" after a directory, sorted in mount order (depth, then kind; qsort
// leaves equal keys in no set order); a guarded name as "parent/name for
// path", "bound " before a name under a mount; a carved path as itself. It checks that the layers come in mount
// order, and that every read-only layer and pin names the object there.
func renderPlan(t *testing.T, root string, p cPlan) (layers, guarded, carved []string) {
	t.Helper()
	rel := func(path string) string { return strings.Replace(path, root, "$R", 1) }
	depth := func(path string) int { return strings.Count(path, "/") }
	order := []string{"writable", "pin", "ro", "deny", "socket"}
	key := func(l cLayer) []int { return []int{depth(l.Path), slices.Index(order, l.Kind)} }
	for i, l := range p.Layers {
		if i > 0 && slices.Compare(key(p.Layers[i-1]), key(l)) > 0 {
			t.Errorf("layer %s %s comes after %s %s: not in mount order", l.Kind, l.Path, p.Layers[i-1].Kind, p.Layers[i-1].Path)
		}
		if l.Kind == "ro" || l.Kind == "pin" {
			var st syscall.Stat_t
			if err := syscall.Lstat(l.Path, &st); err != nil || st.Dev != l.Dev || st.Ino != l.Ino {
				t.Errorf("%s %s: planned on (%d, %d), the tree has (%d, %d) (%v)", l.Kind, l.Path, l.Dev, l.Ino, st.Dev, st.Ino, err)
			}
		}
	}
	sorted := slices.Clone(p.Layers)
	slices.SortFunc(sorted, func(a, b cLayer) int {
		return cmp.Or(slices.Compare(key(a), key(b)), strings.Compare(a.Path, b.Path))
	})
	for _, l := range sorted {
		s := l.Kind + " " + rel(l.Path)
		if l.Dir {
			s += "/"
		}
		layers = append(layers, s)
	}
	// The guarded names' parents, by identity: every directory of the tree.
	dirs := map[[2]uint64]string{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		var st syscall.Stat_t
		if err == nil && d.IsDir() && syscall.Lstat(path, &st) == nil {
			dirs[[2]uint64{st.Dev, st.Ino}] = path
		}
		return nil
	})
	for _, g := range p.Guarded {
		parent, ok := dirs[[2]uint64{g.Dev, g.Ino}]
		if !ok {
			parent = "(a directory outside the tree)"
		}
		bound := ""
		if g.Bound {
			bound = "bound "
		}
		guarded = append(guarded, bound+rel(parent)+"/"+g.Name+" for "+rel(g.For))
	}
	for _, c := range p.Carved {
		carved = append(carved, rel(c))
	}
	return layers, guarded, carved
}

func TestNsPlan(t *testing.T) {
	// A workspace $R/ws with a temp dir $R/tmp, as the provider wraps it.
	ws := func(s vocab.Spec) vocab.Spec {
		if s.Writable == nil {
			s.Writable = []string{"$R/ws"}
		}
		s.TempDir = "$R/tmp"
		return s
	}
	cases := []struct {
		name                  string
		tree                  []string
		unsearchable          []string // directories of tree made mode 0, the plan made without DAC capabilities
		spec                  vocab.Spec
		layers, guard, carved []string
		err                   string // the refusal, with "$R" for root
	}{{
		name: "a repository: hooks and config read-only and bound, absent names guarded",
		tree: []string{"ws/.git/hooks/", "ws/.git/config", "ws/src/main.go", "tmp/"},
		spec: ws(vocab.Spec{
			ReadOnly: []string{"$R/ws/.git/hooks", "$R/ws/.git/config"},
			Guarded:  []string{"$R/ws/.git/commondir", "$R/ws/.envrc", "$R/ws/.cargo/config.toml"},
		}),
		layers: []string{"writable $R/tmp/", "writable $R/ws/", "pin $R/ws/.git/", "ro $R/ws/.git/config", "ro $R/ws/.git/hooks/"},
		guard: []string{
			"$R/ws/.git/commondir for $R/ws/.git/commondir",
			"$R/ws/.envrc for $R/ws/.envrc",
			"$R/ws/.cargo for $R/ws/.cargo/config.toml",
			"bound $R/ws/.git/hooks for $R/ws/.git/hooks",
			"bound $R/ws/.git/config for $R/ws/.git/config",
		},
	}, {
		name: "a guarded name that appeared since the wrap is bound read-only",
		tree: []string{"ws/.vscode/settings.json", "tmp/"},
		spec: ws(vocab.Spec{Guarded: []string{"$R/ws/.vscode/settings.json"}}),
		layers: []string{"writable $R/tmp/", "writable $R/ws/", "pin $R/ws/.vscode/",
			"ro $R/ws/.vscode/settings.json"},
		guard: []string{"bound $R/ws/.vscode/settings.json for $R/ws/.vscode/settings.json"},
	}, {
		name:   "a missing read-only subpath is guarded when names are",
		tree:   []string{"ws/", "tmp/"},
		spec:   ws(vocab.Spec{ReadOnly: []string{"$R/ws/.git/hooks"}, Guarded: []string{"$R/ws/.envrc"}}),
		layers: []string{"writable $R/tmp/", "writable $R/ws/"},
		guard:  []string{"$R/ws/.git for $R/ws/.git/hooks", "$R/ws/.envrc for $R/ws/.envrc"},
	}, {
		name:   "a missing read-only subpath is skipped when no name is",
		tree:   []string{"ws/", "tmp/"},
		spec:   ws(vocab.Spec{ReadOnly: []string{"$R/ws/.git/hooks"}}),
		layers: []string{"writable $R/tmp/", "writable $R/ws/"},
	}, {
		name: "deny-read paths: mounted when there, carved outside the writable roots",
		tree: []string{"home/.ssh/id_ed25519", "home/.netrc", "home/notes", "ws/.env", "tmp/"},
		spec: ws(vocab.Spec{DenyRead: []string{
			"$R/home/.ssh", "$R/home/.ssh/id_ed25519", "$R/home/.netrc", "$R/home/.aws", "$R/ws/.env", "$R/ws/.env.local",
		}}),
		layers: []string{"writable $R/tmp/", "writable $R/ws/", "deny $R/home/.netrc", "deny $R/home/.ssh/", "deny $R/ws/.env",
			"deny $R/home/.ssh/id_ed25519"},
		guard:  []string{"bound $R/ws/.env for $R/ws/.env"},
		carved: []string{"$R/home/.ssh", "$R/home/.netrc", "$R/home/.aws"},
	}, {
		name:   "a deny-read path holding the workspace is mounted, not carved",
		tree:   []string{"home/ws/", "tmp/"},
		spec:   ws(vocab.Spec{Writable: []string{"$R/home/ws"}, DenyRead: []string{"$R/home"}}),
		layers: []string{"writable $R/tmp/", "deny $R/home/", "writable $R/home/ws/"},
	}, {
		name:   "a deny-read symlink is denied as its target",
		tree:   []string{"home/.secrets/", "home/link -> $R/home/.secrets", "ws/", "tmp/"},
		spec:   ws(vocab.Spec{DenyRead: []string{"$R/home/link"}}),
		layers: []string{"writable $R/tmp/", "writable $R/ws/", "deny $R/home/.secrets/"},
		carved: []string{"$R/home/link"},
	}, {
		name:   "a read-only subpath inside a deny-read path is not bound",
		tree:   []string{"ws/.git/hooks/", "tmp/"},
		spec:   ws(vocab.Spec{ReadOnly: []string{"$R/ws/.git/hooks"}, DenyRead: []string{"$R/ws/.git"}}),
		layers: []string{"writable $R/tmp/", "writable $R/ws/", "deny $R/ws/.git/"},
		guard:  []string{"bound $R/ws/.git for $R/ws/.git"},
	}, {
		name:   "a read-only subpath that is a symlink protects its target",
		tree:   []string{"ws/conf/real.toml", "ws/.envrc -> $R/ws/conf/real.toml", "tmp/"},
		spec:   ws(vocab.Spec{ReadOnly: []string{"$R/ws/.envrc"}}),
		layers: []string{"writable $R/tmp/", "writable $R/ws/", "pin $R/ws/conf/", "ro $R/ws/conf/real.toml"},
		guard:  []string{"bound $R/ws/conf/real.toml for $R/ws/conf/real.toml"},
	}, {
		name:   "a read-only subpath outside the writable roots needs no bind",
		tree:   []string{"etc/tool.conf", "ws/", "tmp/"},
		spec:   ws(vocab.Spec{ReadOnly: []string{"$R/etc/tool.conf"}}),
		layers: []string{"writable $R/tmp/", "writable $R/ws/"},
	}, {
		name:   "a guarded name behind a symlink is not guarded",
		tree:   []string{"elsewhere/", "ws/.cargo -> $R/elsewhere", "tmp/"},
		spec:   ws(vocab.Spec{Guarded: []string{"$R/ws/.cargo/config.toml"}}),
		layers: []string{"writable $R/tmp/", "writable $R/ws/"},
	}, {
		name:   "only a socket is bound",
		tree:   []string{"run/agent.sock=", "run/file.sock", "ws/", "tmp/"},
		spec:   ws(vocab.Spec{UnixSockets: []string{"$R/run/agent.sock", "$R/run/file.sock", "$R/run/gone.sock"}}),
		layers: []string{"writable $R/tmp/", "writable $R/ws/", "socket $R/run/agent.sock"},
	}, {
		name: "a writable root through a symlink is refused",
		tree: []string{"real/", "ws -> $R/real", "tmp/"},
		spec: ws(vocab.Spec{}),
		err:  "plan the mounts: writable root $R/ws: a component is a symlink now, it was not at wrap time",
	}, {
		name: "a read-only subpath under a swapped directory is refused",
		tree: []string{"decoy/hooks/", "ws/.git -> $R/decoy", "tmp/"},
		spec: ws(vocab.Spec{ReadOnly: []string{"$R/ws/.git/hooks"}}),
		err:  "plan the mounts: read-only subpath $R/ws/.git/hooks: a component is a symlink now, it was not at wrap time",
	}, {
		name: "-full refuses a read-only subpath that is a symlink",
		tree: []string{"ws/real", "ws/.envrc -> $R/ws/real", "tmp/"},
		spec: ws(vocab.Spec{ReadOnly: []string{"$R/ws/.envrc"}, RequireFull: true}),
		err:  "full enforcement required, but: read-only subpath $R/ws/.envrc is a symlink",
	}, {
		name: "-full refuses a missing read-only subpath no guard covers",
		tree: []string{"ws/", "tmp/"},
		spec: ws(vocab.Spec{ReadOnly: []string{"$R/ws/.git/hooks"}, RequireFull: true}),
		err:  "full enforcement required, but: read-only subpath $R/ws/.git/hooks is missing",
	}, {
		name: "-full refuses a read-only file with another hard link",
		tree: []string{"ws/.git/config", "ws/copy == ws/.git/config", "tmp/"},
		spec: ws(vocab.Spec{ReadOnly: []string{"$R/ws/.git/config"}, RequireFull: true}),
		err:  "full enforcement required, but: read-only subpath $R/ws/.git/config has 2 hard links",
	}, {
		name: "-full refuses a missing deny-read path inside a writable root",
		tree: []string{"ws/", "tmp/"},
		spec: ws(vocab.Spec{DenyRead: []string{"$R/ws/.env"}, RequireFull: true}),
		err:  "full enforcement required, but: deny-read path $R/ws/.env does not exist inside a writable root",
	}, {
		name: "-full refuses a guarded name behind a symlink",
		tree: []string{"elsewhere/", "ws/.cargo -> $R/elsewhere", "tmp/"},
		spec: ws(vocab.Spec{Guarded: []string{"$R/ws/.cargo/config.toml"}, RequireFull: true}),
		err:  "full enforcement required, but: guarded name $R/ws/.cargo/config.toml lies behind a symlink",
	}, {
		// A HOME of another user: its deny-read paths cannot be looked
		// up, and the command, with the same rights on a read-only tree,
		// cannot reach them either. No mount, no refusal; carved all the
		// same.
		name:         "a deny-read path below a directory that cannot be searched is skipped, and carved",
		tree:         []string{"home/.ssh/id_ed25519", "elsewhere/.netrc", "ws/", "tmp/"},
		unsearchable: []string{"home"},
		spec:         ws(vocab.Spec{DenyRead: []string{"$R/home/.ssh", "$R/home/.aws", "$R/elsewhere/.netrc"}}),
		layers:       []string{"writable $R/tmp/", "writable $R/ws/", "deny $R/elsewhere/.netrc"},
		carved:       []string{"$R/home/.ssh", "$R/home/.aws", "$R/elsewhere/.netrc"},
	}, {
		// Inside a writable root the command could change the mode.
		name:         "a deny-read path that cannot be looked up inside a writable root is refused",
		tree:         []string{"ws/locked/.env", "tmp/"},
		unsearchable: []string{"ws/locked"},
		spec:         ws(vocab.Spec{DenyRead: []string{"$R/ws/locked/.env"}}),
		err:          "plan the mounts: resolve deny-read path $R/ws/locked/.env: Permission denied",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			planTree(t, root, c.tree)
			spec := c.spec
			spec.Token, spec.Argv = tok, []string{"true"}
			for _, l := range []*[]string{&spec.Writable, &spec.ReadOnly, &spec.Guarded, &spec.DenyRead, &spec.UnixSockets} {
				*l = slices.Clone(*l)
				for i := range *l {
					(*l)[i] = strings.ReplaceAll((*l)[i], "$R", root)
				}
			}
			spec.TempDir = strings.ReplaceAll(spec.TempDir, "$R", root)
			plan, err := planWithout(t, root, c.unsearchable, spec)
			if c.err != "" {
				if want := strings.ReplaceAll(c.err, "$R", root); err == nil || err.Error() != want {
					t.Fatalf("got %v, want the refusal %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			layers, guarded, carved := renderPlan(t, root, plan)
			if !slices.Equal(layers, c.layers) {
				t.Errorf("layers:\n got %q\nwant %q", layers, c.layers)
			}
			if !slices.Equal(guarded, c.guard) {
				t.Errorf("guarded:\n got %q\nwant %q", guarded, c.guard)
			}
			if !slices.Equal(carved, c.carved) {
				t.Errorf("carved:\n got %q\nwant %q", carved, c.carved)
			}
		})
	}
}

// planWithout plans spec with the directories unsearchable (relative to
// root) made mode 0 for the plan's time; root plans with the file system
// uid of nobody then, which drops its DAC capabilities, on a thread of its
// own that ends with it.
func planWithout(t *testing.T, root string, unsearchable []string, spec vocab.Spec) (cPlan, error) {
	t.Helper()
	if len(unsearchable) == 0 {
		return cPlanFor(spec)
	}
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil { // t.TempDir's are 0700
			t.Fatal(err)
		}
	}
	for _, d := range unsearchable {
		if err := os.Chmod(filepath.Join(root, d), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(filepath.Join(root, d), 0o755) })
	}
	var plan cPlan
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if os.Geteuid() == 0 {
			unix.Setfsuid(65534)
		}
		plan, err = cPlanFor(spec)
	}()
	<-done
	return plan, err
}
