package seatbelt

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

const (
	ws      = "/Users/me/ws"
	tmpDir  = "/var/folders/zz/xy/T/sbx-1"
	tmpReal = "/private/var/folders/zz/xy/T/sbx-1"
)

// gitSurface returns the expanded default read-only subpaths of root.
func gitSurface(root string) []string {
	return []string{root + "/.git/hooks", root + "/.git/config", root + "/.git/config.worktree"}
}

// profileCases are the golden table: one per shape of policy.
var profileCases = []struct {
	name string
	spec Spec
	// gitPairs is how many (writable root, parameter) pairs checkGitExcluded
	// must find, a parameter being a spelling of a root's .git/hooks or
	// .git/config.
	gitPairs int
}{
	{"workspace_write", Spec{
		WritableRoots:    []string{ws},
		ReadOnlySubpaths: gitSurface(ws),
		DenyRead:         []string{"/Users/me/.ssh"},
		TempDir:          tmpDir,
	}, 2},
	{"read_only", Spec{
		DenyRead: []string{"/Users/me/.ssh", "/Users/me/.aws"},
		TempDir:  tmpDir,
	}, 0},
	{"network_two_roots", Spec{
		WritableRoots:    []string{ws, "/tmp/cache"},
		ReadOnlySubpaths: gitSurface(ws)[:2],
		TempDir:          tmpDir,
		AllowNetwork:     true,
	}, 2},
	{"symlinked_workspace_and_hooks", Spec{
		WritableRoots:    []string{"/Users/me/link-ws", "/Users/me/ws2"},
		ReadOnlySubpaths: append(gitSurface("/Users/me/link-ws"), gitSurface("/Users/me/ws2")...),
		TempDir:          tmpDir,
	}, 4},
	{"proxied", Spec{
		WritableRoots:    []string{ws},
		ReadOnlySubpaths: gitSurface(ws),
		TempDir:          tmpDir,
		LoopbackPorts:    []int{49152, 5432},
		TrustServices:    true,
	}, 2},
	{"nothing_writable", Spec{}, 0},
}

func buildCase(t *testing.T, spec Spec) Profile {
	t.Helper()
	p, err := Build(macFS(), spec)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return p
}

// goldenText is what a golden file holds: the profile, then its -D
// parameters with quoted values.
func goldenText(p Profile) string {
	var b strings.Builder
	b.WriteString(p.Text)
	b.WriteString(";;;; -D parameters\n")
	for _, prm := range p.Params {
		b.WriteString(";;;; " + prm.Name + "=" + strconv.Quote(prm.Value) + "\n")
	}
	return b.String()
}

func TestProfileGolden(t *testing.T) {
	for _, c := range profileCases {
		t.Run(c.name, func(t *testing.T) {
			got := goldenText(buildCase(t, c.spec))
			path := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./seatbelt/ -run Golden -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("profile differs from %s (rerun with -update after review):\n%s", path, firstDiff(got, string(want)))
			}
		})
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return "(no line differs)"
}

func TestProfileStructure(t *testing.T) {
	for _, c := range profileCases {
		t.Run(c.name, func(t *testing.T) {
			p := buildCase(t, c.spec)
			for _, prob := range checkProfile(p) {
				t.Error(prob)
			}
			for _, prob := range checkGitExcluded(p, c.gitPairs) {
				t.Error(prob)
			}
		})
	}
}

// TestCheckerCatchesBrokenProfiles feeds the structure checks profiles
// broken on purpose: each must be reported, or the checks prove nothing.
func TestCheckerCatchesBrokenProfiles(t *testing.T) {
	good := buildCase(t, profileCases[0].spec)
	if probs := append(checkProfile(good), checkGitExcluded(good, 2)...); len(probs) != 0 {
		t.Fatalf("good profile has problems: %q", probs)
	}
	breakText := func(old, new string) Profile {
		if !strings.Contains(good.Text, old) {
			t.Fatalf("profile lacks %q", old)
		}
		return Profile{Text: strings.Replace(good.Text, old, new, 1), Params: good.Params}
	}
	cases := []struct {
		name string
		p    Profile
		git  bool
	}{
		{"unbalanced", breakText("(allow process-fork)", "(allow process-fork"), false},
		{"allow default first", breakText("(deny default)", "(allow default)"), false},
		{"path spliced into text", breakText(`(literal (param "DEV_NULL"))`, `(literal "/dev/null")`), false},
		{"param never passed", breakText(`(literal (param "DEV_NULL"))`, `(literal (param "DEV_NULL_2"))`), false},
		{"param passed but unused", Profile{Text: good.Text, Params: append(append([]Param{}, good.Params...), Param{"EXTRA", "/x"})}, false},
		{"regex not fixed", breakText(`(regex #"^/dev/ttys[0-9]+$")`, `(regex #"^/Users/.*$")`), false},
		{"hooks not excluded from the workspace", breakText(`(require-not (subpath (param "READ_ONLY_0")))`, `(require-not (subpath (param "DEV_NULL")))`), true},
		{"config not denied at the end", breakText("\n  (literal (param \"READ_ONLY_1\"))", "\n  (literal (param \"DEV_ZERO\"))"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probs := checkProfile(c.p)
			if c.git {
				probs = checkGitExcluded(c.p, 2)
			}
			if len(probs) == 0 {
				t.Errorf("broken profile passed the checks")
			}
		})
	}
}

// TestProfileDecisions evaluates the generated rules for concrete file
// operations, under both models of rule precedence.
func TestProfileDecisions(t *testing.T) {
	spec := profileCases[0].spec
	spec.DenyRead = append(spec.DenyRead, ws+"/.env")
	ev, err := newEvaluator(buildCase(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		op, path string
		allow    bool
	}{
		{"file-write-create", ws + "/src/new.go", true},
		{"file-write-data", ws + "/src/main.go", true},
		{"file-write-unlink", ws + "/src/main.go", true},
		{"file-write-create", ws + "/.git/index.lock", true},
		{"file-write-data", ws + "/.git/objects/ab/cdef", true},
		{"file-write-create", ws + "/.git/hooks/pre-commit", false},
		{"file-write-unlink", ws + "/.git/hooks", false},
		{"file-write-create", ws + "/.git/hooks", false},
		{"file-write-data", ws + "/.git/config", false},
		{"file-write-create", ws + "/.git/config.worktree", false},
		{"file-write-unlink", ws + "/.git", false}, // mv .git away and back
		{"file-write-unlink", ws, false},           // mv the workspace into the temp dir and back
		{"file-write-unlink", ws + "/.env", false}, // mv the secret to a readable name
		{"file-write-create", "/Users/me/other", false},
		{"file-write-create", "/Users/me/wsx/file", false}, // a sibling sharing the prefix
		{"file-write-create", "/private/tmp/x", false},
		{"file-write-create", tmpReal + "/x", true},
		{"file-write-create", tmpDir + "/x", false}, // the /var spelling is not what the kernel checks
		{"file-read-data", "/Users/me/.ssh/id_ed25519", false},
		{"file-read-metadata", "/Users/me/.ssh", false},
		{"file-read-data", ws + "/.env", false},
		{"file-read-data", ws + "/.envrc", true},
		{"file-read-data", "/Users/me/.sshconfig", true},
		{"file-read-data", ws + "/.git/hooks/pre-commit", true},
		{"file-read-data", "/etc/passwd", true},
		{"file-write-data", "/dev/null", true},
		{"file-write-data", "/dev/fd/1", true},
		{"file-write-data", "/dev/disk0", false},
		{"file-ioctl", "/dev/ttys003", true},
		{"file-write-data", "/dev/ttys003", false}, // only with the pty extension, which the evaluator never grants
		{"file-write-data", "/dev/ttys003x", false},
	}
	for _, c := range cases {
		last, denyWins := ev.decide(c.op, c.path)
		if last != c.allow || denyWins != c.allow {
			t.Errorf("%s %s: last-match=%v deny-wins=%v, want %v", c.op, c.path, last, denyWins, c.allow)
		}
	}
}

func TestProfileReadOnlyMode(t *testing.T) {
	ev, err := newEvaluator(buildCase(t, profileCases[1].spec))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op, path string
		allow    bool
	}{
		{"file-write-create", ws + "/x", false},
		{"file-write-create", tmpReal + "/x", true},
		{"file-read-data", "/Users/me/.aws/credentials", false},
		{"file-read-data", ws + "/x", true},
	} {
		last, denyWins := ev.decide(c.op, c.path)
		if last != c.allow || denyWins != c.allow {
			t.Errorf("%s %s: last-match=%v deny-wins=%v, want %v", c.op, c.path, last, denyWins, c.allow)
		}
	}
}

func TestProfileSymlinkedProtection(t *testing.T) {
	p := buildCase(t, profileCases[3].spec)
	ev, err := newEvaluator(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op, path string
		allow    bool
	}{
		{"file-write-create", ws + "/src/x", true}, // the root is its symlink's target
		{"file-write-create", ws + "/.git/hooks/post-checkout", false},
		{"file-write-unlink", "/Users/me/ws2/.git/hooks", false},             // the hooks symlink itself
		{"file-write-create", "/Users/me/ws2/.githooks/pre-push", false},     // what it reaches
		{"file-write-create", "/Users/me/ws2/.githooks-other/x", true},       // not a prefix match
		{"file-write-unlink", "/Users/me/link-ws", false},                    // a symlink on the way
		{"file-write-create", "/Users/me/ws2/.git/config.worktree/x", false}, // not there yet: still protected
	} {
		last, denyWins := ev.decide(c.op, c.path)
		if last != c.allow || denyWins != c.allow {
			t.Errorf("%s %s: last-match=%v deny-wins=%v, want %v", c.op, c.path, last, denyWins, c.allow)
		}
	}
}

func TestProfileNetwork(t *testing.T) {
	closed := buildCase(t, profileCases[0].spec).Text
	open := buildCase(t, profileCases[2].spec).Text
	for _, s := range []string{"(allow network-outbound (remote ip", "(allow network-bind (local ip", "(allow system-socket)\n", "MDNS_SOCKET"} {
		if strings.Contains(closed, s) {
			t.Errorf("network denied, but the profile has %q", s)
		}
		if !strings.Contains(open, s) {
			t.Errorf("network allowed, but the profile lacks %q", s)
		}
	}
	forms, err := parseSBPL(closed)
	if err != nil {
		t.Fatal(err)
	}
	// With the network closed, every network rule is about UNIX sockets in
	// the temporary directory.
	for _, f := range forms {
		if f.head() != "allow" || !strings.HasPrefix(f.list[1].atom, "network") {
			continue
		}
		s := f.String()
		if !strings.Contains(s, "unix-socket (subpath (param \"TEMP_DIR\"))") {
			t.Errorf("network denied, but %s", s)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		spec Spec
	}{
		{"relative root", Spec{WritableRoots: []string{"ws"}}},
		{"empty read-only subpath", Spec{WritableRoots: []string{ws}, ReadOnlySubpaths: []string{""}}},
		{"NUL in deny-read", Spec{DenyRead: []string{"/Users/me/.ssh\x00x"}}},
		{"relative temp dir", Spec{TempDir: "tmp"}},
	} {
		_, err := Build(macFS(), c.spec)
		if !errors.Is(err, ErrInvalidPath) {
			t.Errorf("%s: err = %v, want ErrInvalidPath", c.name, err)
		}
	}
	f := macFS()
	f.lstatErr["/Users/me/.ssh"] = os.ErrPermission
	if _, err := Build(f, Spec{DenyRead: []string{"/Users/me/.ssh"}}); !errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), "deny-read path") {
		t.Errorf("unreadable path: err = %v, want a wrapped permission error naming the field", err)
	}
}

func TestArgs(t *testing.T) {
	p := buildCase(t, profileCases[0].spec)
	args, err := p.Args([]string{"-rf-looking-command", "a b", ""})
	if err != nil {
		t.Fatal(err)
	}
	if args[0] != "sandbox-exec" || args[1] != "-p" || args[2] != p.Text {
		t.Fatalf("args start %q, want sandbox-exec -p PROFILE", args[:2])
	}
	i := 3
	for _, prm := range p.Params {
		if args[i] != "-D" || args[i+1] != prm.Name+"="+prm.Value {
			t.Fatalf("args[%d:%d] = %q, want -D %s=%s", i, i+2, args[i:i+2], prm.Name, prm.Value)
		}
		i += 2
	}
	if args[i] != "--" {
		t.Fatalf("args[%d] = %q, want --", i, args[i])
	}
	if got := strings.Join(args[i+1:], "|"); got != "-rf-looking-command|a b|" {
		t.Errorf("command = %q", got)
	}
	if len(args) != 3+2*len(p.Params)+1+3 {
		t.Errorf("len(args) = %d", len(args))
	}
	if ExecutablePath != "/usr/bin/sandbox-exec" || ExecutableName != "sandbox-exec" {
		t.Errorf("executable %q %q", ExecutablePath, ExecutableName)
	}

	if _, err := p.Args(nil); !errors.Is(err, ErrNoCommand) {
		t.Errorf("no argv: err = %v", err)
	}
	if _, err := p.Args([]string{"echo", "a\x00b"}); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("NUL argument: err = %v", err)
	}
	bad := Profile{Text: p.Text, Params: []Param{{"A=B", "/x"}}}
	if _, err := bad.Args([]string{"true"}); err == nil {
		t.Errorf("parameter name with '=' accepted")
	}
}

// TestProfileGrowsLinearly: every writable path shares one exclusion list,
// so adding roots adds a line each, not a copy of every read-only subpath.
func TestProfileGrowsLinearly(t *testing.T) {
	spec := func(roots int) Spec {
		s := Spec{TempDir: tmpDir}
		for i := 0; i < roots; i++ {
			s.WritableRoots = append(s.WritableRoots, ws+strconv.Itoa(i))
		}
		for i := 0; i < 300; i++ {
			s.ReadOnlySubpaths = append(s.ReadOnlySubpaths, ws+"0/.git/modules/m"+strconv.Itoa(i)+"/hooks")
		}
		return s
	}
	one, three := buildCase(t, spec(1)), buildCase(t, spec(3))
	if d := len(three.Text) - len(one.Text); d > 200 {
		t.Errorf("two more roots added %d bytes of text", d)
	}
	for _, prm := range three.Params {
		if strings.HasPrefix(prm.Name, "READ_ONLY_") && !strings.HasSuffix(prm.Name, "_EXISTING") {
			if n := strings.Count(three.Text, `(param "`+prm.Name+`")`); n != 4 {
				t.Fatalf("%s referenced %d times, want 4 (two excluded, two denied)", prm.Name, n)
			}
		}
	}
	// ARG_MAX on macOS is 1 MiB, for the arguments and the environment.
	// These 300 paths do not exist yet, five names deep each, so each also
	// costs a case-insensitive regex of its missing names.
	argv, err := three.Args([]string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, a := range argv {
		size += len(a) + 1
	}
	if size > 384<<10 {
		t.Errorf("300 read-only subpaths make %d bytes of arguments", size)
	}
}

// TestProfileUnixSockets: an allowed host socket is reachable by its exact,
// canonical path (a parameter, never text), in both network modes, and no
// other host socket is.
func TestProfileUnixSockets(t *testing.T) {
	for _, network := range []bool{false, true} {
		spec := Spec{TempDir: tmpDir, AllowNetwork: network, UnixSockets: []string{"/tmp/agent.sock"}}
		p := buildCase(t, spec)
		forms, err := parseSBPL(p.Text)
		if err != nil {
			t.Fatal(err)
		}
		var literal []string
		for _, f := range forms {
			s := f.String()
			if f.head() == "allow" && strings.Contains(s, "remote unix-socket") && !strings.Contains(s, `(param "TEMP_DIR")`) && !strings.Contains(s, `(param "MDNS_SOCKET")`) {
				literal = append(literal, s)
			}
		}
		want := `(allow network-outbound (remote unix-socket (path-literal (param "UNIX_SOCKET_0"))))`
		if len(literal) != 1 || literal[0] != want {
			t.Errorf("network %v: host socket rules %q, want exactly %q", network, literal, want)
		}
		if strings.Contains(p.Text, "agent.sock") {
			t.Errorf("network %v: the socket path is in the profile text", network)
		}
		found := false
		for _, prm := range p.Params {
			if prm.Name == "UNIX_SOCKET_0" {
				found = prm.Value == "/private/tmp/agent.sock"
			}
		}
		if !found {
			t.Errorf("network %v: UNIX_SOCKET_0 missing or not canonical: %v", network, p.Params)
		}
	}
}

// TestProfileFinalDenies: in every profile, after every allow that could
// grant them, an explicit deny of ioctl TIOCSTI (by its decimal number,
// which is _IOW('t', 114, char) worked out here independently) and of
// setting a setuid or setgid bit.
func TestProfileFinalDenies(t *testing.T) {
	const (
		iocIn   = 0x80000000     // IOC_IN, <sys/ioccom.h>
		argSize = 1 << 16        // sizeof(char) << 16
		group   = uint('t') << 8 // the terminal ioctl group
		number  = 114            // TIOCSTI's number in <sys/ttycom.h>
	)
	wantIoctl := "(deny file-ioctl (ioctl-command " + strconv.FormatUint(uint64(iocIn|argSize|group|number), 10) + "))"
	if wantIoctl != "(deny file-ioctl (ioctl-command 2147578994))" {
		t.Fatalf("TIOCSTI worked out as %s", wantIoctl)
	}
	for _, c := range profileCases {
		t.Run(c.name, func(t *testing.T) {
			forms, err := parseSBPL(buildCase(t, c.spec).Text)
			if err != nil {
				t.Fatal(err)
			}
			ioctlAt, setugidAt, lastIoctlAllow, lastWriteAllow := -1, -1, -1, -1
			for i, f := range forms {
				switch s := f.String(); {
				case s == wantIoctl:
					ioctlAt = i
				case s == "(deny file-write-setugid)":
					setugidAt = i
				case f.head() == "allow":
					for _, op := range f.list[1:] {
						if op.kind == symbolAtom && (op.atom == "file-ioctl" || op.atom == "default") {
							lastIoctlAllow = i
						}
						if op.kind == symbolAtom && (strings.HasPrefix(op.atom, "file-write") || op.atom == "default") {
							lastWriteAllow = i
						}
					}
				}
			}
			if ioctlAt < 0 || ioctlAt < lastIoctlAllow {
				t.Errorf("%s at form %d, last file-ioctl allow at %d", wantIoctl, ioctlAt, lastIoctlAllow)
			}
			if lastIoctlAllow < 0 {
				t.Errorf("no file-ioctl allow: the ordering check proves nothing")
			}
			if setugidAt < 0 || setugidAt < lastWriteAllow {
				t.Errorf("(deny file-write-setugid) at form %d, last file-write allow at %d", setugidAt, lastWriteAllow)
			}
		})
	}
}

// TestProfileDeniesHardLinks: no spelling of a read-only subpath or a
// deny-read path, nor anything beneath one, can be the source of a hard
// link, by an explicit deny (not only the default); an ordinary file is
// not caught by it (the check is not vacuous).
func TestProfileDeniesHardLinks(t *testing.T) {
	spec := profileCases[0].spec
	spec.DenyRead = append(spec.DenyRead, ws+"/.env")
	for _, sp := range []Spec{spec, profileCases[1].spec, profileCases[3].spec} {
		p := buildCase(t, sp)
		ev, err := newEvaluator(p)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, prm := range p.Params {
			if !strings.HasPrefix(prm.Name, "READ_ONLY_") && !strings.HasPrefix(prm.Name, "DENY_READ_") || strings.HasSuffix(prm.Name, "_EXISTING") {
				continue // an existing ancestor of a missing path is not protected itself
			}
			for _, path := range []string{prm.Value, prm.Value + "/x"} {
				n++
				if !ev.explicitlyDenied("file-link", path) {
					t.Errorf("file-link of %s (%s) is not explicitly denied", path, prm.Name)
				}
			}
		}
		if n == 0 {
			t.Fatalf("no protected path in %+v", sp)
		}
		for _, path := range []string{ws + "/src/main.go", "/Users/me/.sshx", tmpReal + "/x"} {
			if ev.explicitlyDenied("file-link", path) {
				t.Errorf("file-link of the ordinary %s is explicitly denied", path)
			}
		}
	}
}

// TestProfileToolServices: what common tools need in every mode, network
// closed included: the interface list (getifaddrs reads the
// net.routetable sysctls: Go's net.Interfaces, node's
// os.networkInterfaces) and the power-management service (IOPMLib).
func TestProfileToolServices(t *testing.T) {
	for _, c := range profileCases {
		t.Run(c.name, func(t *testing.T) {
			forms, err := parseSBPL(buildCase(t, c.spec).Text)
			if err != nil {
				t.Fatal(err)
			}
			found := map[string]bool{}
			for _, f := range forms {
				if f.head() != "allow" || len(f.list) < 3 {
					continue
				}
				for _, flt := range f.list[2:] {
					found[f.list[1].atom+" "+flt.String()] = true
				}
			}
			for _, want := range []string{
				`sysctl-read (sysctl-name-prefix "net.routetable.")`,
				`mach-lookup (global-name "com.apple.PowerManagement.control")`,
			} {
				if !found[want] {
					t.Errorf("no (allow %s)", want)
				}
			}
		})
	}
}

// TestCacheVars: the compilers' module caches go below the temporary
// directory, one plain directory name each.
func TestCacheVars(t *testing.T) {
	got := map[string]string{}
	for _, v := range CacheVars() {
		if v.Subdir == "" || strings.ContainsAny(v.Subdir, `/\.`) || v.Why == "" {
			t.Errorf("%+v: subdir must be one plain name, and the reason given", v)
		}
		got[v.Name] = v.Subdir
	}
	for _, name := range []string{"CLANG_MODULE_CACHE_PATH", "SWIFTPM_MODULECACHE_OVERRIDE"} {
		if got[name] == "" {
			t.Errorf("%s not set by the runner", name)
		}
	}
	CacheVars()[0].Name = "mutated"
	if CacheVars()[0].Name == "mutated" {
		t.Error("CacheVars shares its slice")
	}
}

// TestProfileCaseVariants: a protected path that does not exist yet cannot
// be created (read-only) or read (deny-read) under another spelling that a
// case-insensitive volume treats as the same name: another ASCII letter
// case, or a name with the Kelvin sign for k; other names in the same
// directory stay writable.
func TestProfileCaseVariants(t *testing.T) {
	f := macFS()
	f.dir("/Users/me/fresh") // a workspace without .git yet
	spec := Spec{
		WritableRoots:    []string{ws, "/Users/me/fresh"},
		ReadOnlySubpaths: append(gitSurface(ws), "/Users/me/fresh/.git/hooks"),
		DenyRead:         []string{ws + "/.env"},
		TempDir:          tmpDir,
	}
	p, err := Build(f, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, prob := range checkProfile(p) {
		t.Error(prob)
	}
	ev, err := newEvaluator(p)
	if err != nil {
		t.Fatal(err)
	}
	const kelvin = "\u212a"
	for _, c := range []struct {
		op, path string
		allow    bool
	}{
		{"file-write-create", ws + "/.git/config.worktree", false},
		{"file-write-create", ws + "/.git/CONFIG.WORKTREE", false},
		{"file-write-create", ws + "/.git/Config.WorkTree", false},
		{"file-write-data", ws + "/.git/config.Worktree", false},
		{"file-write-create", ws + "/.git/CONFIG.WORKTREE/x", false},
		{"file-write-create", ws + "/.git/config.wor" + kelvin + "tree", false},
		{"file-write-create", ws + "/.git/config.worktreex", true},
		{"file-write-create", ws + "/.git/config.worktree.lock", true},
		{"file-write-create", ws + "/.git/ORIG_HEAD", true},
		{"file-write-create", ws + "/.git/café", true}, // 'a' is not in config.worktree
		{"file-write-create", ws + "/src/CONFIG.WORKTREE", true},
		{"file-write-create", "/Users/me/fresh/.git/hooks/pre-commit", false},
		{"file-write-create", "/Users/me/fresh/.GIT/hooks/pre-commit", false},
		{"file-write-create", "/Users/me/fresh/.Git/HOOKS", false},
		{"file-write-create", "/Users/me/fresh/.GIT", true}, // git init may create .git in any case
		{"file-write-create", "/Users/me/fresh/.GIT/objects/ab", true},
		{"file-write-create", "/Users/me/fresh/.GITX/hooks", true},
		{"file-read-data", ws + "/.env", false},
		{"file-read-data", ws + "/.ENV", false},
		{"file-read-data", ws + "/.Env/x", false},
		{"file-write-unlink", ws + "/.ENV", false},
		{"file-read-data", ws + "/.env.example", true},
		{"file-read-data", ws + "/.envrc", true},
		{"file-read-data", ws + "/ENV", true},
	} {
		last, denyWins := ev.decide(c.op, c.path)
		if last != c.allow || denyWins != c.allow {
			t.Errorf("%s %s: last-match=%v deny-wins=%v, want %v", c.op, c.path, last, denyWins, c.allow)
		}
	}
	if len(p.Unguarded) != 0 {
		t.Errorf("unguarded %q", p.Unguarded)
	}
}

// TestLaunchArgs: sandbox-exec runs the provider's own binary as the
// seatbelt-run step, which then runs the command.
func TestLaunchArgs(t *testing.T) {
	p := buildCase(t, profileCases[0].spec)
	args, err := p.LaunchArgs("/Applications/Agent.app/Contents/MacOS/agent", []string{"-looks-like-a-flag", "x"})
	if err != nil {
		t.Fatal(err)
	}
	n := 3 + 2*len(p.Params)
	if args[0] != "sandbox-exec" || args[1] != "-p" || args[2] != p.Text {
		t.Fatalf("args start %q", args[:2])
	}
	if got := strings.Join(args[n:], "|"); got != "--|/Applications/Agent.app/Contents/MacOS/agent|seatbelt-run|--|-looks-like-a-flag|x" {
		t.Errorf("args after the parameters: %s", got)
	}
	for _, bad := range []string{"", "agent", "/a\x00b"} {
		if _, err := p.LaunchArgs(bad, []string{"true"}); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("launcher %q: err = %v", bad, err)
		}
	}
	if _, err := p.LaunchArgs("/bin/agent", nil); !errors.Is(err, ErrNoCommand) {
		t.Errorf("no argv: err = %v", err)
	}
}
