package sandbox

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestValidateRejects(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "f")
	os.WriteFile(file, nil, 0o600)
	home, _ := os.UserHomeDir()
	good := func() Request {
		return Request{Argv: []string{"true"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: ws}}
	}
	cases := map[string]func(*Request){
		"empty argv":              func(r *Request) { r.Argv = nil },
		"empty argv0":             func(r *Request) { r.Argv = []string{""} },
		"nul in argv":             func(r *Request) { r.Argv = []string{"echo", "a\x00b"} },
		"nul in env":              func(r *Request) { r.Env = []string{"A=\x00"} },
		"no mode":                 func(r *Request) { r.Policy.Mode = "" },
		"unknown mode":            func(r *Request) { r.Policy.Mode = "yolo" },
		"unknown network":         func(r *Request) { r.Policy.Network = "some" },
		"no workspace":            func(r *Request) { r.Policy.Workspace = "" },
		"relative workspace":      func(r *Request) { r.Policy.Workspace = "ws" },
		"unclean workspace":       func(r *Request) { r.Policy.Workspace = ws + "/../" + filepath.Base(ws) },
		"missing workspace":       func(r *Request) { r.Policy.Workspace = filepath.Join(ws, "nope") },
		"workspace is a file":     func(r *Request) { r.Policy.Workspace = file },
		"nul in workspace":        func(r *Request) { r.Policy.Workspace = ws + "\x00" },
		"workspace is root":       func(r *Request) { r.Policy.Workspace = "/" },
		"workspace is home":       func(r *Request) { r.Policy.Workspace = home },
		"workspace in proc":       func(r *Request) { r.Policy.Workspace = "/proc/self" },
		"writable root read-only": func(r *Request) { r.Policy.Mode = ReadOnly; r.Policy.WritableRoots = []string{ws} },
		"relative writable root":  func(r *Request) { r.Policy.WritableRoots = []string{"x"} },
		"missing writable root":   func(r *Request) { r.Policy.WritableRoots = []string{filepath.Join(ws, "nope")} },
		"writable root /":         func(r *Request) { r.Policy.WritableRoots = []string{"/"} },
		"writable root /dev":      func(r *Request) { r.Policy.WritableRoots = []string{"/dev"} },
		"relative deny-read":      func(r *Request) { r.Policy.DenyRead = []string{"secret"} },
		"nul in deny-read":        func(r *Request) { r.Policy.DenyRead = []string{"/a\x00"} },
		"escaping read-only sub":  func(r *Request) { r.Policy.ReadOnlySubpaths = []string{"../x"} },
		"unclean read-only sub":   func(r *Request) { r.Policy.ReadOnlySubpaths = []string{"a//b"} },
		"dot read-only sub":       func(r *Request) { r.Policy.ReadOnlySubpaths = []string{"."} },
		"relative UNIX socket":    func(r *Request) { r.Policy.AllowUnixSockets = []string{"agent.sock"} },
		"unclean UNIX socket":     func(r *Request) { r.Policy.AllowUnixSockets = []string{"/run/../agent.sock"} },
		"nul in UNIX socket":      func(r *Request) { r.Policy.AllowUnixSockets = []string{"/run/a\x00"} },
		"UNIX socket is a file":   func(r *Request) { r.Policy.AllowUnixSockets = []string{file} },
		"UNIX socket is a dir":    func(r *Request) { r.Policy.AllowUnixSockets = []string{ws} },
		"UNIX socket denied": func(r *Request) {
			r.Policy.AllowUnixSockets = []string{"/run/x.sock"}
			r.Policy.DenyRead = []string{"/run/x.sock"}
		},
		"domains without proxied":  func(r *Request) { r.Policy.AllowDomains = []string{"example.com"} },
		"deny domains under allow": func(r *Request) { r.Policy.Network = NetworkAllow; r.Policy.DenyDomains = []string{"x.com"} },
		"private without proxied":  func(r *Request) { r.Policy.AllowPrivateDestinations = true },
		"malformed domain": func(r *Request) {
			r.Policy.Network = NetworkProxied
			r.Policy.AllowDomains = []string{"exa mple.com"}
		},
		"wildcard in the middle": func(r *Request) {
			r.Policy.Network = NetworkProxied
			r.Policy.AllowDomains = []string{"a.*.com"}
		},
		"bad domain port": func(r *Request) {
			r.Policy.Network = NetworkProxied
			r.Policy.DenyDomains = []string{"example.com:99999"}
		},
		"nul in domain": func(r *Request) {
			r.Policy.Network = NetworkProxied
			r.Policy.AllowDomains = []string{"example.com\x00"}
		},
		"local port zero":         func(r *Request) { r.Policy.AllowLocalPorts = []int{0} },
		"local port too large":    func(r *Request) { r.Policy.AllowLocalPorts = []int{65536} },
		"local ports under allow": func(r *Request) { r.Policy.Network = NetworkAllow; r.Policy.AllowLocalPorts = []int{5432} },
		"too many local ports": func(r *Request) {
			for p := 1; p <= maxLocalPorts+1; p++ {
				r.Policy.AllowLocalPorts = append(r.Policy.AllowLocalPorts, p)
			}
		},
		"relative dir": func(r *Request) { r.Dir = "sub" },
		"missing dir":  func(r *Request) { r.Dir = filepath.Join(ws, "nope") },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			r := good()
			edit(&r)
			_, err := validate(r)
			if !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("validate = %v, want INVALID_POLICY", err)
			}
			var se *Error
			if !errors.As(err, &se) || se.Code != CodeInvalidPolicy || se.Reason == "" {
				t.Fatalf("error %#v is not a coded *Error", err)
			}
		})
	}
	if _, err := validate(good()); err != nil {
		t.Fatalf("control: validate(good) = %v", err)
	}
}

func TestValidateResolvesPaths(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	extra := filepath.Join(base, "extra")
	os.Mkdir(real, 0o700)
	os.Mkdir(extra, 0o700)
	link := filepath.Join(base, "link")
	os.Symlink(real, link)
	secret := filepath.Join(base, "secret")
	os.Mkdir(secret, 0o700)
	secretLink := filepath.Join(base, "secret-link")
	os.Symlink(secret, secretLink)

	r, err := validate(Request{Argv: []string{"true"}, Policy: Policy{
		Mode: WorkspaceWrite, Workspace: link, WritableRoots: []string{extra, real},
		DenyRead: []string{secretLink}, AllowRead: []string{"/"}, Network: NetworkAllow}})
	if err != nil {
		t.Fatal(err)
	}
	if r.workspace != real || r.dir != real {
		t.Errorf("workspace %q dir %q, want the resolved %q", r.workspace, r.dir, real)
	}
	if want := []string{real, extra}; !reflect.DeepEqual(r.writableRoots, want) {
		t.Errorf("writable roots %q, want %q (workspace first, duplicates dropped)", r.writableRoots, want)
	}
	if want := []string{secretLink, secret}; !reflect.DeepEqual(r.denyRead, want) {
		t.Errorf("deny-read %q, want the link and its target %q", r.denyRead, want)
	}
	if r.network.mode != NetworkAllow {
		t.Error("network allow lost")
	}
}

// TestValidateUnixSockets: a socket is taken as the socket a symlink
// names; a path with nothing there yet is kept as given; duplicates go.
func TestValidateUnixSockets(t *testing.T) {
	ws := t.TempDir()
	sock := filepath.Join(ws, "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(ws, "agent-link")
	os.Symlink(sock, link)
	missing := filepath.Join(ws, "later.sock")
	r, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: ReadOnly, Workspace: ws,
		AllowUnixSockets: []string{link, sock, missing}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{sock, missing}; !reflect.DeepEqual(r.unixSockets, want) {
		t.Errorf("UNIX sockets %q, want %q", r.unixSockets, want)
	}
	if s, _ := grants(osFS{}, r, ""); !reflect.DeepEqual(s.UnixSockets, r.unixSockets) {
		t.Errorf("spec UNIX sockets %q, want %q", s.UnixSockets, r.unixSockets)
	}
	// Where the workspace is writable, a command could have planted the
	// symlink (to Docker's socket): refused, and the real path is fine.
	for _, p := range []string{link, filepath.Join(ws, "dir-link", "agent.sock")} {
		os.Symlink(ws, filepath.Join(ws, "dir-link"))
		_, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: ws,
			AllowUnixSockets: []string{p}}})
		if !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), "symlink inside the writable root") {
			t.Errorf("%s through a symlink in a writable root: %v, want INVALID_POLICY", p, err)
		}
	}
	if _, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: ws,
		AllowUnixSockets: []string{sock}}}); err != nil {
		t.Errorf("control: the real path in a writable root: %v", err)
	}
	// A chain: a link the user made outside every root, pointing at a
	// link inside the workspace (planted: to Docker's socket).
	outside := t.TempDir()
	chain := filepath.Join(outside, "agent.sock")
	os.Symlink(link, chain)
	if _, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: ws,
		AllowUnixSockets: []string{chain}}}); !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), "symlink inside the writable root") {
		t.Errorf("a link chain through the workspace: %v, want INVALID_POLICY", err)
	}
	// Control: a chain of links outside every root, relative and
	// absolute, ends at the socket.
	hop := filepath.Join(outside, "hop")
	os.Symlink(sock, hop)
	rel := filepath.Join(outside, "rel.sock")
	os.Symlink("hop", rel)
	if _, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: outside,
		AllowUnixSockets: []string{rel}}}); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("the same chain where its links are writable: %v, want INVALID_POLICY", err)
	}
	r, err = validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: ReadOnly, Workspace: outside, AllowUnixSockets: []string{rel}}})
	if err != nil || len(r.unixSockets) != 1 || r.unixSockets[0] != sock {
		t.Errorf("control: a chain outside every root: %q, %v; want %s", r.unixSockets, err, sock)
	}
}

// TestWritableRootThroughAPlantedSymlink: an extra writable root reached
// through a symlink inside another writable root (an earlier command could
// have made ws/cache a link to ~/.config) is refused; the same link
// outside every writable root is followed.
func TestWritableRootThroughAPlantedSymlink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "config")
	os.Mkdir(ws, 0o755)
	os.Mkdir(outside, 0o755)
	os.Symlink(outside, filepath.Join(ws, "cache"))
	os.Symlink(outside, filepath.Join(base, "cache-link"))
	root := filepath.Join(ws, "cache")
	_, err = validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: ws, WritableRoots: []string{root}}})
	if !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), "symlink inside the writable root") {
		t.Errorf("root %s through a symlink in the workspace: %v, want INVALID_POLICY", root, err)
	}
	r, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: ws, WritableRoots: []string{filepath.Join(base, "cache-link")}}})
	if err != nil || !reflect.DeepEqual(r.writableRoots, []string{ws, outside}) {
		t.Errorf("control: a link outside every root: %v, %v", r, err)
	}
}

func TestReadOnlyModeHasNoWritableRoots(t *testing.T) {
	ws := t.TempDir()
	r, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: ReadOnly, Workspace: ws}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := grants(osFS{}, r, "")
	if len(s.Writable) != 0 || len(s.ReadOnly) != 0 {
		t.Fatalf("read-only spec %#v", s)
	}
}

func TestErrorIs(t *testing.T) {
	under := errors.New("boom")
	e := unavailable("landlock", "nope", under)
	if !errors.Is(e, ErrUnavailable) || errors.Is(e, ErrInvalidPolicy) || !errors.Is(e, under) {
		t.Fatalf("errors.Is wrong for %v", e)
	}
	if got, want := e.Error(), "SANDBOX_UNAVAILABLE: landlock: nope: boom"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestDefaultDenyRead(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	ws := filepath.Join(home, "proj")
	os.Mkdir(ws, 0o755)
	docker := filepath.Join(home, ".docker")
	os.MkdirAll(filepath.Join(docker, "work"), 0o755)
	tests := []struct {
		name      string
		pol       Policy
		want, not []string
	}{
		{"defaults", Policy{Mode: WorkspaceWrite, Workspace: ws},
			[]string{".ssh", ".aws", ".npmrc", ".config/gh", ".docker", ".codex/auth.json"}, nil},
		{"one released", Policy{Mode: WorkspaceWrite, Workspace: ws, AllowRead: []string{filepath.Join(home, ".ssh")}},
			[]string{".aws", ".npmrc"}, []string{".ssh"}},
		{"a parent released", Policy{Mode: WorkspaceWrite, Workspace: ws, AllowRead: []string{filepath.Join(home, ".config")}},
			[]string{".ssh"}, []string{".config/gh", ".config/gcloud"}},
		{"all released", Policy{Mode: WorkspaceWrite, Workspace: ws, AllowRead: []string{home}},
			nil, []string{".ssh", ".aws", ".npmrc"}},
		{"working inside one", Policy{Mode: WorkspaceWrite, Workspace: filepath.Join(docker, "work")},
			[]string{".ssh"}, []string{".docker"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := validate(Request{Argv: []string{"true"}, Policy: tt.pol})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !slices.Contains(r.denyRead, filepath.Join(home, w)) {
					t.Errorf("%s not denied: %q", w, r.denyRead)
				}
			}
			for _, n := range tt.not {
				if slices.Contains(r.denyRead, filepath.Join(home, n)) {
					t.Errorf("%s denied: %q", n, r.denyRead)
				}
			}
		})
	}
	if _, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: ws, AllowRead: []string{"rel"}}}); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("relative allow-read: %v, want INVALID_POLICY", err)
	}
}

// TestDeniedLinkTargets: a link inside a denied directory denies its
// target when that is in the home directory, but never the home directory
// itself, anything holding the workspace, or what lies outside the home.
func TestDeniedLinkTargets(t *testing.T) {
	home, _ := filepath.EvalSymlinks(t.TempDir())
	t.Setenv("HOME", home)
	ws := filepath.Join(home, "proj")
	for _, d := range []string{".kube", "clusters", "proj"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	os.WriteFile(filepath.Join(home, "clusters", "prod.yaml"), nil, 0o600)
	links := map[string]string{
		"config": filepath.Join(home, "clusters", "prod.yaml"),
		"home":   home,
		"proj":   ws,
		"up":     filepath.Join(home, "clusters", ".."),
		"etc":    "/etc",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(home, ".kube", name)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: WorkspaceWrite, Workspace: ws}})
	if err != nil {
		t.Fatal(err)
	}
	denied := map[string]bool{}
	for _, d := range r.denyRead {
		denied[d] = true
	}
	if !denied[filepath.Join(home, "clusters", "prod.yaml")] {
		t.Errorf("the link's target in the home directory is not denied: %q", r.denyRead)
	}
	for _, p := range []string{home, ws, "/etc"} {
		if denied[p] {
			t.Errorf("%s is denied: %q", p, r.denyRead)
		}
	}
}
