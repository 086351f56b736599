package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/winacl"
)

// winFake is an in-memory winacl.System that records every call. Paths are
// canonical Windows paths compared by winacl.Key, as NTFS would.
type winFake struct {
	mu      sync.Mutex
	temp    string
	tempErr error
	self    winacl.ProcessID
	procs   map[uint32]uint64 // running pid -> start time
	nodes   map[string]*winNode
	calls   []winCall
	nextIdx uint64
}

type winNode struct {
	path  string
	dir   bool
	data  []byte
	aces  []winacl.ACE
	index uint64 // file index, given on first Identify
}

type winCall struct {
	op, path string
	ace      winacl.ACE
}

// winMutating are the calls that change the disk.
var winMutating = map[string]bool{"AddACE": true, "RevokeACE": true, "MkdirPrivate": true, "RemoveAll": true, "WriteFile": true, "Remove": true}

const winTemp = `C:\Users\me\AppData\Local\Temp`

func newWinFake(dirs ...string) *winFake {
	f := &winFake{temp: winTemp, self: winacl.ProcessID{PID: 100, Start: 1000},
		procs: map[uint32]uint64{100: 1000}, nodes: map[string]*winNode{}}
	for _, d := range append([]string{`C:\`, `C:\Users`, `C:\Users\me`, `C:\Users\me\AppData`, `C:\Users\me\AppData\Local`, winTemp}, dirs...) {
		f.nodes[winacl.Key(d)] = &winNode{path: d, dir: true}
	}
	return f
}

func winParent(p string) string {
	i := strings.LastIndex(p, `\`)
	if i < 0 {
		return ""
	}
	if par := p[:i]; !strings.HasSuffix(par, ":") {
		return par
	}
	return p[:i+1]
}

func (f *winFake) rec(op, path string, ace winacl.ACE) {
	f.calls = append(f.calls, winCall{op, path, ace})
}

func (f *winFake) node(path string) (*winNode, error) {
	if n := f.nodes[winacl.Key(path)]; n != nil {
		return n, nil
	}
	return nil, &fs.PathError{Op: "fake", Path: path, Err: fs.ErrNotExist}
}

func (f *winFake) TempRoot() (string, error) { return f.temp, f.tempErr }

func (f *winFake) Identify(path string) (winacl.FileIdentity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.node(path)
	if err != nil {
		return winacl.FileIdentity{}, err
	}
	if n.index == 0 {
		f.nextIdx++
		n.index = f.nextIdx
	}
	return winacl.FileIdentity{Volume: 1, Index: n.index, Dir: n.dir}, nil
}

func (f *winFake) LongPathName(path string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.node(path); err != nil {
		return "", err
	}
	return path, nil
}

func (f *winFake) HasACE(path string, want winacl.ACE) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec("HasACE", path, want)
	n, err := f.node(path)
	if err != nil {
		return false, err
	}
	for _, a := range n.aces {
		if a.SID == want.SID && a.Deny == want.Deny && a.Inherit == want.Inherit && a.Access&want.Access == want.Access {
			return true, nil
		}
	}
	return false, nil
}

func (f *winFake) AddACE(path string, ace winacl.ACE) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec("AddACE", path, ace)
	n, err := f.node(path)
	if err != nil {
		return err
	}
	n.aces = append(n.aces, ace)
	return nil
}

func (f *winFake) RevokeACE(path string, sid winacl.SID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec("RevokeACE", path, winacl.ACE{SID: sid})
	n, err := f.node(path)
	if err != nil {
		return err
	}
	var keep []winacl.ACE
	for _, a := range n.aces {
		if a.SID != sid || a.Deny {
			keep = append(keep, a)
		}
	}
	n.aces = keep
	return nil
}

func (f *winFake) MkdirPrivate(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec("MkdirPrivate", path, winacl.ACE{})
	if f.nodes[winacl.Key(path)] != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: fs.ErrExist}
	}
	if p, err := f.node(winParent(path)); err != nil || !p.dir {
		return &fs.PathError{Op: "mkdir", Path: path, Err: fs.ErrNotExist}
	}
	f.nodes[winacl.Key(path)] = &winNode{path: path, dir: true}
	return nil
}

func (f *winFake) RemoveAll(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec("RemoveAll", path, winacl.ACE{})
	for k, n := range f.nodes {
		if winacl.Within(n.path, path) {
			delete(f.nodes, k)
		}
	}
	return nil
}

func (f *winFake) ReadDir(path string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec("ReadDir", path, winacl.ACE{})
	if _, err := f.node(path); err != nil {
		return nil, err
	}
	return f.names(path), nil
}

func (f *winFake) names(dir string) []string {
	var names []string
	for _, n := range f.nodes {
		if winacl.Key(winParent(n.path)) == winacl.Key(dir) && winacl.Key(n.path) != winacl.Key(dir) {
			names = append(names, n.path[strings.LastIndex(n.path, `\`)+1:])
		}
	}
	sort.Strings(names)
	return names
}

func (f *winFake) ReadFile(path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec("ReadFile", path, winacl.ACE{})
	n, err := f.node(path)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), n.data...), nil
}

func (f *winFake) WriteFile(path string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec("WriteFile", path, winacl.ACE{})
	if p, err := f.node(winParent(path)); err != nil || !p.dir {
		return &fs.PathError{Op: "write", Path: path, Err: fs.ErrNotExist}
	}
	f.nodes[winacl.Key(path)] = &winNode{path: path, data: append([]byte(nil), data...)}
	return nil
}

func (f *winFake) Remove(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec("Remove", path, winacl.ACE{})
	if _, err := f.node(path); err != nil {
		return err
	}
	delete(f.nodes, winacl.Key(path))
	return nil
}

func (f *winFake) Self() (winacl.ProcessID, error) { return f.self, nil }

func (f *winFake) StartTime(pid uint32) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.procs[pid]; ok {
		return s, nil
	}
	return 0, fmt.Errorf("pid %d: %w", pid, winacl.ErrProcessGone)
}

// take returns and clears the recorded calls.
func (f *winFake) take() []winCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func (f *winFake) exists(path string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nodes[winacl.Key(path)] != nil
}

func (f *winFake) aces(path string) []winacl.ACE {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.nodes[winacl.Key(path)]; n != nil {
		return append([]winacl.ACE(nil), n.aces...)
	}
	return nil
}

func winMutations(calls []winCall) []winCall {
	var out []winCall
	for _, c := range calls {
		if winMutating[c.op] {
			out = append(out, c)
		}
	}
	return out
}

func winCount(calls []winCall, op, path string) int {
	n := 0
	for _, c := range calls {
		if c.op == op && (path == "" || winacl.Key(c.path) == winacl.Key(path)) {
			n++
		}
	}
	return n
}

const winExe = `C:\Program Files\agent\agent.exe`

func winExeOK() (string, error) { return winExe, nil }

func winRunner(f *winFake) winaclRunner { return newWinACLRunner(f, winExeOK) }

// winWrap does what Provider.Wrap does with a runner once the request is
// validated (Provider.Wrap itself needs host paths that exist): prepare,
// and the launch copied into a Wrapped.
func winWrap(t *testing.T, r winaclRunner, spec vocab.Spec) (*Wrapped, launch, error) {
	t.Helper()
	if err := r.ready(); err != nil {
		t.Fatalf("ready: %v", err)
	}
	w := &Wrapped{Dir: spec.Dir, Runner: r.name()}
	l, err := r.prepare(t.Context(), spec)
	if err != nil {
		return w, l, err
	}
	w.adopt(l)
	return w, l, nil
}

func winToken(t *testing.T) string {
	t.Helper()
	tok, err := vocab.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestWinACLWrap(t *testing.T) {
	cases := []struct {
		name      string
		writable  []string
		readOnly  []string
		dir       string
		argv      []string
		net       bool
		wantRoots []string // canonical write roots on the launcher argv
		wantDir   string
		wantGap   string // a gap reason fragment
	}{
		{"workspace-write", []string{`C:\src\proj`}, []string{`C:\src\proj\.git\hooks`}, `C:\src\proj\sub`,
			[]string{"cmd", "/c", `echo "hi there" > out.txt`}, false, []string{`C:\src\proj`}, `C:\src\proj\sub`, "network is not confined"},
		{"read-only, drive root dir, network allowed", nil, nil, `d:\`, []string{"git", "status"}, true, nil, `D:\`, "Everyone"},
		{"nested root folded, other spellings", []string{`c:/src/proj/`, `C:\SRC\proj\out`}, nil, `C:\src\proj`,
			[]string{"go", "test", "./..."}, false, []string{`C:\src\proj`}, `C:\src\proj`, "hard links"},
		{"share root", []string{`\\srv\share\proj`, `C:\src\proj`}, nil, `\\srv\share\proj`,
			[]string{`C:\tools\make.exe`, ""}, false, []string{`\\srv\share\proj`, `C:\src\proj`}, `\\srv\share\proj`, "network shares"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newWinFake(`C:\src`, `C:\src\proj`, `C:\src\proj\out`, `C:\src\proj\.git`, `C:\src\proj\.git\hooks`, `\\srv\share\proj`)
			r := winRunner(f)
			tok := winToken(t)
			spec := vocab.Spec{Token: tok, Writable: c.writable, ReadOnly: c.readOnly, DenyRead: []string{`C:\Users\me\.ssh`},
				Dir: c.dir, Network: netMode(c.net), Argv: c.argv}
			w, l, err := winWrap(t, r, spec)
			if err != nil {
				t.Fatalf("wrap: %v", err)
			}
			defer w.Cleanup()

			if w.Path != winExe || len(w.Args) == 0 || w.Args[0] != vocab.WinACLRun {
				t.Fatalf("path %q args %q", w.Path, w.Args)
			}
			if names := []string{vocab.WinACLRun, winacl.LauncherName}; names[0] != names[1] {
				t.Fatalf("launcher names differ: %q", names)
			}
			got, err := vocab.Decode(w.Args[1:])
			if err != nil {
				t.Fatalf("launcher argv does not decode: %v (%q)", err, w.Args)
			}
			for _, a := range w.Args {
				if strings.Contains(a, tok) {
					t.Fatalf("the token is in the launcher's argv %q (it travels in %s)", w.Args, vocab.TokenEnv)
				}
			}
			if !reflect.DeepEqual(got.Argv, c.argv) || got.Network != netMode(c.net) || got.RequireFull || got.Probe {
				t.Fatalf("decoded %+v", got)
			}
			if len(got.ReadOnly) != 0 || len(got.DenyRead) != 0 {
				t.Errorf("read-only %q and deny-read %q need not cross to the launcher", got.ReadOnly, got.DenyRead)
			}
			canon := func(p string) string {
				t.Helper()
				cp, err := winacl.Canonicalize(p, nil)
				if err != nil {
					t.Fatalf("launcher cannot read path %q: %v", p, err)
				}
				return cp
			}
			var roots []string
			for _, p := range got.Writable {
				roots = append(roots, canon(p))
			}
			if !reflect.DeepEqual(roots, c.wantRoots) {
				t.Errorf("write roots on the argv %q, want %q", roots, c.wantRoots)
			}
			if d := canon(got.Dir); d != c.wantDir {
				t.Errorf("dir %q, want %q", d, c.wantDir)
			}
			if canon(got.TempDir) != w.TempDir || !winacl.Within(w.TempDir, winTemp+`\`+winacl.SessionDirName) || w.TempDir == winTemp+`\`+winacl.SessionDirName {
				t.Errorf("temp dir %q (argv %q)", w.TempDir, got.TempDir)
			}
			if !reflect.DeepEqual(l.tempVars, []string{"TMP", "TEMP"}) {
				t.Errorf("temp vars %q", l.tempVars)
			}

			// What the launcher builds from the argv: the SIDs the ACEs
			// were made for, and the status file the rule names.
			ls, err := winacl.NewLaunchSpec(got.Writable, got.TempDir, got.Argv, canon(got.Dir), nil)
			if err != nil {
				t.Fatalf("launcher spec: %v", err)
			}
			var wantSIDs []winacl.SID
			for _, root := range c.wantRoots {
				sid, _ := winacl.WriteSID(root, nil)
				wantSIDs = append(wantSIDs, sid)
				if !hasACE(f.aces(root), sid) {
					t.Errorf("no standing ACE for %s on %s: %v", sid, root, f.aces(root))
				}
			}
			if !reflect.DeepEqual(ls.WriteSIDs, wantSIDs) {
				t.Errorf("launcher write SIDs %v, want %v", ls.WriteSIDs, wantSIDs)
			}
			if sid, _ := winacl.SessionSID(w.TempDir); ls.SessionSID != sid || !hasACE(f.aces(w.TempDir), sid) {
				t.Errorf("session SID %s, ACEs on the dir %v", ls.SessionSID, f.aces(w.TempDir))
			}

			if w.RunnerFailure.Kind != RuleExitAndLine || w.RunnerFailure.ExitCode != vocab.FatalExit ||
				w.RunnerFailure.FatalPrefix != vocab.FatalPrefix(vocab.WinACLRun, tok) || w.RunnerFailure.StatusFile != ls.StatusFile || ls.StatusFile == "" {
				t.Errorf("rule %+v (launcher status file %q)", w.RunnerFailure, ls.StatusFile)
			}
			if len(w.Gaps) < len(winacl.Gaps()) || !strings.Contains(joinGaps(w.Gaps), c.wantGap) || !strings.Contains(joinGaps(w.Gaps), `C:\Users\me\.ssh`) {
				t.Errorf("gaps %v", w.Gaps)
			}
			if !slices.Contains(w.DenialSignatures, "Access is denied") {
				t.Errorf("denial signatures %q", w.DenialSignatures)
			}
		})
	}
}

func hasACE(aces []winacl.ACE, sid winacl.SID) bool {
	for _, a := range aces {
		if a.SID == sid && !a.Deny {
			return true
		}
	}
	return false
}

func TestWinACLInvalidPolicyChangesNothing(t *testing.T) {
	many := make([]string, winacl.MaxWriteRoots+1)
	for i := range many {
		many[i] = fmt.Sprintf(`C:\src\p%d`, i)
	}
	cases := []struct {
		name     string
		writable []string
		dir      string
		argv     []string
		full     bool
	}{
		{"workspace is the temp root", []string{winTemp}, `C:\src\proj`, []string{"cmd"}, false},
		{"workspace contains the temp root", []string{`C:\src\proj`, `C:\Users\me`}, `C:\src\proj`, []string{"cmd"}, false},
		{"contains it, other case and separators", []string{`c:/users/ME/appdata/`}, `C:\src\proj`, []string{"cmd"}, false},
		{"contains it, with RequireFull", []string{`C:\Users`}, `C:\src\proj`, []string{"cmd"}, true},
		{"volume root", []string{`C:\`}, `C:\src\proj`, []string{"cmd"}, false},
		{"inside the private temp dirs", []string{winTemp + `\sandbox-local\x`}, `C:\src\proj`, []string{"cmd"}, false},
		{"too many roots", many, `C:\src\proj`, []string{"cmd"}, false},
		{"missing workspace", []string{`C:\src\gone`}, `C:\src\proj`, []string{"cmd"}, false},
		{"not a Windows path", []string{"/home/me/proj"}, `C:\src\proj`, []string{"cmd"}, false},
		{"quote in the program name", []string{`C:\src\proj`}, `C:\src\proj`, []string{`my"prog`}, false},
		{"relative working dir", []string{`C:\src\proj`}, `proj`, []string{"cmd"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newWinFake(`C:\src`, `C:\src\proj`)
			for _, m := range many {
				f.nodes[winacl.Key(m)] = &winNode{path: m, dir: true}
			}
			r := winRunner(f)
			if err := r.ready(); err != nil {
				t.Fatal(err)
			}
			f.take()
			spec := vocab.Spec{Token: winToken(t), Writable: c.writable, Dir: c.dir, Argv: c.argv, RequireFull: c.full}
			l, err := r.prepare(t.Context(), spec)
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidPolicy || !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("err = %v, want INVALID_POLICY", err)
			}
			if m := winMutations(f.take()); len(m) != 0 {
				t.Errorf("ACLs or files changed before the policy error: %v", m)
			}
			if l.tempDir != "" || l.cleanup != nil {
				t.Errorf("temp dir %q set, cleanup set %v", l.tempDir, l.cleanup != nil)
			}
		})
	}
}

func TestWinACLRequireFullRefused(t *testing.T) {
	f := newWinFake(`C:\src`, `C:\src\proj`)
	r := winRunner(f)
	if err := r.ready(); err != nil {
		t.Fatal(err)
	}
	f.take()
	spec := vocab.Spec{Token: winToken(t), Writable: []string{`C:\src\proj`}, Dir: `C:\src\proj`, Argv: []string{"cmd"}, RequireFull: true, Network: vocab.NetworkAllow}
	l, err := r.prepare(t.Context(), spec)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeUnavailable || e.Runner != "winacl" || !errors.Is(err, ErrUnavailable) ||
		!strings.Contains(e.Reason, "full enforcement required") || !strings.Contains(e.Reason, "Everyone") {
		t.Fatalf("err = %v, want SANDBOX_UNAVAILABLE naming the gaps", err)
	}
	if m := winMutations(f.take()); len(m) != 0 {
		t.Errorf("a refused wrap changed ACLs or files: %v", m)
	}
	if l.tempDir != "" || l.cleanup != nil {
		t.Errorf("a refused wrap left a session")
	}
}

func TestWinACLCleanup(t *testing.T) {
	cases := []struct {
		name    string
		exe     func() (string, error)
		prepErr bool
	}{
		{"after the command", winExeOK, false},
		{"prepare failed after the session was made", func() (string, error) { return "", errors.New("no launcher") }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newWinFake(`C:\src`, `C:\src\proj`)
			r := newWinACLRunner(f, winExeOK)
			if err := r.ready(); err != nil {
				t.Fatal(err)
			}
			r.exe = c.exe // ready passed; the launcher goes away before the argv is spelled
			spec := vocab.Spec{Token: winToken(t), Writable: []string{`C:\src\proj`}, Dir: `C:\src\proj`, Argv: []string{"cmd"}}
			f.take()
			l, err := r.prepare(t.Context(), spec)
			if (err != nil) != c.prepErr {
				t.Fatalf("prepare err = %v", err)
			}
			calls := f.take()
			var dir string
			for _, call := range calls {
				if call.op == "MkdirPrivate" && winParent(call.path) == winTemp+`\`+winacl.SessionDirName {
					dir = call.path
				}
			}
			sid, _ := winacl.SessionSID(dir)
			ws, _ := winacl.WriteSID(`C:\src\proj`, nil)
			made := dir != "" && winCount(calls, "WriteFile", dir+".session") == 1 && winCount(calls, "AddACE", dir) == 1
			if !made || !c.prepErr && (!f.exists(dir) || !f.exists(dir+".session") || !hasACE(f.aces(dir), sid)) {
				t.Fatalf("no session: calls %v; dir %v marker %v aces %v", calls, f.exists(dir), f.exists(dir+".session"), f.aces(dir))
			}
			w := &Wrapped{}
			if c.prepErr {
				// prepare removed the session itself.
				if l.cleanup != nil || l.tempDir != "" {
					t.Errorf("a failed prepare returned a launch: %+v", l)
				}
			} else {
				w.adopt(l)
				if err := w.Cleanup(); err != nil {
					t.Fatal(err)
				}
				calls = f.take()
			}
			if winCount(calls, "RevokeACE", dir) != 0 || winCount(calls, "RemoveAll", dir) != 1 {
				t.Errorf("cleanup calls %v: want the dir removed, and with it the session ACE (no revoke)", calls)
			}
			if f.exists(dir) || f.exists(dir+".session") || f.exists(dir+".status") {
				t.Errorf("session left behind")
			}
			if !hasACE(f.aces(`C:\src\proj`), ws) {
				t.Errorf("the standing ACE went: %v", f.aces(`C:\src\proj`))
			}
			if err := w.Cleanup(); err != nil || len(f.take()) != 0 {
				t.Errorf("second Cleanup did something (err %v)", err)
			}
		})
	}
}

func TestWinACLReadyAndRecoverOnce(t *testing.T) {
	const deadID = "0123456789abcdef0123456789abcdef"
	sessRoot := winTemp + `\` + winacl.SessionDirName
	withDead := func(f *winFake) {
		f.nodes[winacl.Key(sessRoot)] = &winNode{path: sessRoot, dir: true}
		f.nodes[winacl.Key(sessRoot+`\`+deadID)] = &winNode{path: sessRoot + `\` + deadID, dir: true}
		f.nodes[winacl.Key(sessRoot+`\`+deadID+".session")] = &winNode{path: sessRoot + `\` + deadID + ".session",
			data: []byte("sandbox-local winacl session v1\npid 7\nstart 1\n")}
	}
	noInit := func() (string, error) { return "", errors.New("launcher.Init() was not called") }
	cases := []struct {
		name    string
		tempErr error
		exe     func() (string, error)
		wantErr string
	}{
		{"ready", nil, winExeOK, ""},
		{"launcher.Init not called", nil, noInit, "launcher.Init"},
		{"no temp root", errors.New("no temp"), winExeOK, "no temp"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newWinFake()
			withDead(f)
			f.tempErr = c.tempErr
			r := newWinACLRunner(f, c.exe)
			if calls := f.take(); len(winMutations(calls)) != 0 || winCount(calls, "ReadDir", "") != 0 {
				t.Fatalf("construction did more than read: %v", calls)
			}
			err := r.ready()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("ready = %v, want %q", err, c.wantErr)
				}
				if !f.exists(sessRoot + `\` + deadID) {
					t.Errorf("an unusable runner removed sessions")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.exists(sessRoot+`\`+deadID) || f.exists(sessRoot+`\`+deadID+".session") ||
				!reflect.DeepEqual(r.st.recovered.Removed, []string{deadID}) || r.st.recoverErr != nil {
				t.Errorf("dead session not recovered: %+v, %v", r.st.recovered, r.st.recoverErr)
			}
			if err := r.ready(); err != nil {
				t.Fatal(err)
			}
			if err := r.probe(t.Context()); err != nil {
				t.Fatal(err)
			}
			spec := vocab.Spec{Token: winToken(t), Dir: `C:\Users\me`, Argv: []string{"cmd"}}
			w, _, err := winWrap(t, r, spec)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Cleanup()
			if n := winCount(f.take(), "ReadDir", sessRoot); n != 1 {
				t.Errorf("Recover listed the session root %d times, want once per provider", n)
			}
		})
	}
}

// fakeWin32 is a winacl.Win32 whose file operations go to the real file
// system, so that winacl.RunWith writes real status files; step fails.
type fakeWin32 struct{ fail string }

var errWin32 = errors.New("injected failure")

func (f fakeWin32) err(step string) error {
	if f.fail == step {
		return errWin32
	}
	return nil
}
func (f fakeWin32) ProcessToken() (winacl.Handle, error) { return 1, f.err("ProcessToken") }
func (f fakeWin32) TokenIdentity(winacl.Handle) (winacl.SID, winacl.SID, error) {
	return "S-1-5-21-1-2-3-1001", "", f.err("TokenIdentity")
}
func (f fakeWin32) RestrictToken(winacl.Handle, []winacl.SID) (winacl.Handle, error) {
	return 2, f.err("RestrictToken")
}
func (f fakeWin32) SetDefaultDACL(winacl.Handle, []winacl.SID) error { return f.err("SetDefaultDACL") }
func (f fakeWin32) CreateJob() (winacl.Handle, error)                { return 3, f.err("CreateJob") }
func (f fakeWin32) SetKillOnClose(winacl.Handle) error               { return f.err("SetKillOnClose") }
func (f fakeWin32) SetUIRestrictions(winacl.Handle, uint32) error    { return f.err("SetUIRestrictions") }
func (f fakeWin32) CreateDesktop(name string, _ []winacl.SID) (winacl.Handle, string, error) {
	return 6, `WinSta0\` + name, f.err("CreateDesktop")
}
func (f fakeWin32) CloseDesktop(winacl.Handle) error { return nil }
func (f fakeWin32) InteractiveWindowStation() bool   { return true }
func (f fakeWin32) IsFile(p string) bool             { return strings.EqualFold(p, `C:\Windows\System32\cmd.exe`) }
func (f fakeWin32) StartSuspended(winacl.Handle, winacl.ProcessStart) (winacl.Handle, winacl.Handle, error) {
	return 4, 5, f.err("StartSuspended")
}
func (f fakeWin32) AssignToJob(winacl.Handle, winacl.Handle) error { return f.err("AssignToJob") }
func (f fakeWin32) ResumeThread(winacl.Handle) error               { return f.err("ResumeThread") }
func (f fakeWin32) Terminate(winacl.Handle, uint32) error          { return nil }
func (f fakeWin32) Wait(winacl.Handle) (uint32, error)             { return 3, f.err("Wait") }
func (f fakeWin32) Close(winacl.Handle) error                      { return nil }
func (f fakeWin32) WriteFile(p string, b []byte) error             { return os.WriteFile(p, b, 0o600) }
func (f fakeWin32) RemoveFile(p string) error                      { return os.Remove(p) }

// winTempDir is t.TempDir without failing the test when the directory
// cannot be removed (Wine's unlinkat, when this runs as a Windows binary).
func winTempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "winacl-status-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// winStatus runs winacl.RunWith with step failing (none when "") and
// returns the status file it left (path on this machine) and its error.
func winStatus(t *testing.T, step string, argv0 string) (string, error) {
	t.Helper()
	ls, err := winacl.NewLaunchSpec([]string{`C:\src\proj`}, winTemp+`\sandbox-local\0123456789abcdef0123456789abcdef`,
		[]string{argv0, "/c", "exit 3"}, `C:\src\proj`, []string{`PATH=C:\Windows\System32`})
	if err != nil {
		t.Fatal(err)
	}
	ls.StatusFile = filepath.Join(winTempDir(t), "session.status")
	if err := os.WriteFile(ls.StatusFile, []byte("sandbox-local winacl-run status v1\nfatal: stale from an earlier run\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = winacl.RunWith(fakeWin32{fail: step}, ls, &strings.Builder{})
	return ls.StatusFile, err
}

// TestWinACLStatusFormat checks winacl.ReadStatusFile, which Classify
// reads a rule's StatusFile with, against the status files
// winacl's own launcher sequence writes and clears.
func TestWinACLStatusFormat(t *testing.T) {
	cases := []struct {
		step, argv0 string
		failed      bool
	}{
		{"ProcessToken", "cmd", true},
		{"RestrictToken", "cmd", true},
		{"CreateJob", "cmd", true},
		{"AssignToJob", "cmd", true},
		{"Wait", "cmd", true},
		{"", "cmd", false},        // ran: the stale status is cleared
		{"", "nosuchprog", false}, // 127 is the command's outcome
	}
	for _, c := range cases {
		t.Run(c.step+" "+c.argv0, func(t *testing.T) {
			path, err := winStatus(t, c.step, c.argv0)
			reason, recorded := winacl.ReadStatusFile(path)
			if recorded != c.failed {
				t.Fatalf("recorded %v (%q), want %v; RunWith err %v", recorded, reason, c.failed, err)
			}
			var le *winacl.LaunchError
			if c.failed && (!errors.As(err, &le) || reason != le.Error()) {
				t.Errorf("reason %q, launcher error %v", reason, err)
			}
		})
	}
	if _, ok := winacl.ReadStatusFile(filepath.Join(winTempDir(t), "missing")); ok {
		t.Error("a missing status file records a failure")
	}
}

func TestWinACLClassify(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef"
	prefix := vocab.FatalPrefix(vocab.WinACLRun, tok)
	failed, _ := winStatus(t, "RestrictToken", "cmd")
	ran, _ := winStatus(t, "", "cmd")
	other := filepath.Join(winTempDir(t), "other.status")
	if err := os.WriteFile(other, []byte("fatal: forged\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rule := func(status string) RunnerFailureRule {
		return RunnerFailureRule{Kind: RuleExitAndLine, ExitCode: 125, FatalPrefix: prefix, StatusFile: status}
	}
	sig := RunnerFailureRule{Kind: RuleSignature, Signatures: []string{"winacl-run:"}, StatusFile: failed}
	sigNone := RunnerFailureRule{Kind: RuleSignature, Signatures: []string{"winacl-run:"}, StatusFile: ran}
	cases := []struct {
		name   string
		rule   RunnerFailureRule
		code   int
		stderr string
		want   OutcomeKind
		reason string
	}{
		{"fatal line and recorded", rule(failed), 125, prefix + "create restricted token: x\n", OutcomeRunnerFailure, "create restricted token: " + errWin32.Error()},
		{"forged line, nothing recorded", rule(ran), 125, prefix + "forged\n", OutcomeChild, ""},
		{"forged line, no status file", rule(filepath.Join(winTempDir(t), "none")), 125, prefix + "forged\n", OutcomeChild, ""},
		{"forged line, foreign status content", rule(other), 125, prefix + "forged\n", OutcomeChild, ""},
		{"recorded but exit 1", rule(failed), 1, prefix + "x\n", OutcomeChild, ""},
		{"recorded but no fatal line", rule(failed), 125, "oops\n", OutcomeChild, ""},
		{"child 125", rule(ran), 125, "oops\n", OutcomeChild, ""},
		{"denied", rule(ran), 1, "Access is denied.\n", OutcomeDenied, "Access is denied"},
		{"denied, .NET", rule(ran), 1, "Access to the path 'C:\\x' is denied.\n", OutcomeDenied, "Access to the path"},
		{"forged fatal that denies", rule(ran), 125, prefix + "Access is denied\n", OutcomeDenied, "Access is denied"},
		{"no status file in the rule: as before", rule(""), 125, prefix + "x\n", OutcomeRunnerFailure, "x"},
		{"signature and recorded", sig, 1, "winacl-run: x\n", OutcomeRunnerFailure, "create restricted token: " + errWin32.Error()},
		{"signature, nothing recorded", sigNone, 1, "winacl-run: x\n", OutcomeChild, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := classify(c.rule, windowsDenialSignatures, c.code, []byte(c.stderr), false)
			if got.Kind != c.want || got.ExitCode != c.code || got.Reason != c.reason {
				t.Fatalf("classify(%d, %q) = %+v, want %s %q", c.code, c.stderr, got, c.want, c.reason)
			}
		})
	}

	// A wrap's own rule: its status file lives in the session dir, which the
	// command cannot write, so a fatal line alone is the command's outcome.
	f := newWinFake(`C:\src`, `C:\src\proj`)
	spec := vocab.Spec{Token: tok, Writable: []string{`C:\src\proj`}, Dir: `C:\src\proj`, Argv: []string{"cmd"}}
	w, _, err := winWrap(t, winRunner(f), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Cleanup()
	if o := w.Classify(125, []byte(prefix+"forged\n")); o.Kind != OutcomeChild {
		t.Errorf("forged fatal line classified %+v", o)
	}
}

// Deletes are not confined on Windows: a command can delete .git\config and
// write its own. The outcome names the change and the protected file is back,
// with its deny ACE, when the wrap is cleaned up.
func TestWinACLProtectedChangeInOutcome(t *testing.T) {
	const config = `C:\src\proj\.git\config`
	f := newWinFake(`C:\src`, `C:\src\proj`, `C:\src\proj\.git`)
	f.nodes[winacl.Key(config)] = &winNode{path: config, data: []byte("[core]\n")}
	r := winRunner(f)
	spec := vocab.Spec{Token: winToken(t), Writable: []string{`C:\src\proj`}, ReadOnly: []string{config}, Dir: `C:\src\proj`, Argv: []string{"cmd"}, Network: vocab.NetworkAllow}
	w, _, err := winWrap(t, r, spec)
	if err != nil {
		t.Fatal(err)
	}
	var gap bool
	for _, g := range w.Gaps {
		gap = gap || g.Area == "fs" && strings.HasPrefix(g.Reason, "deletes and renames are not confined")
	}
	if !gap {
		t.Errorf("the wrap does not report that deletes are not confined: %v", w.Gaps)
	}
	// Positive control: nothing changed yet.
	if got := (&Wrapped{checkProtected: w.checkProtected}).Classify(0, nil).ProtectedChanged; len(got) != 0 {
		t.Fatalf("changes before any: %v", got)
	}
	spec2 := spec
	spec2.Token = winToken(t)
	w2, _, err := winWrap(t, r, spec2)
	if err != nil {
		t.Fatal(err)
	}
	// The command deletes config and writes a new one (a new object).
	f.mu.Lock()
	f.nodes[winacl.Key(config)] = &winNode{path: config, data: []byte("[core]\n\thooksPath = C:/evil\n")}
	f.mu.Unlock()
	o := w2.Classify(0, nil)
	want := []ProtectedChange{{Path: config, Change: "replaced", Restored: true}}
	if fmt.Sprint(o.ProtectedChanged) != fmt.Sprint(want) {
		t.Errorf("outcome changes %+v, want %+v", o.ProtectedChanged, want)
	}
	if n := f.nodes[winacl.Key(config)]; n == nil || string(n.data) != "[core]\n" {
		t.Errorf("config not restored: %+v", n)
	}
	sid, _ := winacl.WriteSID(`C:\src\proj`, nil)
	if has, _ := f.HasACE(config, winacl.ACE{SID: sid, Access: winacl.AccessDenyWrite, Deny: true, Inherit: true}); !has {
		t.Errorf("restored config lacks the deny: %v", f.aces(config))
	}
	if err := w2.Cleanup(); !errors.Is(err, winacl.ErrProtectedChanged) {
		t.Errorf("Cleanup = %v, want winacl.ErrProtectedChanged", err)
	}
	if err := w.Cleanup(); err != nil {
		t.Errorf("the other wrap, which finds config restored (same content, deny in place), reports %v", err)
	}
}

// Network deny is a gap on Windows, and the wrap sets the soft offline
// environment: proxy variables at a dead local port, git's ssh at a stub
// that fails. With network allowed it sets nothing.
func TestWinACLOfflineEnvironment(t *testing.T) {
	for _, allow := range []bool{false, true} {
		f := newWinFake(`C:\src`, `C:\src\proj`)
		r := winRunner(f)
		spec := vocab.Spec{Token: winToken(t), Writable: []string{`C:\src\proj`}, Dir: `C:\src\proj`, Argv: []string{"cmd"}, Network: netMode(allow)}
		w, l, err := winWrap(t, r, spec)
		if err != nil {
			t.Fatal(err)
		}
		env := strings.Join(l.env, "\n")
		stub := w.TempDir + ".nossh.cmd"
		if allow {
			if len(l.env) != 0 || f.exists(stub) {
				t.Errorf("network allowed, yet %q (stub %v)", env, f.exists(stub))
			}
		} else {
			for _, want := range []string{"HTTPS_PROXY=http://127.0.0.1:9", "http_proxy=http://127.0.0.1:9", "NO_PROXY=",
				`GIT_SSH_COMMAND="` + strings.ReplaceAll(stub, `\`, "/") + `"`} {
				if !strings.Contains("\n"+env+"\n", "\n"+want+"\n") {
					t.Errorf("offline env lacks %q:\n%s", want, env)
				}
			}
			if !f.exists(stub) {
				t.Error("no ssh stub")
			}
			var gap bool
			for _, g := range w.Gaps {
				gap = gap || g.Area == "net" && strings.Contains(g.Reason, "dead local port")
			}
			if !gap {
				t.Errorf("network deny not reported as a gap: %v", w.Gaps)
			}
		}
		if err := w.Cleanup(); err != nil {
			t.Fatal(err)
		}
		if f.exists(stub) {
			t.Error("Cleanup left the stub")
		}
	}
}

// netMode is the wire's network mode for a test case's network switch.
func netMode(allow bool) vocab.NetMode {
	if allow {
		return vocab.NetworkAllow
	}
	return vocab.NetworkDeny
}
