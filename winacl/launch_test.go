package winacl

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// fakeWin32 records the launcher's Win32 calls and hands out handles.
type fakeWin32 struct {
	calls    []string
	next     Handle
	open     map[Handle]string
	files    map[string]bool // IsFile
	written  map[string][]byte
	removed  []string
	failStep string // method name that fails
	failErr  error
	exit     uint32
	restrict []SID
	dacl     []SID
	started  ProcessStart
	killed   bool
	resumed  bool
	noLogon  bool   // TokenIdentity finds no logon SID
	hidden   bool   // the window station is not interactive
	uiLimits uint32 // SetUIRestrictions
	desktop  string // CreateDesktop's name
	deskSIDs []SID  // CreateDesktop's DACL
	deskOpen bool   // the desktop is open
}

func newFakeWin32() *fakeWin32 {
	return &fakeWin32{next: 10, open: map[Handle]string{}, written: map[string][]byte{},
		files: map[string]bool{Key(`C:\Windows\System32\cmd.exe`): true, Key(`C:\Tools\go.exe`): true}}
}

func (w *fakeWin32) step(name string) error {
	w.calls = append(w.calls, name)
	if w.failStep == name {
		if w.failErr != nil {
			return w.failErr
		}
		return fmt.Errorf("%s: %w", name, errBoom)
	}
	return nil
}

func (w *fakeWin32) handle(kind string) Handle {
	w.next++
	w.open[w.next] = kind
	return w.next
}

func (w *fakeWin32) ProcessToken() (Handle, error) {
	if err := w.step("ProcessToken"); err != nil {
		return 0, err
	}
	return w.handle("token"), nil
}

func (w *fakeWin32) TokenIdentity(Handle) (SID, SID, error) {
	if err := w.step("TokenIdentity"); err != nil {
		return "", "", err
	}
	if w.noLogon {
		return "S-1-5-21-9-9-9-1001", "", nil
	}
	return "S-1-5-21-9-9-9-1001", "S-1-5-5-0-123456", nil
}

func (w *fakeWin32) SetUIRestrictions(_ Handle, limits uint32) error {
	w.uiLimits = limits
	return w.step("SetUIRestrictions")
}

func (w *fakeWin32) CreateDesktop(name string, sids []SID) (Handle, string, error) {
	if err := w.step("CreateDesktop"); err != nil {
		return 0, "", err
	}
	w.desktop, w.deskSIDs, w.deskOpen = name, sids, true
	return w.handle("desktop"), `WinSta0\` + name, nil
}

func (w *fakeWin32) InteractiveWindowStation() bool { return !w.hidden }

func (w *fakeWin32) CloseDesktop(h Handle) error {
	if w.open[h] != "desktop" {
		return fmt.Errorf("CloseDesktop of %d (%s)", h, w.open[h])
	}
	w.calls = append(w.calls, "CloseDesktop")
	delete(w.open, h)
	w.deskOpen = false
	return nil
}

func (w *fakeWin32) RestrictToken(_ Handle, sids []SID) (Handle, error) {
	if err := w.step("RestrictToken"); err != nil {
		return 0, err
	}
	w.restrict = sids
	return w.handle("restricted token"), nil
}

func (w *fakeWin32) SetDefaultDACL(_ Handle, sids []SID) error {
	w.dacl = sids
	return w.step("SetDefaultDACL")
}

func (w *fakeWin32) CreateJob() (Handle, error) {
	if err := w.step("CreateJob"); err != nil {
		return 0, err
	}
	return w.handle("job"), nil
}

func (w *fakeWin32) SetKillOnClose(Handle) error { return w.step("SetKillOnClose") }

func (w *fakeWin32) IsFile(p string) bool { return w.files[Key(p)] }

func (w *fakeWin32) StartSuspended(_ Handle, p ProcessStart) (Handle, Handle, error) {
	if err := w.step("StartSuspended"); err != nil {
		return 0, 0, err
	}
	w.started = p
	return w.handle("process"), w.handle("thread"), nil
}

func (w *fakeWin32) AssignToJob(Handle, Handle) error { return w.step("AssignToJob") }

func (w *fakeWin32) ResumeThread(Handle) error {
	if err := w.step("ResumeThread"); err != nil {
		return err
	}
	w.resumed = true
	return nil
}

func (w *fakeWin32) Terminate(Handle, uint32) error {
	w.killed = true
	return w.step("Terminate")
}

func (w *fakeWin32) Wait(Handle) (uint32, error) {
	if err := w.step("Wait"); err != nil {
		return 0, err
	}
	return w.exit, nil
}

func (w *fakeWin32) Close(h Handle) error {
	if _, ok := w.open[h]; !ok {
		return fmt.Errorf("close of unknown handle %d", h)
	}
	w.calls = append(w.calls, "Close "+w.open[h])
	delete(w.open, h)
	return nil
}

func (w *fakeWin32) WriteFile(p string, b []byte) error {
	if err := w.step("WriteFile"); err != nil {
		return err
	}
	w.written[p] = b
	return nil
}

func (w *fakeWin32) RemoveFile(p string) error {
	if err := w.step("RemoveFile"); err != nil {
		return err
	}
	w.removed = append(w.removed, p)
	return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrNotExist}
}

func (w *fakeWin32) index(call string) int {
	for i, c := range w.calls {
		if c == call {
			return i
		}
	}
	return -1
}

func testSpec(t *testing.T) LaunchSpec {
	t.Helper()
	spec, err := NewLaunchSpec([]string{`C:\src\proj`, `D:\cache`}, testTemp+`\sandbox-local\`+strings.Repeat("0f", 16),
		[]string{"cmd", "/c", "echo hi"}, `C:\src\proj`, []string{`PATH=C:\Windows\System32;C:\Tools`, "PATHEXT=.COM;.EXE"})
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestRunSequence(t *testing.T) {
	w := newFakeWin32()
	w.exit = 3
	spec := testSpec(t)
	var stderr bytes.Buffer
	code, err := RunWith(w, spec, &stderr)
	if err != nil || code != 3 {
		t.Fatalf("RunWith = %d, %v", code, err)
	}
	want := []string{
		"RemoveFile", "ProcessToken", "TokenIdentity", "RestrictToken", "SetDefaultDACL",
		"CreateJob", "SetKillOnClose", "SetUIRestrictions", "CreateDesktop", "StartSuspended", "AssignToJob", "ResumeThread", "Wait",
		"Close thread", "Close process", "Close job", "Close restricted token", "Close token", "CloseDesktop",
	}
	if strings.Join(w.calls, ",") != strings.Join(want, ",") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(w.calls, "\n"), strings.Join(want, "\n"))
	}
	if len(w.open) != 0 {
		t.Errorf("handles left open: %v", w.open)
	}
	if w.index("CreateJob") > w.index("ResumeThread") || w.index("SetKillOnClose") > w.index("StartSuspended") ||
		w.index("AssignToJob") > w.index("ResumeThread") {
		t.Error("the process must be in the kill-on-close job before it resumes")
	}
	wantSIDs := append(append([]SID(nil), spec.WriteSIDs...), spec.SessionSID, SIDEveryone, "S-1-5-5-0-123456")
	if fmt.Sprint(w.restrict) != fmt.Sprint(wantSIDs) {
		t.Errorf("restricting SIDs %v, want %v", w.restrict, wantSIDs)
	}
	for _, s := range w.restrict {
		if s == "S-1-5-21-9-9-9-1001" {
			t.Error("the user SID must never restrict: everything the user can write would be writable")
		}
	}
	if fmt.Sprint(w.dacl) != fmt.Sprint([]SID{"S-1-5-21-9-9-9-1001", SIDSystem, spec.SessionSID}) {
		t.Errorf("default DACL %v", w.dacl)
	}
	if w.started.App != `C:\Windows\System32\cmd.exe` || w.started.CommandLine != `cmd /c "echo hi"` || w.started.Dir != `C:\src\proj` {
		t.Errorf("started %+v", w.started)
	}
	if len(w.written) != 0 {
		t.Errorf("status written on success: %v", w.written)
	}
	if len(w.removed) != 1 || w.removed[0] != spec.StatusFile {
		t.Errorf("status file not cleared first: %v", w.removed)
	}
}

func TestRunExitCodes(t *testing.T) {
	for _, exit := range []uint32{0, 1, 2, 125, 126, 127, 255, 0xC0000005, 0xFFFFFFFF} {
		w := newFakeWin32()
		w.exit = exit
		code, err := RunWith(w, testSpec(t), &bytes.Buffer{})
		if err != nil || uint32(code) != exit {
			t.Errorf("exit %#x: RunWith = %#x, %v", exit, code, err)
		}
		if len(w.written) != 0 {
			t.Errorf("exit %d: a child outcome was recorded as a launcher failure", exit)
		}
	}
}

func TestRunFailures(t *testing.T) {
	for _, tc := range []struct {
		step       string
		started    bool // the process exists when the step fails
		reportStep string
	}{
		{"RemoveFile", false, "clear status file"},
		{"ProcessToken", false, "open process token"},
		{"TokenIdentity", false, "read token identity"},
		{"RestrictToken", false, "create restricted token"},
		{"SetDefaultDACL", false, "set default DACL"},
		{"CreateJob", false, "create job object"},
		{"SetKillOnClose", false, "set job kill-on-close"},
		{"SetUIRestrictions", false, "set job UI restrictions"},
		{"CreateDesktop", false, "create private desktop"},
		{"StartSuspended", false, "create process"},
		{"AssignToJob", true, "assign process to job"},
		{"ResumeThread", true, "resume process"},
		{"Wait", true, "wait for process"},
	} {
		t.Run(tc.step, func(t *testing.T) {
			w := newFakeWin32()
			w.failStep = tc.step
			spec := testSpec(t)
			code, err := RunWith(w, spec, &bytes.Buffer{})
			var le *LaunchError
			if code != vocab.FatalExit || !errors.As(err, &le) || le.Step != tc.reportStep || !errors.Is(err, errBoom) {
				t.Fatalf("RunWith = %d, %v; want %d and a LaunchError at %q", code, err, vocab.FatalExit, tc.reportStep)
			}
			if len(w.open) != 0 {
				t.Errorf("handles left open: %v", w.open)
			}
			if w.killed != tc.started {
				t.Errorf("terminated = %v, want %v", w.killed, tc.started)
			}
			if tc.step == "AssignToJob" && w.resumed {
				t.Error("resumed a process that is not in the job")
			}
			reason, failed := parseStatus(w.written[spec.StatusFile])
			if !failed || !strings.HasPrefix(reason, tc.reportStep+": ") {
				t.Errorf("status file %q", w.written[spec.StatusFile])
			}
		})
	}
}

func TestRunStatusWriteFailure(t *testing.T) {
	w := newFakeWin32()
	w.failStep = "WriteFile"
	spec := testSpec(t)
	spec.Argv = nil // invalid: fails at the first step
	code, err := RunWith(w, spec, &bytes.Buffer{})
	var le *LaunchError
	if code != vocab.FatalExit || !errors.As(err, &le) || le.StatusErr == nil || !strings.Contains(err.Error(), "recording the failure failed") {
		t.Fatalf("RunWith = %d, %v", code, err)
	}
	if len(w.calls) != 1 {
		t.Errorf("an invalid spec reached Win32: %v", w.calls)
	}
}

func TestRunChildOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv string
		err  error
		want int
	}{
		{"not on PATH", "nosuch", nil, vocab.ExitNotFound},
		{"not found at start", "cmd", &fs.PathError{Op: "CreateProcessAsUserW", Err: fs.ErrNotExist}, vocab.ExitNotFound},
		{"permission", "cmd", fs.ErrPermission, vocab.ExitNotExecutable},
		{"bad image", "cmd", fmt.Errorf("x: %w", errNotExecutable), vocab.ExitNotExecutable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newFakeWin32()
			if tc.err != nil {
				w.failStep, w.failErr = "StartSuspended", tc.err
			}
			spec := testSpec(t)
			spec.Argv = []string{tc.argv}
			var stderr bytes.Buffer
			code, err := RunWith(w, spec, &stderr)
			if err != nil || code != tc.want {
				t.Fatalf("RunWith = %d, %v; want %d", code, err, tc.want)
			}
			if !strings.HasPrefix(stderr.String(), LauncherName+": "+tc.argv+": ") || strings.Contains(stderr.String(), "fatal") {
				t.Errorf("stderr %q", stderr.String())
			}
			if len(w.written) != 0 || len(w.open) != 0 {
				t.Errorf("status %v, open %v", w.written, w.open)
			}
		})
	}
}

func TestLaunchSpecMatchesSession(t *testing.T) {
	f := newFakeSystem(testTemp)
	f.mkdirAll(testWS)
	f.mkdirAll(`D:\cache`)
	f.long[Key(`C:\src\PROJ~1`)] = testWS
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{WriteRoots: []string{`C:\src\PROJ~1`, `d:\cache\`}})
	if err != nil {
		t.Fatal(err)
	}
	// The launcher only sees the canonical paths the provider passes on.
	var roots []string
	for _, r := range s.WriteRoots {
		roots = append(roots, r.Path)
	}
	spec, err := NewLaunchSpec(roots, s.Dir, []string{"x"}, testWS, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(spec.WriteSIDs) != fmt.Sprint(s.writeSIDs()) || spec.SessionSID != s.SID || spec.StatusFile != s.StatusFile() {
		t.Errorf("launcher spec %+v does not match session %+v", spec, s)
	}
	for _, bad := range []LaunchSpec{
		{SessionSID: "S-1-5-21-1-2-3-4", Dir: `C:\`},
		{SessionSID: "nope", Argv: []string{"x"}, Dir: `C:\`},
		{SessionSID: "S-1-5-21-1-2-3-4", WriteSIDs: []SID{""}, Argv: []string{"x"}, Dir: `C:\`},
		{SessionSID: "S-1-5-21-1-2-3-4", Argv: []string{`a"b`}, Dir: `C:\`},
		{SessionSID: "S-1-5-21-1-2-3-4", Argv: []string{"x", "a\x00"}, Dir: `C:\`},
		{SessionSID: "S-1-5-21-1-2-3-4", Argv: []string{"x"}, Dir: `rel`},
		{SessionSID: "S-1-5-21-1-2-3-4", Argv: []string{"x"}, Dir: `C:\`, Env: []string{"NOEQUALS"}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) passed", bad)
		}
	}
	if _, err := NewLaunchSpec([]string{"rel"}, s.Dir, []string{"x"}, testWS, nil); err == nil {
		t.Error("relative write root accepted")
	}
}

func TestResolveProgram(t *testing.T) {
	files := map[string]bool{}
	for _, p := range []string{`C:\Windows\System32\cmd.exe`, `C:\Tools\go.exe`, `C:\Tools\build.bat`,
		`C:\src\proj\bin\tool.exe`, `C:\src\proj\git.exe`, `C:\Tools\script.py`, `C:\Tools\noext`} {
		files[Key(p)] = true
	}
	isFile := func(p string) bool { return files[Key(p)] }
	env := []string{`Path=C:\Windows\System32;"C:\Tools";relative\dir;`, "PATHEXT=.COM;.EXE;.BAT"}
	for _, tc := range []struct{ argv0, want string }{
		{"cmd", `C:\Windows\System32\cmd.exe`},
		{"CMD.EXE", `C:\Windows\System32\CMD.EXE`},
		{"go", `C:\Tools\go.exe`},
		{"build", `C:\Tools\build.bat`},
		{"script.py", `C:\Tools\script.py`},
		{"noext", ""}, // no extension: only PATHEXT candidates
		{"git", ""},   // in the working directory only: never searched
		{`bin\tool`, `C:\src\proj\bin\tool.exe`},
		{`.\git.exe`, `C:\src\proj\git.exe`},
		{`C:/Tools/go.exe`, `C:\Tools\go.exe`},
		{`C:\Tools\go`, `C:\Tools\go.exe`},
		{"missing", ""},
	} {
		got, ok := resolveProgram(tc.argv0, `C:\src\proj`, env, isFile)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("resolveProgram(%q) = %q, %v; want %q", tc.argv0, got, ok, tc.want)
		}
	}
}

// parseCommandLine is the C runtime's argv splitting (CommandLineToArgvW
// rules for arguments after the first), to check composeCommandLine.
func parseCommandLine(s string) []string {
	var args []string
	var cur strings.Builder
	inQuote, have := false, false
	// The program name: up to the first unquoted space, quotes removed.
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			inQuote = !inQuote
			continue
		}
		if !inQuote && (c == ' ' || c == '\t') {
			break
		}
		cur.WriteByte(c)
	}
	args = append(args, cur.String())
	cur.Reset()
	inQuote = false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			if i < len(s) && s[i] == '"' {
				cur.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					cur.WriteByte('"')
				} else {
					inQuote = !inQuote
				}
			} else {
				cur.WriteString(strings.Repeat(`\`, n))
				i--
			}
			have = true
		case c == '"':
			inQuote = !inQuote
			have = true
		case !inQuote && (c == ' ' || c == '\t'):
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		args = append(args, cur.String())
	}
	return args
}

func TestComposeCommandLine(t *testing.T) {
	for _, argv := range [][]string{
		{"cmd"},
		{`C:\Program Files\x.exe`, "a"},
		{"x", ""},
		{"x", "a b", "c\td"},
		{"x", `a"b`, `"`, `\`, `\\`, `a\`, `a\\`, `a\"b`, `a\\"b`, `"quoted"`},
		{"x", `C:\path with space\`, `C:\dir\`},
		{"x", "line\nbreak"},
	} {
		line := composeCommandLine(argv)
		if got := parseCommandLine(line); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", argv) {
			t.Errorf("composeCommandLine(%q) = %s, parses back as %q", argv, line, got)
		}
	}
}

// The command's job gets every UI restriction and the command its own
// desktop, so it cannot reach the user's windows, clipboard or DDE (the
// shell's "open this URL" path) from the shared desktop.
func TestRunUIRestrictionsAndPrivateDesktop(t *testing.T) {
	w := newFakeWin32()
	spec := testSpec(t)
	if code, err := RunWith(w, spec, &bytes.Buffer{}); err != nil || code != 0 {
		t.Fatalf("RunWith = %d, %v", code, err)
	}
	const all = 0x01 | 0x02 | 0x04 | 0x08 | 0x10 | 0x20 | 0x40 | 0x80 // JOB_OBJECT_UILIMIT_*
	if w.uiLimits != all || UILimits != all {
		t.Errorf("UI limits %#x (UILimits %#x), want %#x", w.uiLimits, UILimits, all)
	}
	if w.index("SetUIRestrictions") > w.index("AssignToJob") || w.index("CreateDesktop") > w.index("StartSuspended") {
		t.Error("the job's UI limits and the desktop must exist before the process is started and assigned")
	}
	if w.desktop != DesktopName(spec.SessionSID) || !strings.HasPrefix(w.desktop, "sandbox-local-") || strings.ContainsAny(w.desktop, `\/`) {
		t.Errorf("desktop %q", w.desktop)
	}
	if w.started.Desktop != `WinSta0\`+w.desktop {
		t.Errorf("started on desktop %q, want the private one", w.started.Desktop)
	}
	if fmt.Sprint(w.deskSIDs) != fmt.Sprint([]SID{"S-1-5-21-9-9-9-1001", SIDSystem, spec.SessionSID, "S-1-5-5-0-123456"}) {
		t.Errorf("desktop DACL %v", w.deskSIDs)
	}
	for _, s := range w.deskSIDs {
		if s == SIDEveryone {
			t.Error("the private desktop grants Everyone")
		}
	}
	if w.deskOpen || w.calls[len(w.calls)-1] != "CloseDesktop" {
		t.Errorf("the desktop is closed last: %v", w.calls)
	}
	other := testSpec(t)
	other.SessionSID = "S-1-5-21-1-2-3-4"
	if DesktopName(other.SessionSID) == DesktopName(spec.SessionSID) {
		t.Error("two sessions share a desktop")
	}
}

// A token without a logon SID (SSH, service logons) still runs the command:
// without the logon SID among the restricting SIDs, on a private desktop
// granting the session SID, which is one.
func TestRunWithoutLogonSID(t *testing.T) {
	w := newFakeWin32()
	w.noLogon = true
	spec := testSpec(t)
	if code, err := RunWith(w, spec, &bytes.Buffer{}); err != nil || code != 0 {
		t.Fatalf("RunWith = %d, %v", code, err)
	}
	want := append(append([]SID(nil), spec.WriteSIDs...), spec.SessionSID, SIDEveryone)
	if fmt.Sprint(w.restrict) != fmt.Sprint(want) {
		t.Errorf("restricting SIDs %v, want %v", w.restrict, want)
	}
	if fmt.Sprint(w.deskSIDs) != fmt.Sprint([]SID{"S-1-5-21-9-9-9-1001", SIDSystem, spec.SessionSID}) {
		t.Errorf("desktop DACL %v", w.deskSIDs)
	}
	if !w.resumed {
		t.Error("the command did not run")
	}
}

// A batch file runs through %SystemRoot%\System32\cmd.exe with cmd's
// quoting, not the C runtime's.
func TestRunBatchFile(t *testing.T) {
	w := newFakeWin32()
	w.files[Key(`C:\Tools\npm.cmd`)] = true
	spec := testSpec(t)
	spec.Env = []string{`PATH=C:\Tools`, "PATHEXT=.COM;.EXE;.BAT;.CMD", `SystemRoot=C:\Windows`, `ComSpec=C:\evil.exe`}
	spec.Argv = []string{"npm", "install", "a&b"}
	if code, err := RunWith(w, spec, &bytes.Buffer{}); err != nil || code != 0 {
		t.Fatalf("RunWith = %d, %v", code, err)
	}
	if w.started.App != `C:\Windows\System32\cmd.exe` {
		t.Errorf("app %q, want cmd.exe from SystemRoot (never ComSpec)", w.started.App)
	}
	if want := `cmd.exe /e:ON /v:OFF /d /c ""C:\Tools\npm.cmd" install "a&b""`; w.started.CommandLine != want {
		t.Errorf("command line %s, want %s", w.started.CommandLine, want)
	}
	// An argument with a line break cannot be passed: a launcher failure.
	w = newFakeWin32()
	w.files[Key(`C:\Tools\npm.cmd`)] = true
	spec.Argv = []string{"npm", "a\nb"}
	var le *LaunchError
	if code, err := RunWith(w, spec, &bytes.Buffer{}); code != vocab.FatalExit || !errors.As(err, &le) || !errors.Is(err, errBatchArg) {
		t.Errorf("line break: RunWith = %d, %v", code, err)
	}
	if w.index("StartSuspended") >= 0 {
		t.Error("started a batch file with an unsafe argument")
	}
}

func TestComposeBatchCommandLine(t *testing.T) {
	const pre = `cmd.exe /e:ON /v:OFF /d /c ""C:\t\x.cmd"`
	for _, tc := range []struct {
		args []string
		want string // after pre, before the closing quote
	}{
		{nil, ``},
		{[]string{"install", "-g", "a/b@1.2.3", `C:\x\y`, "#$*+-./:?@_"}, ` install -g a/b@1.2.3 C:\x\y #$*+-./:?@_`},
		{[]string{""}, ` ""`},
		{[]string{"a b"}, ` "a b"`},
		{[]string{"a&b", "a|b", "a>b", "a<b", "a^b", "(a)", "a,b", "a;b", "a=b", "a!b"},
			` "a&b" "a|b" "a>b" "a<b" "a^b" "(a)" "a,b" "a;b" "a=b" "a!b"`},
		{[]string{`a"b`}, ` "a""b"`},
		{[]string{`"&calc&"`}, ` """&calc&"""`},
		{[]string{`a\"b`}, ` "a\\""b"`},
		{[]string{`C:\dir\`}, ` "C:\dir\\"`},
		{[]string{`%PATH%`}, ` "%%cd:~,%PATH%%cd:~,%"`},
		{[]string{"tab\there"}, " \"tab\there\""},
		{[]string{"日本"}, ` 日本`},
	} {
		got, err := composeBatchCommandLine(`C:\t\x.cmd`, tc.args)
		if want := pre + tc.want + `"`; err != nil || got != want {
			t.Errorf("args %q:\n got %s (%v)\nwant %s", tc.args, got, err, want)
		}
	}
	for _, bad := range [][]string{{"a\nb"}, {"a\rb"}} {
		if _, err := composeBatchCommandLine(`C:\t\x.cmd`, bad); !errors.Is(err, errBatchArg) {
			t.Errorf("args %q: err %v, want errBatchArg", bad, err)
		}
	}
	for _, script := range []string{`C:\t\"x.cmd`, `C:\t\`} {
		if _, err := composeBatchCommandLine(script, nil); !errors.Is(err, errBatchArg) {
			t.Errorf("script %q: err %v, want errBatchArg", script, err)
		}
	}
}

// A hidden window station (a service, SSH in session 0) may refuse new
// desktops and shows no user's desktop: there the command runs on the
// inherited desktop, still under the job's UI limits. On an interactive
// one a desktop that cannot be made is a launcher failure (TestRunFailures).
func TestRunHiddenWindowStationWithoutDesktop(t *testing.T) {
	w := newFakeWin32()
	w.hidden, w.noLogon, w.failStep = true, true, "CreateDesktop"
	code, err := RunWith(w, testSpec(t), &bytes.Buffer{})
	if err != nil || code != 0 || !w.resumed {
		t.Fatalf("RunWith = %d, %v (resumed %v)", code, err, w.resumed)
	}
	if w.started.Desktop != "" || w.uiLimits != UILimits {
		t.Errorf("desktop %q, UI limits %#x", w.started.Desktop, w.uiLimits)
	}
	if len(w.open) != 0 || w.index("CloseDesktop") >= 0 {
		t.Errorf("open %v, calls %v", w.open, w.calls)
	}
}
