package vocab

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"time"
)

const tok = "0123456789abcdef0123456789abcdef"

func TestEncodeDecodeRoundTrip(t *testing.T) {
	cases := []Spec{
		{Token: tok, Argv: []string{"true"}},
		{Token: tok, Writable: []string{"/ws", "/other"}, TempDir: "/tmp/x", ReadOnly: []string{"/ws/.git/hooks"},
			DenyRead: []string{"/home/u/.ssh"}, Dir: "/ws", Network: NetworkAllow, RequireFull: true,
			Argv: []string{"sh", "-c", "echo -w -- -net"}},
		{Token: tok, Writable: []string{"/a b/new\nline"}, Probe: true},
		{Token: tok, Argv: []string{"--", "-probe", ""}},
		{Token: tok, Seccomp: "0600000000ff7f00" + "0600000000000000", Argv: []string{"x"}},
		{Token: tok, UnixSockets: []string{"/run/user/1000/ssh-agent.sock", "/tmp/-u"}, Argv: []string{"-u", "/x"}},
		{Token: tok, Network: NetworkProxied, Ports: []int{41234, 5432}, Bridge: "/tmp/sandbox-local-0/w.sock", Argv: []string{"curl"}},
		{Token: tok, Ports: []int{5432}, Argv: []string{"psql"}},
		{Token: tok, LandlockABI: 7, Notice: "net: Landlock ABI 7 ... -- -w; ünïcode", Argv: []string{"true"}},
		{Token: tok, LandlockABI: 99, Argv: []string{"true"}},
	}
	for i, s := range cases {
		args, err := Encode(LandlockRun, s)
		if err != nil {
			t.Fatalf("case %d: Encode: %v", i, err)
		}
		if args[0] != LandlockRun || args[1] != Version {
			t.Fatalf("case %d: header %q", i, args[:2])
		}
		for _, a := range args {
			if strings.Contains(a, tok) {
				t.Fatalf("case %d: the token is in argv %q", i, args)
			}
		}
		got, err := Decode(args[1:])
		if err != nil {
			t.Fatalf("case %d: Decode: %v", i, err)
		}
		s.Token = "" // travels in TokenEnv
		if !reflect.DeepEqual(got, s) {
			t.Errorf("case %d: round trip\n got %#v\nwant %#v", i, got, s)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	ok := []string{Version, "-net", "deny", "--", "true"}
	with := func(edit func([]string) []string) []string {
		return edit(append([]string(nil), ok...))
	}
	cases := map[string][]string{
		"empty":              {},
		"wrong version":      with(func(a []string) []string { a[0] = "sandbox-local/0"; return a }),
		"missing --":         {Version, "-net", "deny", "true"},
		"missing -net":       {Version, "--", "true"},
		"bad net":            {Version, "-net", "maybe", "--", "true"},
		"net twice":          {Version, "-net", "deny", "-net", "allow", "--", "true"},
		"unknown option":     {Version, "-x", "-net", "deny", "--", "true"},
		"missing value":      {Version, "-net"},
		"relative root":      {Version, "-w", "ws", "-net", "deny", "--", "true"},
		"unclean root":       {Version, "-w", "/ws/../etc", "-net", "deny", "--", "true"},
		"empty path":         {Version, "-d", "", "-net", "deny", "--", "true"},
		"relative socket":    {Version, "-u", "agent.sock", "-net", "deny", "--", "true"},
		"socket no value":    {Version, "-net", "deny", "-u"},
		"nul in path":        {Version, "-r", "/ws/\x00x", "-net", "deny", "--", "true"},
		"no command":         {Version, "-net", "deny", "--"},
		"probe with command": {Version, "-net", "deny", "-probe", "--", "true"},
		"temp twice":         {Version, "-t", "/a", "-t", "/b", "-net", "deny", "--", "true"},
		"dir twice":          {Version, "-C", "/a", "-C", "/b", "-net", "deny", "--", "true"},
		"empty temp dir":     {Version, "-t", "", "-net", "deny", "--", "true"},
		"empty dir":          {Version, "-C", "", "-net", "deny", "--", "true"},
		"odd seccomp":        {Version, "-seccomp", "0600", "-net", "deny", "--", "true"},
		"upper seccomp":      {Version, "-seccomp", "0600000000FF7F00", "-net", "deny", "--", "true"},
		"seccomp twice":      {Version, "-seccomp", "0600000000ff7f00", "-seccomp", "0600000000ff7f00", "-net", "deny", "--", "true"},
		"nul in argv":        {Version, "-net", "deny", "--", "tr\x00ue"},
		"proxied, no port":   {Version, "-net", "proxied", "--", "true"},
		"port under allow":   {Version, "-net", "allow", "-port", "80", "--", "true"},
		"port zero":          {Version, "-net", "deny", "-port", "0", "--", "true"},
		"port too large":     {Version, "-net", "deny", "-port", "65536", "--", "true"},
		"port leading zero":  {Version, "-net", "deny", "-port", "080", "--", "true"},
		"port with a sign":   {Version, "-net", "deny", "-port", "+80", "--", "true"},
		"bridge, no port":    {Version, "-net", "deny", "-bridge", "/b", "--", "true"},
		"relative bridge":    {Version, "-net", "deny", "-port", "80", "-bridge", "b", "--", "true"},
		"bridge twice":       {Version, "-net", "deny", "-port", "80", "-bridge", "/b", "-bridge", "/c", "--", "true"},
		"abi zero":           {Version, "-net", "deny", "-abi", "0", "--", "true"},
		"abi too large":      {Version, "-net", "deny", "-abi", "100", "--", "true"},
		"abi leading zero":   {Version, "-net", "deny", "-abi", "07", "--", "true"},
		"abi not a number":   {Version, "-net", "deny", "-abi", "7a", "--", "true"},
		"abi twice":          {Version, "-net", "deny", "-abi", "7", "-abi", "7", "--", "true"},
		"abi no value":       {Version, "-net", "deny", "-abi"},
		"empty notice":       {Version, "-net", "deny", "-notice", "", "--", "true"},
		"notice newline":     {Version, "-net", "deny", "-notice", "a\nlandlock-run: fatal: x", "--", "true"},
		"notice escape":      {Version, "-net", "deny", "-notice", "a\x1b[2J", "--", "true"},
		"notice twice":       {Version, "-net", "deny", "-notice", "a", "-notice", "b", "--", "true"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(args)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode(%q) = %v, want ErrMalformed", args, err)
			}
		})
	}
	if _, err := Decode(ok); err != nil {
		t.Fatalf("control: Decode(%q) = %v", ok, err)
	}
}

func TestDecodeTooManyArgs(t *testing.T) {
	args := append([]string{Version, "-net", "deny", "--"}, make([]string, MaxArgs)...)
	if _, err := Decode(args); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Decode of %d args = %v, want ErrMalformed", len(args), err)
	}
}

// TestEncodeRefusesWhatDecodeWould: a spec too large for the launcher is
// refused at Encode (Wrap: INVALID_POLICY), not at launch.
func TestEncodeRefusesWhatDecodeWould(t *testing.T) {
	s := Spec{Token: tok, Argv: []string{"true"}}
	for len(s.DenyRead) < MaxArgs/2 {
		s.DenyRead = append(s.DenyRead, "/x")
	}
	if _, err := Encode(NsRun, s); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Encode of %d deny-read paths: %v, want ErrMalformed", len(s.DenyRead), err)
	}
	s.DenyRead = s.DenyRead[:MaxArgs/2-10]
	args, err := Encode(NsRun, s)
	if err != nil {
		t.Fatalf("control: Encode just under the limit: %v", err)
	}
	if _, err := Decode(args[1:]); err != nil {
		t.Fatalf("control: Decode just under the limit: %v", err)
	}
}

// TestEncodeRefusesNegativeNumbers: a negative limit or ABI is written
// as it is, and refused, not dropped as if it were unset.
func TestEncodeRefusesNegativeNumbers(t *testing.T) {
	for _, s := range []Spec{
		{Limits: Limits{MaxProcesses: -1}},
		{Limits: Limits{MaxAddressSpace: -1}},
		{Limits: Limits{TempSize: -1}},
		{LandlockABI: -1},
		{Ports: []int{-1}},
	} {
		s.Token, s.Argv = tok, []string{"true"}
		if _, err := Encode(NsRun, s); !errors.Is(err, ErrMalformed) {
			t.Errorf("Encode of %+v: %v, want ErrMalformed", s, err)
		}
		s.Limits, s.LandlockABI, s.Ports = Limits{}, 0, nil
		if _, err := Encode(NsRun, s); err != nil {
			t.Errorf("control: Encode without the number: %v", err)
		}
	}
}

func TestEncodeNeedsAToken(t *testing.T) {
	for _, bad := range []string{"", "abc", strings.ToUpper(tok), tok + "0"} {
		if _, err := Encode(LandlockRun, Spec{Token: bad, Argv: []string{"true"}}); !errors.Is(err, ErrMalformed) {
			t.Errorf("Encode with token %q: %v, want ErrMalformed", bad, err)
		}
	}
}

func TestNewTokenIsValidAndFresh(t *testing.T) {
	a, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewToken()
	if !ValidToken(a) || !ValidToken(b) || a == b {
		t.Fatalf("tokens %q %q", a, b)
	}
}

func TestLines(t *testing.T) {
	if got, want := FatalLine(LandlockRun, tok, "bad\nthing"), "landlock-run: fatal: ["+tok+"] bad thing"; got != want {
		t.Errorf("FatalLine = %q, want %q", got, want)
	}
	if got, want := FatalLine(NsRun, "", "x"), "ns-run: fatal: x"; got != want {
		t.Errorf("unsigned FatalLine = %q, want %q", got, want)
	}
	if got := NoticeText(nil); got != "" {
		t.Errorf("NoticeText(no gaps) = %q", got)
	}
	got := NoticePrefix(LandlockRun) + NoticeText([]Gap{{"fs", "a"}, {"net", "b\nc"}})
	if want := "landlock-run: notice: partial enforcement: fs: a; net: b c"; got != want {
		t.Errorf("the notice line = %q, want %q", got, want)
	}
}

func TestLandlockKernelGapsByABI(t *testing.T) {
	deny := Spec{}
	allow := Spec{Network: NetworkAllow}
	socks := Spec{UnixSockets: []string{"/run/agent.sock"}}
	socksAllow := Spec{Network: NetworkAllow, UnixSockets: []string{"/run/agent.sock"}}
	cases := []struct {
		abi  int
		s    Spec
		want []string // areas, in order
	}{
		{0, deny, []string{"fs"}},
		{1, deny, []string{"fs", "fs", "fs", "net", "ipc", "net"}},
		{3, deny, []string{"fs", "net", "ipc", "net"}},
		{4, deny, []string{"fs", "ipc", "net"}},
		{5, deny, []string{"ipc", "net"}},
		{5, allow, []string{"ipc"}},
		{6, deny, nil},
		{7, deny, nil},
		{9, allow, nil},
		{7, socks, []string{"ipc"}},
		{8, socks, []string{"ipc"}},
		{9, socks, nil},
		{7, socksAllow, nil}, // network allow: every socket is open anyway (AllowNetworkGaps)
	}
	for _, c := range cases {
		var got []string
		for _, g := range LandlockKernelGaps(c.abi, c.s) {
			got = append(got, string(g.Area))
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("abi %d allow=%v: areas %v, want %v", c.abi, c.s.Network, got, c.want)
		}
	}
}

func TestLandlockGapsNameReadOnlyAndInnerDenyRead(t *testing.T) {
	s := Spec{Writable: []string{"/ws"}, ReadOnly: []string{"/ws/.git/hooks", "/ws/.git/config"},
		DenyRead: []string{"/ws/.env", "/home/u/.ssh"}}
	gaps := LandlockGaps(7, s)
	if len(gaps) != 5 || gaps[0] != LandlockProcGap || gaps[1] != LandlockDenyReadMetadataGap {
		t.Fatalf("gaps = %v, want 5 (/proc, deny-read lookups, two read-only subpaths, one inner deny-read)", gaps)
	}
	if g := LandlockGaps(7, Spec{Writable: []string{"/ws"}}); len(g) != 1 {
		t.Errorf("without deny-read paths: %v, want /proc only", g)
	}
	gaps = gaps[2:]
	for i, p := range []string{"/ws/.git/hooks", "/ws/.git/config", "/ws/.env"} {
		if !strings.Contains(gaps[i].Reason, p) {
			t.Errorf("gap %d = %q, want it to name %s", i, gaps[i], p)
		}
	}
}

// TestUnixSocketGapNamesTheSockets: the gap says which sockets were meant
// and which ABI would confine them, in both runners' reports.
func TestUnixSocketGapNamesTheSockets(t *testing.T) {
	s := Spec{UnixSockets: []string{"/run/a.sock", "/tmp/b.sock"}}
	for name, gaps := range map[string][]Gap{
		"landlock":   LandlockKernelGaps(7, s),
		"namespaces": NamespaceGaps(s, 7, func(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist }),
	} {
		if len(gaps) != 1 || !strings.Contains(gaps[0].Reason, "/run/a.sock, /tmp/b.sock") || !strings.Contains(gaps[0].Reason, "needs ABI 9") {
			t.Errorf("%s: gaps %v, want one naming both sockets and ABI 9", name, gaps)
		}
	}
	if gaps := NamespaceGaps(s, 9, func(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist }); len(gaps) != 0 {
		t.Errorf("namespaces on ABI 9: gaps %v, want none", gaps)
	}
}

func TestWithin(t *testing.T) {
	cases := []struct {
		p, root string
		want    bool
	}{
		{"/a", "/a", true}, {"/a/b", "/a", true}, {"/ab", "/a", false}, {"/", "/a", false},
		{"/x", "/", true}, {"/a", "/a/b", false},
	}
	for _, c := range cases {
		if got := Within(c.p, c.root); got != c.want {
			t.Errorf("Within(%q, %q) = %v", c.p, c.root, got)
		}
	}
}

// TestOneLineStripsControls: no C0 or C1 control (an escape sequence in a
// path or a host name a command chose) survives into a printed line.
func TestOneLineStripsControls(t *testing.T) {
	for in, want := range map[string]string{
		"a\nb":              "a b",
		"\x1b[2Jgone":       " [2Jgone",
		"csi\u009b31m":      "csi 31m",
		"del\x7f":           "del ",
		"ünïcode stays":     "ünïcode stays",
		"nbsp\u00a0is text": "nbsp\u00a0is text",
		"line\u2028sep":     "line sep",
		"rtl\u202eoverride": "rtl override",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNamespaceSignalGap: below Landlock ABI 6 the namespaces launcher
// cannot scope the command's signals, and the report says so; from ABI 6
// on, nothing.
func TestNamespaceSignalGap(t *testing.T) {
	none := func(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist }
	for abi, want := range map[int]bool{0: true, 5: true, 6: false, 7: false} {
		gaps := NamespaceGaps(Spec{}, abi, none)
		got := len(gaps) == 1 && gaps[0].Area == "ipc" && strings.Contains(gaps[0].Reason, "kill(0)")
		if got != want || !want && len(gaps) != 0 {
			t.Errorf("ABI %d: gaps %v, want the signal gap: %v", abi, gaps, want)
		}
	}
}

// TestNamespaceGapsGuarded: a missing read-only subpath is a gap of the
// namespaces runner unless its launcher guards the absent names (the
// provider then lists every missing one in Guarded); a symlink stays one.
func TestNamespaceGapsGuarded(t *testing.T) {
	missing := func(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist }
	s := Spec{ReadOnly: []string{"/ws/.git/commondir"}}
	if gaps := NamespaceGaps(s, 7, missing); len(gaps) != 1 || !strings.Contains(gaps[0].Reason, "/ws/.git/commondir") {
		t.Errorf("without a guard: gaps %v, want the missing commondir", gaps)
	}
	s.Guarded = []string{"/ws/.git/commondir"}
	if gaps := NamespaceGaps(s, 7, missing); len(gaps) != 0 {
		t.Errorf("guarded: gaps %v, want none", gaps)
	}
	if gaps := LandlockGaps(7, s); !strings.Contains(fmt.Sprint(gaps), "/ws/.git/commondir") {
		t.Errorf("landlock: gaps %v, want the read-only subpath still reported", gaps)
	}
}

// TestNamespaceGapsGuardedBehindALink: a guarded name below a symlink
// (a .cargo linked elsewhere) is not guarded by the launcher: a gap.
func TestNamespaceGapsGuardedBehindALink(t *testing.T) {
	lstat := func(p string) (fs.FileInfo, error) {
		if p == "/ws/.cargo" {
			return fakeInfo{mode: fs.ModeSymlink}, nil
		}
		return nil, fs.ErrNotExist
	}
	s := Spec{Writable: []string{"/ws"}, Guarded: []string{"/ws/.cargo/config.toml", "/ws/.envrc"}}
	gaps := NamespaceGaps(s, 7, lstat)
	if len(gaps) != 1 || !strings.Contains(gaps[0].Reason, "/ws/.cargo/config.toml") || !strings.Contains(gaps[0].Reason, "symlink /ws/.cargo") {
		t.Errorf("gaps %v, want one naming .cargo/config.toml behind the symlink .cargo", gaps)
	}
}

// fakeInfo is an fs.FileInfo of the given mode.
type fakeInfo struct{ mode fs.FileMode }

func (f fakeInfo) Name() string       { return "" }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return nil }

// TestGuardedBelowAFile: a guarded name below something that exists but
// is no directory (a .cargo file) is no guarded name at all: the guard
// does not cover it, and the report says so.
func TestGuardedBelowAFile(t *testing.T) {
	s := Spec{Writable: []string{"/ws"}, Guarded: []string{"/ws/.cargo/config.toml"}}
	lstat := func(p string) (fs.FileInfo, error) {
		if p == "/ws/.cargo" {
			return fakeFile{}, nil
		}
		return nil, fs.ErrNotExist
	}
	gaps := NamespaceGaps(s, 7, lstat)
	if len(gaps) != 1 || !strings.Contains(gaps[0].Reason, "/ws/.cargo is not a directory") {
		t.Errorf("gaps %v, want the one naming /ws/.cargo", gaps)
	}
}

type fakeFile struct{ fs.FileInfo }

func (fakeFile) Mode() fs.FileMode { return 0o644 }
func (fakeFile) IsDir() bool       { return false }

// TestOptionTable: the table both decoders are driven by is well formed:
// one row per OptionID, unique names, C keys and C fields, a bound and a C
// type on every Number, paths only for Text, a name for every value's
// errors.
func TestOptionTable(t *testing.T) {
	if numOptions > 64 {
		t.Fatalf("%d options: the C decoder keeps an option's needs in a 64-bit mask", numOptions)
	}
	names, keys, fields := map[string]bool{}, map[string]bool{}, map[string]bool{"cmd": true, "ncmd": true}
	for id, o := range Options {
		if o.Name == "" || o.Key == "" || o.CField == "" || o.get == nil || o.set == nil {
			t.Fatalf("option %d: row incomplete: %+v", id, o)
		}
		if names[o.Name] || keys[o.Key] || fields[o.CField] || o.Repeatable && fields["n"+o.CField] {
			t.Errorf("option %d: %s (SBX_OPT_%s, %s) named twice", id, o.Name, o.Key, o.CField)
		}
		names[o.Name], keys[o.Key], fields[o.CField] = true, true, true
		if o.Repeatable {
			fields["n"+o.CField] = true
		}
		if (o.Value == Number) != (o.CType == "int" || o.CType == "long long") {
			t.Errorf("%s: value kind %d with C type %q", o.Name, o.Value, o.CType)
		}
		if got, ok := lookupOption(o.Name); !ok || got != OptionID(id) {
			t.Errorf("lookupOption(%s) = %d, %v; want %d", o.Name, got, ok, id)
		}
		if (o.Value == Number) != (o.Max > 0) {
			t.Errorf("%s: value kind %d with bound %d", o.Name, o.Value, o.Max)
		}
		if o.Path && o.Value != Text {
			t.Errorf("%s: a path that is not Text", o.Name)
		}
		if o.Value != Flag && o.What == "" {
			t.Errorf("%s: no name for its value", o.Name)
		}
		for _, need := range o.Needs {
			if need < 0 || need >= numOptions || need == OptionID(id) || Options[need].Required {
				t.Errorf("%s needs option %d: not another, optional option", o.Name, need)
			}
		}
	}
}

func TestNetModeWords(t *testing.T) {
	for _, c := range []struct {
		m    NetMode
		word string
	}{{NetworkDeny, NetDeny}, {NetworkAllow, NetAllow}, {NetworkProxied, NetProxied}} {
		if c.m.String() != c.word {
			t.Errorf("%d.String() = %q, want %q", c.m, c.m.String(), c.word)
		}
		if m, ok := ParseNetMode(c.word); !ok || m != c.m {
			t.Errorf("ParseNetMode(%q) = %d, %v; want %d", c.word, m, ok, c.m)
		}
	}
	if _, ok := ParseNetMode("Deny"); ok {
		t.Error("ParseNetMode accepted Deny")
	}
	if _, err := Encode(LandlockRun, Spec{Token: tok, Network: NetMode(7), Argv: []string{"x"}}); !errors.Is(err, ErrMalformed) {
		t.Errorf("Encode of network mode 7: %v, want ErrMalformed", err)
	}
}
