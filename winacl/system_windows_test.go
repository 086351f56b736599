//go:build windows

package winacl

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// underWine reports whether the test runs under Wine, which implements the
// calls but does not enforce file ACLs or restricted tokens.
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// tempDir is t.TempDir, except under Wine, whose file deletion Go's
// os.RemoveAll cannot drive ("Invalid function"): there the dir is left.
func tempDir(t *testing.T) string {
	t.Helper()
	if !underWine() {
		return t.TempDir()
	}
	d, err := os.MkdirTemp("", "winacl")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRealSystemACL(t *testing.T) {
	sys := NewSystem()
	base, err := Canonicalize(tempDir(t), sys)
	if err != nil {
		t.Fatal(err)
	}
	dir := base + `\private`
	if err := sys.MkdirPrivate(dir); err != nil {
		t.Fatalf("MkdirPrivate: %v", err)
	}
	if err := sys.MkdirPrivate(dir); !errors.Is(err, os.ErrExist) {
		t.Errorf("second MkdirPrivate: %v, want ErrExist", err)
	}
	// The DACL MkdirPrivate wrote parses back: SYSTEM, full access, inherited
	// by subdirectories and files, explicit.
	if has, err := sys.HasACE(dir, ACE{SID: SIDSystem, Access: AccessModify | DeleteChild | WriteDAC | WriteOwner, Inherit: true}); err != nil || !has {
		t.Errorf("HasACE(SYSTEM full access) on a private dir: %v %v", has, err)
	}
	if has, err := sys.HasACE(dir, ACE{SID: SIDSystem, Access: ReadData, Deny: true}); err != nil || has {
		t.Errorf("HasACE(deny SYSTEM) on a private dir: %v %v", has, err)
	}
	if has, err := sys.HasACE(dir, ACE{SID: SIDEveryone, Access: WriteData, Inherit: true}); err != nil || has {
		t.Errorf("HasACE(Everyone write) on a private dir: %v %v", has, err)
	}
	sid, _ := WriteSID(dir, nil)
	if underWine() {
		// Wine derives file DACLs from Unix permission bits: AddACE succeeds
		// but the ACE is not kept.
		if err := sys.AddACE(dir, ACE{SID: sid, Access: AccessModify, Inherit: true}); err != nil {
			t.Errorf("AddACE: %v", err)
		}
		if err := sys.RevokeACE(dir, sid); err != nil {
			t.Errorf("RevokeACE: %v", err)
		}
		t.Skip("Wine does not keep file ACEs")
	}
	for _, ace := range []ACE{
		{SID: sid, Access: AccessModify, Inherit: true},
		{SID: sid, Access: AccessDenyRename, Deny: true},
	} {
		if has, err := sys.HasACE(dir, ace); err != nil || has {
			t.Fatalf("HasACE before add (%v): %v %v", ace, has, err)
		}
		if err := sys.AddACE(dir, ace); err != nil {
			t.Fatalf("AddACE(%v): %v", ace, err)
		}
		if has, err := sys.HasACE(dir, ace); err != nil || !has {
			t.Errorf("HasACE after add (%v): %v %v", ace, has, err)
		}
	}
	if err := sys.RevokeACE(dir, sid); err != nil {
		t.Fatal(err)
	}
	if has, _ := sys.HasACE(dir, ACE{SID: sid, Access: AccessModify, Inherit: true}); has {
		t.Error("allow ACE still there after RevokeACE")
	}
	if has, _ := sys.HasACE(dir, ACE{SID: sid, Access: AccessDenyRename, Deny: true}); !has {
		t.Error("RevokeACE removed the deny ACE")
	}
	if _, err := sys.HasACE(base+`\missing`, ACE{SID: sid, Access: ReadData}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("HasACE on a missing path: %v", err)
	}

	file := dir + `\f.txt`
	if err := sys.WriteFile(file, []byte("x")); err != nil {
		t.Fatal(err)
	}
	fileACE := ACE{SID: sid, Access: AccessDenyWrite, Deny: true, Inherit: true}
	if err := sys.AddACE(file, fileACE); err != nil {
		t.Fatal(err)
	}
	if has, err := sys.HasACE(file, fileACE); err != nil || !has {
		t.Errorf("HasACE on a file ignores Inherit: %v %v", has, err)
	}
	names, err := sys.ReadDir(dir)
	if err != nil || len(names) != 1 || names[0] != "f.txt" {
		t.Errorf("ReadDir: %v %v", names, err)
	}
	if err := sys.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
}

func TestRealSystemProcesses(t *testing.T) {
	sys := NewSystem()
	self, err := sys.Self()
	if err != nil {
		t.Fatal(err)
	}
	start, err := sys.StartTime(self.PID)
	if err != nil || start != self.Start {
		t.Errorf("StartTime(self) = %d, %v; Self %v", start, err, self)
	}
	if _, err := sys.StartTime(0xFFFFFFF0); !errors.Is(err, ErrProcessGone) {
		t.Errorf("StartTime of no process: %v", err)
	}
	long, err := sys.LongPathName(os.TempDir())
	if err != nil || long == "" {
		t.Errorf("LongPathName: %q %v", long, err)
	}
}

func TestRealRun(t *testing.T) {
	sys := NewSystem()
	ws := tempDir(t) // under the temp root: allowed
	outside := tempDir(t)
	m, err := NewManager(Config{System: sys})
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Prepare(Request{WriteRoots: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Cleanup(); err != nil && !underWine() {
			t.Error(err)
		}
	}()
	cmd := filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	run := func(line string) int {
		spec, err := s.LaunchSpec([]string{cmd, "/c", line}, s.WriteRoots[0].Path, TempEnv(os.Environ(), s.Dir))
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		code, err := Run(spec, &stderr)
		if err != nil {
			t.Fatalf("Run(%q): %v (stderr %q)", line, err, stderr.String())
		}
		return code
	}
	if code := run("exit 7"); code != 7 {
		t.Errorf("exit code %d, want 7", code)
	}
	// cmd.exe parses its /c line itself, not by the C runtime's rules that
	// argv is joined with: no quotes here (the paths have no spaces).
	if code := run(`echo ok> ` + ws + `\in.txt`); code != 0 {
		t.Errorf("write in the workspace: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(ws, "in.txt")); err != nil {
		t.Errorf("the command could not write in its workspace: %v", err)
	}
	if underWine() {
		t.Skip("Wine does not enforce file ACLs or restricted tokens")
	}
	run(`echo no> ` + outside + `\out.txt`)
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); err == nil {
		t.Error("the command wrote outside its write roots")
	}
	if code := run(`echo ok> %TEMP%\t.txt`); code != 0 {
		t.Errorf("write in the private temp dir: exit %d", code)
	}
}

// Identify tells objects apart by file index: the same file twice is the
// same identity, another file (or the file written anew by WriteFile, which
// renames a new object over it) another one; a directory says so.
func TestRealSystemIdentify(t *testing.T) {
	sys := NewSystem()
	base, err := Canonicalize(tempDir(t), sys)
	if err != nil {
		t.Fatal(err)
	}
	a, b := base+`\a`, base+`\b`
	if err := os.WriteFile(a, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("b"), 0o600); err != nil {
		t.Fatal(err)
	}
	ia, err := sys.Identify(a)
	if err != nil {
		t.Fatal(err)
	}
	ia2, _ := sys.Identify(a)
	ib, _ := sys.Identify(b)
	if ia != ia2 || ia.Dir || ia.Reparse {
		t.Errorf("Identify(a) = %+v then %+v", ia, ia2)
	}
	if ia == ib {
		t.Errorf("two files, one identity %+v", ia)
	}
	if err := sys.WriteFile(a, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if ia3, err := sys.Identify(a); err != nil || ia3.Index == ia.Index {
		t.Errorf("a replaced by WriteFile keeps its identity: %+v %v", ia3, err)
	}
	if id, err := sys.Identify(base); err != nil || !id.Dir {
		t.Errorf("Identify(dir) = %+v, %v", id, err)
	}
	if _, err := sys.Identify(base + `\missing`); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Identify(missing) = %v, want ErrNotExist", err)
	}
}

// The protected-path check on the real file system: a .git\config deleted
// and written anew (what a confined command can do, since deletes are not
// confined) is found by its new file index and restored with its content.
func TestRealProtectedRestore(t *testing.T) {
	sys := NewSystem()
	ws, err := Canonicalize(tempDir(t), sys)
	if err != nil {
		t.Fatal(err)
	}
	config := ws + `\.git\config`
	if err := os.MkdirAll(ws+`\.git`, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte("[core]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(Config{System: sys})
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Prepare(Request{WriteRoots: []string{ws}, ReadOnlySubpaths: []string{".git/config"}, AllowNetwork: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Cleanup() }()
	if err := os.Remove(config); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte("[core]\n\thooksPath = C:/evil\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := s.CheckProtected()
	if len(cs) != 1 || cs[0].Path != config || !cs[0].Restored || (cs[0].Change != ChangeReplaced && cs[0].Change != ChangeModified) {
		t.Fatalf("changes %+v", cs)
	}
	if b, err := os.ReadFile(config); err != nil || string(b) != "[core]\n" {
		t.Errorf("config %q, %v: not restored", b, err)
	}
}
