package winacl

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// deleteTree removes path and everything beneath it from the fake, as a
// command deleting it would (not recorded).
func (f *fakeSystem) deleteTree(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, n := range f.nodes {
		if Within(n.path, path) {
			delete(f.nodes, k)
		}
	}
}

func (f *fakeSystem) content(path string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.nodes[Key(path)]; n != nil {
		return string(n.data)
	}
	return "<missing>"
}

// gitWorkspace sets up testWS with a .git holding config and hooks.
func gitWorkspace(f *fakeSystem) (config, hooks string) {
	config, hooks = testWS+`\.git\config`, testWS+`\.git\hooks`
	f.writeFileSetup(config, []byte("[core]\n"))
	f.mkdirAll(hooks)
	f.writeFileSetup(hooks+`\pre-commit.sample`, []byte("#!/bin/sh\n"))
	return config, hooks
}

func changeList(cs []ProtectedChange) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintln(&b, c.String())
	}
	return b.String()
}

// Deletes are not confined on Windows: the command can delete .git\config
// and create its own through the parent's inherited grant. Cleanup must
// find that, put the recorded content back with its deny ACE, and say so.
func TestProtectedDeleteAndRecreateIsRestored(t *testing.T) {
	f := newFakeSystem(testTemp)
	config, hooks := gitWorkspace(f)
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{WriteRoots: []string{testWS}, ReadOnlySubpaths: []string{".git/config", ".git/hooks"}})
	if err != nil {
		t.Fatal(err)
	}
	sid := s.writeSIDs()[0]
	deny := ACE{SID: sid, Access: AccessDenyWrite, Deny: true, Inherit: true}
	if !hasACE(f.aces(config), deny) {
		t.Fatalf("no deny on %s", config)
	}
	// The command: delete config, write a new one (a new object without
	// the deny); plant a hook in the original hooks dir.
	f.deleteTree(config)
	f.writeFileSetup(config, []byte("[core]\n\thooksPath = C:/evil\n"))
	f.writeFileSetup(hooks+`\pre-commit`, []byte("evil\n"))
	f.take()

	err = s.Cleanup()
	if !errors.Is(err, ErrProtectedChanged) {
		t.Fatalf("Cleanup = %v, want ErrProtectedChanged", err)
	}
	if got := f.content(config); got != "[core]\n" {
		t.Errorf("config not restored: %q", got)
	}
	if !hasACE(f.aces(config), deny) {
		t.Errorf("restored config lacks its deny ACE: %v", f.aces(config))
	}
	want := config + ": replaced (restored)\n" +
		hooks + `\pre-commit: added (not restored: added to the original directory, which the user may have done: left for review)` + "\n"
	cs := s.CheckProtected()
	if changeList(cs) != want {
		t.Errorf("changes:\n%s\nwant:\n%s", changeList(cs), want)
	}
	if !strings.Contains(err.Error(), config+": replaced (restored)") {
		t.Errorf("error does not name the change: %v", err)
	}
	if f.exists(s.Dir) {
		t.Error("the session dir stayed")
	}
	if err := s.Cleanup(); err != nil {
		t.Errorf("second Cleanup: %v", err)
	}
}

// A deleted file is put back too, and a hooks dir the command replaced is
// re-protected, its files restored and what the command put in it removed.
func TestProtectedDirReplacedIsRestored(t *testing.T) {
	f := newFakeSystem(testTemp)
	config, hooks := gitWorkspace(f)
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{WriteRoots: []string{testWS}, ReadOnlySubpaths: []string{".git/config", ".git/hooks"}})
	if err != nil {
		t.Fatal(err)
	}
	deny := ACE{SID: s.writeSIDs()[0], Access: AccessDenyWrite, Deny: true, Inherit: true}
	f.deleteTree(config)
	f.deleteTree(hooks)
	f.mkdirAll(hooks)
	f.writeFileSetup(hooks+`\post-checkout`, []byte("evil\n"))

	cs := s.CheckProtected()
	want := config + ": deleted (restored)\n" +
		hooks + ": replaced (restored)\n" +
		hooks + `\post-checkout: added (restored)` + "\n" +
		hooks + `\pre-commit.sample: deleted (restored)` + "\n"
	if changeList(cs) != want {
		t.Errorf("changes:\n%s\nwant:\n%s", changeList(cs), want)
	}
	if f.content(config) != "[core]\n" || f.content(hooks+`\pre-commit.sample`) != "#!/bin/sh\n" || f.exists(hooks+`\post-checkout`) {
		t.Errorf("not restored: config %q sample %q post-checkout %v", f.content(config), f.content(hooks+`\pre-commit.sample`), f.exists(hooks+`\post-checkout`))
	}
	if !hasACE(f.aces(hooks), deny) || !hasACE(f.aces(config), deny) {
		t.Errorf("protection not re-applied: hooks %v config %v", f.aces(hooks), f.aces(config))
	}
	if err := s.Cleanup(); !errors.Is(err, ErrProtectedChanged) {
		t.Errorf("Cleanup after CheckProtected = %v, want the changes", err)
	}
}

// Positive control: nothing changed, nothing reported, nothing written.
func TestProtectedUnchangedIsQuiet(t *testing.T) {
	f := newFakeSystem(testTemp)
	config, _ := gitWorkspace(f)
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{WriteRoots: []string{testWS}, ReadOnlySubpaths: []string{".git/config", ".git/hooks", ".git/commondir"}})
	if err != nil {
		t.Fatal(err)
	}
	f.take()
	if cs := s.CheckProtected(); len(cs) != 0 {
		t.Errorf("changes without a change:\n%s", changeList(cs))
	}
	for _, c := range mutations(f.take()) {
		t.Errorf("the check changed the disk: %v", c)
	}
	if err := s.Cleanup(); err != nil {
		t.Errorf("Cleanup: %v", err)
	}
	if f.content(config) != "[core]\n" {
		t.Error("config changed")
	}
}

// What cannot be restored safely is reported, not forced: a directory now
// where the file was, a content too large to hold, a deleted directory.
func TestProtectedUnsafeRestoresAreReported(t *testing.T) {
	f := newFakeSystem(testTemp)
	config, hooks := gitWorkspace(f)
	big := testWS + `\.git\commondir`
	f.writeFileSetup(big, make([]byte, maxSnapshotFile+1))
	m := newTestManager(t, f)
	s, err := m.Prepare(Request{WriteRoots: []string{testWS}, ReadOnlySubpaths: []string{".git/config", ".git/hooks", ".git/commondir"}})
	if err != nil {
		t.Fatal(err)
	}
	f.deleteTree(config)
	f.mkdirAll(config)
	f.deleteTree(hooks)
	f.deleteTree(big)
	f.writeFileSetup(big, []byte("../elsewhere\n"))
	cs := s.CheckProtected()
	got := changeList(cs)
	for _, want := range []string{
		config + ": replaced (not restored: a directory or link now has its name)",
		big + ": replaced (not restored: its content was too large to record)",
		hooks + ": deleted (not restored: a directory is not recreated)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("changes lack %q:\n%s", want, got)
		}
	}
	for _, c := range cs {
		if c.Restored && Within(c.Path, config) {
			t.Errorf("restored over a directory: %v", c)
		}
	}
	_ = s.Cleanup()
}
