package winacl

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

const testWS = `C:\src\proj`

func hasACE(aces []ACE, want ACE) bool {
	for _, a := range aces {
		if a == want {
			return true
		}
	}
	return false
}

func TestStandingACEAddedOnce(t *testing.T) {
	f := newFakeSystem(testTemp)
	f.mkdirAll(testWS)
	m := newTestManager(t, f)
	sid, _ := WriteSID(testWS, nil)
	grant := ACE{SID: sid, Access: AccessModify, Inherit: true}

	s1, err := m.Prepare(Request{WriteRoots: []string{testWS}})
	if err != nil {
		t.Fatal(err)
	}
	first := callsOn(f.take(), testWS)
	if count(first, "HasACE") != 1 || count(first, "AddACE") != 1 {
		t.Fatalf("first run on the workspace:\n%s", joinCalls(first))
	}
	if !hasACE(f.aces(testWS), grant) {
		t.Fatalf("standing ACE missing: %v", f.aces(testWS))
	}
	if err := s1.Cleanup(); err != nil {
		t.Fatal(err)
	}
	f.take()

	// Second run, another spelling of the same workspace: one read, no write.
	s2, err := m.Prepare(Request{WriteRoots: []string{`c:/SRC/Proj/`}})
	if err != nil {
		t.Fatal(err)
	}
	second := callsOn(f.take(), testWS)
	if len(second) != 1 || second[0].Op != "HasACE" {
		t.Fatalf("second run on the workspace, want exactly one DACL read:\n%s", joinCalls(second))
	}
	if s2.writeSIDs()[0] != sid {
		t.Errorf("second run SID %s, first %s", s2.writeSIDs()[0], sid)
	}
	if n := len(f.aces(testWS)); n != 1 {
		t.Errorf("%d ACEs on the workspace, want 1", n)
	}
	_ = s2.Cleanup()
}

func TestSessionACEAddedAndRevoked(t *testing.T) {
	f := newFakeSystem(testTemp)
	f.mkdirAll(testWS)
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{WriteRoots: []string{testWS}})
	if err != nil {
		t.Fatal(err)
	}
	calls := f.take()
	if !Within(s.Dir, testTemp+`\`+SessionDirName) || !isSessionID(s.ID) || !strings.HasSuffix(s.Dir, s.ID) {
		t.Fatalf("session dir %s (id %s) not under the session root", s.Dir, s.ID)
	}
	if want, _ := SessionSID(s.Dir); s.SID != want {
		t.Errorf("session SID %s, SessionSID(dir) %s", s.SID, want)
	}
	if s.SID == s.writeSIDs()[0] {
		t.Error("session SID equals the write SID")
	}
	sessACE := ACE{SID: s.SID, Access: AccessModify, Inherit: true}
	if !hasACE(f.aces(s.Dir), sessACE) {
		t.Fatalf("session ACE missing on %s: %v", s.Dir, f.aces(s.Dir))
	}
	// Marker before dir before ACE; both dirs private.
	var order []string
	for _, c := range mutations(calls) {
		order = append(order, c.Op+" "+c.Path)
	}
	want := []string{
		"AddACE " + testWS,
		"MkdirPrivate " + testTemp + `\sandbox-local`,
		"WriteFile " + s.Dir + ".session",
		"MkdirPrivate " + s.Dir,
		"AddACE " + s.Dir,
		"WriteFile " + s.Dir + ".nossh.cmd", // network denied: the failing ssh stub
	}
	if strings.Join(order, "\n") != strings.Join(want, "\n") {
		t.Errorf("mutations:\n%s\nwant:\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
	marker, _ := f.ReadFile(s.Dir + ".session")
	if owner, known, ok := parseMarker(marker); !known || !ok || owner != f.self {
		t.Errorf("marker %q: owner %v", marker, owner)
	}

	// A second session on the same workspace: another dir, another SID.
	s2, err := m.Prepare(Request{WriteRoots: []string{testWS}})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Dir == s.Dir || s2.SID == s.SID || s2.writeSIDs()[0] != s.writeSIDs()[0] {
		t.Errorf("two sessions: %s %s / %s %s", s.Dir, s.SID, s2.Dir, s2.SID)
	}
	f.take()

	if err := s.Cleanup(); err != nil {
		t.Fatal(err)
	}
	calls = f.take()
	// The dir goes first, and with it the session ACE: revoking it first
	// would rewrite the DACL of every leftover file (tens of seconds on a
	// large temp dir) for nothing.
	if len(calls) == 0 || calls[0].Op != "RemoveAll" || Key(calls[0].Path) != Key(s.Dir) {
		t.Errorf("Cleanup must remove the dir first:\n%s", joinCalls(calls))
	}
	if n := count(calls, "RevokeACE"); n != 0 {
		t.Errorf("Cleanup revoked the session ACE although the dir went (%d revokes):\n%s", n, joinCalls(calls))
	}
	if f.exists(s.Dir) || f.exists(s.Dir+".session") {
		t.Error("Cleanup left the dir or the marker")
	}
	if !f.exists(s2.Dir) {
		t.Error("Cleanup of one session removed the other")
	}
	// Cleanup leaves the standing ACE.
	if !hasACE(f.aces(testWS), ACE{SID: s.writeSIDs()[0], Access: AccessModify, Inherit: true}) {
		t.Error("Cleanup removed the standing ACE")
	}
	for _, c := range calls {
		if Key(c.Path) == Key(testWS) {
			t.Errorf("Cleanup touched the workspace: %v", c)
		}
	}
	// Idempotent.
	if err := s.Cleanup(); err != nil || len(f.take()) != 0 {
		t.Errorf("second Cleanup: %v", err)
	}
	_ = s2.Cleanup()
}

func TestReadOnlyModeHasOnlyTheSession(t *testing.T) {
	f := newFakeSystem(testTemp)
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{ReadOnlySubpaths: []string{".git/hooks"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.writeSIDs()) != 0 {
		t.Errorf("write SIDs in read-only mode: %v", s.writeSIDs())
	}
	for _, c := range mutations(f.take()) {
		if !Within(c.Path, testTemp+`\sandbox-local`) {
			t.Errorf("read-only mode changed %s", c.Path)
		}
	}
	spec, err := s.LaunchSpec([]string{"dir"}, `C:\`, TempEnv([]string{"PATH=C:\\Windows", "tmp=C:\\old", "Temp=C:\\old"}, s.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if got := RestrictingSIDs(spec, ""); len(got) != 2 || got[0] != s.SID || got[1] != SIDEveryone {
		t.Errorf("restricting SIDs %v", got)
	}
	if getenv(spec.Env, "TMP", "") != s.Dir || getenv(spec.Env, "TEMP", "") != s.Dir || strings.Contains(strings.Join(spec.Env, ";"), `C:\old`) {
		t.Errorf("env %v", spec.Env)
	}
}

func TestProtectedPathsGetStandingDenies(t *testing.T) {
	f := newFakeSystem(testTemp)
	f.mkdirAll(testWS + `\.git\hooks`)
	f.mkdirAll(testWS + `\.git\modules\lib\hooks`)
	f.writeFileSetup(testWS+`\.git\config`, nil)
	m := newTestManager(t, f)
	sid, _ := WriteSID(testWS, nil)
	req := Request{
		WriteRoots:       []string{testWS},
		ReadOnlySubpaths: []string{".GiT/HOOKS", `.git\config::$DATA`, ".git/config.worktree", testWS + `\.git\modules\lib\hooks`},
	}
	s, err := m.Prepare(req)
	if err != nil {
		t.Fatal(err)
	}
	f.take()
	deny := ACE{SID: sid, Access: AccessDenyWrite, Deny: true, Inherit: true}
	rename := ACE{SID: sid, Access: AccessDenyRename, Deny: true}
	for path, want := range map[string]ACE{
		testWS + `\.git\hooks`:             deny,
		testWS + `\.git\config`:            deny,
		testWS + `\.git\modules\lib\hooks`: deny,
		testWS + `\.git`:                   rename,
		testWS + `\.git\modules`:           rename,
		testWS + `\.git\modules\lib`:       rename,
	} {
		if !hasACE(f.aces(path), want) {
			t.Errorf("%s: want %v, have %v", path, want, f.aces(path))
		}
	}
	if hasACE(f.aces(testWS+`\.git`), deny) {
		t.Error(".git itself must not be made read-only, only un-renamable")
	}
	var gap bool
	for _, g := range s.Gaps {
		if strings.Contains(g.Reason, `.git\config.worktree does not exist`) {
			gap = true
		}
	}
	if !gap {
		t.Errorf("no gap for the missing protected path: %v", s.Gaps)
	}
	_ = s.Cleanup()
	f.take()

	// Second run: reads only.
	s, err = m.Prepare(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range mutations(f.take()) {
		if !Within(c.Path, testTemp) {
			t.Errorf("second run changed %s (%v)", c.Path, c.ACE)
		}
	}
	_ = s.Cleanup()
}

func TestPrepareFailureLeavesNoSession(t *testing.T) {
	for _, op := range []string{"MkdirPrivate", "AddACE", "WriteFile"} {
		t.Run(op, func(t *testing.T) {
			f := newFakeSystem(testTemp)
			m := newTestManager(t, f)
			f.mkdirAll(testTemp + `\sandbox-local`)
			f.failOn[op] = errBoom
			if _, err := m.Prepare(Request{}); !errors.Is(err, errBoom) {
				t.Fatalf("Prepare: %v", err)
			}
			if errors.Is(errBoom, ErrInvalidPolicy) {
				t.Fatal("a machine failure must not read as a policy error")
			}
			delete(f.failOn, op)
			if names := f.names(testTemp + `\sandbox-local`); len(names) != 0 {
				t.Errorf("left behind: %v", names)
			}
		})
	}
}

func TestStandingACEFailureIsNotAPolicyError(t *testing.T) {
	f := newFakeSystem(testTemp)
	f.mkdirAll(testWS)
	m := newTestManager(t, f)
	f.failOn["HasACE"] = errBoom
	if _, err := m.Prepare(Request{WriteRoots: []string{testWS}}); !errors.Is(err, errBoom) || errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("Prepare: %v", err)
	}
	f.failOn = map[string]error{"AddACE": errBoom}
	if _, err := m.Prepare(Request{WriteRoots: []string{testWS}}); !errors.Is(err, errBoom) || errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("Prepare: %v", err)
	}
}

func TestCleanupKeepsMarkerWhenDirStays(t *testing.T) {
	f := newFakeSystem(testTemp)
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{})
	if err != nil {
		t.Fatal(err)
	}
	f.take()
	f.failOn["RemoveAll"] = errBoom
	if err := s.Cleanup(); !errors.Is(err, errBoom) {
		t.Fatalf("Cleanup: %v", err)
	}
	// The removal failed, so the leftovers lose the session ACE.
	calls := f.take()
	var order []string
	for _, c := range calls {
		if c.Op == "RemoveAll" || c.Op == "RevokeACE" {
			order = append(order, c.Op)
		}
	}
	if strings.Join(order, ",") != "RemoveAll,RevokeACE" {
		t.Errorf("failed removal: want RemoveAll then RevokeACE, got:\n%s", joinCalls(calls))
	}
	if hasACE(f.aces(s.Dir), ACE{SID: s.SID, Access: AccessModify, Inherit: true}) {
		t.Error("the leftover dir still grants the session SID")
	}
	if !f.exists(s.Dir + ".session") {
		t.Error("marker removed although the dir stayed: recovery could never retry")
	}
	delete(f.failOn, "RemoveAll")
	if err := s.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if f.exists(s.Dir) || f.exists(s.Dir+".session") {
		t.Error("retry left files")
	}
}

// seedSession writes a session as a process with identity owner would.
func seedSession(t *testing.T, f *fakeSystem, owner ProcessID) *Session {
	t.Helper()
	saved := f.self
	f.self = owner
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{})
	f.self = saved
	if err != nil {
		t.Fatal(err)
	}
	f.take()
	return s
}

func TestRecoverRemovesOnlyDeadSessions(t *testing.T) {
	f := newFakeSystem(testTemp)
	root := testTemp + `\sandbox-local`
	f.procs[200] = 2000 // alive
	f.procs[400] = 4001 // pid reused: the marker says 4000
	live := seedSession(t, f, ProcessID{PID: 200, Start: 2000})
	self := seedSession(t, f, f.self)
	dead := seedSession(t, f, ProcessID{PID: 300, Start: 3000})
	reused := seedSession(t, f, ProcessID{PID: 400, Start: 4000})
	future := seedSession(t, f, ProcessID{PID: 500, Start: 5000})
	f.nodes[Key(future.Dir+".session")].data = []byte("sandbox-local winacl session v9\nwhatever\n")
	garbled := seedSession(t, f, ProcessID{PID: 600, Start: 6000})
	f.nodes[Key(garbled.Dir+".session")].data = []byte("sandbox-local winacl session v1\npid x\n")
	unknown := seedSession(t, f, ProcessID{PID: 700, Start: 7000})
	f.rdState[Key(unknown.Dir+".session")] = errBoom // cannot tell: keep
	orphan := root + `\` + strings.Repeat("ab", 16)
	f.mkdirAll(orphan) // dir without a marker
	f.writeFileSetup(orphan+".status", formatStatus("x"))
	f.writeFileSetup(dead.Dir+".session.tmp-0011", []byte("partial"))
	f.writeFileSetup(dead.Dir+`\file.txt`, []byte("x"))
	f.writeFileSetup(root+`\notes.txt`, []byte("not ours"))
	writing := root + `\` + strings.Repeat("cd", 16) + ".session.tmp-99" // a marker being written
	f.writeFileSetup(writing, []byte("sandbox-local"))

	m := newTestManager(t, f)
	rec, err := m.Recover()
	if !errors.Is(err, errBoom) {
		t.Errorf("Recover: %v, want the unreadable marker reported", err)
	}
	calls := f.take()

	wantRemoved := map[string]bool{dead.ID: true, reused.ID: true, garbled.ID: true, strings.Repeat("ab", 16): true}
	if len(rec.Removed) != len(wantRemoved) {
		t.Errorf("removed %v", rec.Removed)
	}
	for _, id := range rec.Removed {
		if !wantRemoved[id] {
			t.Errorf("removed %s", id)
		}
	}
	for _, s := range []*Session{live, self, future, unknown} {
		if !f.exists(s.Dir) || !f.exists(s.Dir+".session") || !hasACE(f.aces(s.Dir), ACE{SID: s.SID, Access: AccessModify, Inherit: true}) {
			t.Errorf("live session %s was touched", s.ID)
		}
	}
	for _, s := range []*Session{dead, reused, garbled} {
		if f.exists(s.Dir) || f.exists(s.Dir+".session") {
			t.Errorf("dead session %s left behind", s.ID)
		}
	}
	if f.exists(orphan) || f.exists(orphan+".status") || f.exists(dead.Dir+".session.tmp-0011") {
		t.Error("orphan entries left behind")
	}
	if !f.exists(root+`\notes.txt`) || !f.exists(writing) {
		t.Error("Recover removed something that is not a dead session")
	}
	// Every mutation is on a dead session's entries; each dead session's
	// dir is removed, and its ACE goes with it (no revoke when the removal
	// succeeds).
	for _, c := range mutations(calls) {
		ok := false
		for id := range wantRemoved {
			if Within(c.Path, root+`\`+id) || strings.HasPrefix(Key(c.Path), Key(root+`\`+id+".")) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("Recover changed %s %s", c.Op, c.Path)
		}
	}
	for _, s := range []*Session{dead, reused} {
		if winRemoved := len(callsOn(calls, s.Dir)); winRemoved == 0 {
			t.Errorf("%s not removed", s.ID)
		}
		for _, c := range calls {
			if c.Op == "RevokeACE" && Key(c.Path) == Key(s.Dir) {
				t.Errorf("%s: ACE revoked although the dir was removed", s.ID)
			}
		}
	}

	// Once its marker reads, the session whose owner (pid 700) is not
	// running goes too, and nothing else.
	delete(f.rdState, Key(unknown.Dir+".session"))
	rec, err = m.Recover()
	if err != nil || len(rec.Removed) != 1 || rec.Removed[0] != unknown.ID || len(rec.Live) != 3 {
		t.Errorf("second Recover: %v %v", rec, err)
	}
}

func TestRecoverWithoutSessionRoot(t *testing.T) {
	f := newFakeSystem(testTemp)
	m := newTestManager(t, f)
	rec, err := m.Recover()
	if err != nil || len(rec.Removed)+len(rec.Live) != 0 || len(mutations(f.take())) != 0 {
		t.Errorf("Recover on a fresh machine: %v %v", rec, err)
	}
	f.failOn["StartTime"] = fmt.Errorf("access denied")
	_ = seedSession(t, f, ProcessID{PID: 900, Start: 1})
	if rec, _ := m.Recover(); len(rec.Removed) != 0 {
		t.Errorf("removed a session whose owner could not be checked: %v", rec)
	}
}

func TestLauncherFailureStatus(t *testing.T) {
	f := newFakeSystem(testTemp)
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, failed, err := s.launcherFailure(); failed || err != nil {
		t.Fatalf("failure before any run: %v %v", failed, err)
	}
	_ = f.WriteFile(s.StatusFile(), formatStatus("create restricted token: denied\nforged line"))
	reason, failed, err := s.launcherFailure()
	if !failed || err != nil || reason != "create restricted token: denied forged line" {
		t.Errorf("got %q %v %v", reason, failed, err)
	}
	_ = f.WriteFile(s.StatusFile(), []byte("fatal: something else wrote this"))
	if _, failed, _ := s.launcherFailure(); failed {
		t.Error("a status without the header counted")
	}
	f.rdState[Key(s.StatusFile())] = &fs.PathError{Op: "open", Path: s.StatusFile(), Err: errBoom}
	if _, _, err := s.launcherFailure(); !errors.Is(err, errBoom) {
		t.Errorf("read error: %v", err)
	}
	delete(f.rdState, Key(s.StatusFile()))
	if err := s.Cleanup(); err != nil || f.exists(s.StatusFile()) {
		t.Errorf("Cleanup left the status file: %v", err)
	}
}

func TestGapsAlwaysPartial(t *testing.T) {
	f := newFakeSystem(testTemp)
	f.mkdirAll(testWS)
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{WriteRoots: []string{testWS}, DenyRead: []string{`C:\Users\me\.ssh`}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, g := range s.Gaps {
		b.WriteString(g.String() + "\n")
	}
	for _, want := range []string{"fs: deletes and renames are not confined", "fs: objects whose ACL grants Everyone write", "fs: NTFS hard links", "net: network is not confined", `deny-read paths stay readable (C:\Users\me\.ssh)`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("gaps lack %q:\n%s", want, b.String())
		}
	}
	s2, err := m.Prepare(Request{AllowNetwork: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range s2.Gaps {
		if g.Area == "net" {
			t.Errorf("network gap with network allowed: %v", g)
		}
	}
	_ = s2.Cleanup()
	for _, g := range Gaps() {
		switch g.Area {
		case "fs", "net", "ipc", "proc":
		default:
			t.Errorf("gap area %q", g.Area)
		}
	}
	_ = s.Cleanup()
}

// Network deny cannot be enforced; the session's soft offline environment
// points every proxy variable at a dead local port and git's ssh at a stub
// that fails, kept where the command cannot rewrite it, and gone with the
// session.
func TestOfflineEnvironment(t *testing.T) {
	f := newFakeSystem(testTemp)
	f.mkdirAll(testWS)
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{WriteRoots: []string{testWS}})
	if err != nil {
		t.Fatal(err)
	}
	stub := s.Dir + ".nossh.cmd"
	if s.SSHStub() != stub || Within(stub, s.Dir) {
		t.Fatalf("stub %q: want it beside the session dir, outside what the command can write", s.SSHStub())
	}
	if b, err := f.ReadFile(stub); err != nil || !strings.Contains(string(b), "exit /b 255") {
		t.Errorf("stub %q, %v", b, err)
	}
	env := strings.Join(s.OfflineEnv(), "\n")
	for _, want := range []string{"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "ALL_PROXY=http://127.0.0.1:9",
		"http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "npm_config_https_proxy=http://127.0.0.1:9",
		"NO_PROXY=", "no_proxy=", `GIT_SSH_COMMAND="` + strings.ReplaceAll(stub, `\`, "/") + `"`} {
		if !strings.Contains("\n"+env+"\n", "\n"+want+"\n") {
			t.Errorf("offline env lacks %q:\n%s", want, env)
		}
	}
	if err := s.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if f.exists(stub) {
		t.Error("Cleanup left the ssh stub")
	}
	// Positive control: network allowed, no stub, no variables.
	s2, err := m.Prepare(Request{WriteRoots: []string{testWS}, AllowNetwork: true})
	if err != nil {
		t.Fatal(err)
	}
	if s2.OfflineEnv() != nil || s2.SSHStub() != "" || f.exists(s2.Dir+".nossh.cmd") {
		t.Errorf("network allowed, yet offline env %v", s2.OfflineEnv())
	}
	_ = s2.Cleanup()
}
