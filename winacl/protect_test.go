package winacl

import (
	"testing"
)

func TestProtectedMatching(t *testing.T) {
	protected := []string{`C:\ws\.git\hooks`, `C:\ws\.git\config`, `C:\ws\.env:secret`}
	p, err := newProtector(protected, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{`C:\ws\.git\hooks`, true},
		{`C:\ws\.GiT\hooks`, true},
		{`c:\WS\.GIT\HOOKS\pre-commit`, true},
		{`C:/ws/.git/hooks/`, true},
		{`\\?\C:\ws\.git\hooks\post-checkout`, true},
		{`\\localhost\C$\ws\.git\config`, true},
		{`C:\ws\.git\config`, true},
		{`C:\ws\.git\config:evil`, true},
		{`C:\ws\.git\config::$DATA`, true},
		{`C:\ws\.git\CONFIG:evil:$DATA`, true},
		{`C:\ws\.git\hooks:stream`, true},
		{`C:\ws\.git\hooks::$INDEX_ALLOCATION\pre-commit`, true},
		{`C:\ws\.git::$INDEX_ALLOCATION\hooks\pre-commit`, true},
		{`C:\ws\.git\hooks.\pre-commit`, true},
		{`C:\ws\.git\config. . `, true},
		{`C:\ws\.git\x\..\hooks\pre-commit`, true},
		{`C:\ws\.env`, true}, // the entry's stream part is dropped: the file is protected
		{`C:\ws\.env:other`, true},
		{`C:\ws\.git`, false},
		{`C:\ws\.git\configs`, false},
		{`C:\ws\.git\config.worktree`, false},
		{`C:\ws\.git\hooksx`, false},
		{`C:\ws\.gitx\hooks`, false},
		{`C:\ws\.git\objects\ab\cdef`, false},
		{`D:\ws\.git\hooks`, false},
		{`C:\ws\.git\hooks\..\index`, false},
		{`relative\.git\hooks`, false},
		{``, false},
	} {
		if got := p.Match(tc.path); got != tc.want {
			t.Errorf("Match(%q) = %v, want %v", tc.path, got, tc.want)
		}
		if got := isProtected(tc.path, protected); got != tc.want {
			t.Errorf("isProtected(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
	if got := p.paths; len(got) != 3 || got[2] != `C:\ws\.env` {
		t.Errorf("Paths() = %v", got)
	}
}

func TestProtectedRelativeEntries(t *testing.T) {
	pl, err := NewPlan(Request{
		WriteRoots:       []string{`C:\a`, `D:\b`, `C:\a\nested`},
		ReadOnlySubpaths: []string{`.GiT/hooks`, `.git\hooks\`, `C:\elsewhere\x`},
	}, testTemp, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each root gets its own .git\hooks (the nested root's lies under C:\a
	// and is kept read-only by C:\a's SID, the root that grants it).
	want := []string{`C:\a\.GiT\hooks`, `D:\b\.GiT\hooks`, `C:\a\nested\.GiT\hooks`}
	if len(pl.Protected) != len(want) {
		t.Fatalf("Protected = %v", pl.Protected)
	}
	for i := range want {
		if Key(pl.Protected[i]) != Key(want[i]) {
			t.Errorf("Protected[%d] = %s, want %s", i, pl.Protected[i], want[i])
		}
	}
	sidA, _ := WriteSID(`C:\a`, nil)
	for _, pa := range pl.Standing {
		if Within(pa.Path, `C:\a\nested\.git`) && pa.ACE.SID != sidA {
			t.Errorf("%s: deny for %s, want the SID of C:\\a", pa.Path, pa.ACE.SID)
		}
	}
	if len(pl.WriteRoots) != 2 {
		t.Errorf("WriteRoots = %v", pl.WriteRoots)
	}
}

func TestProtectionACEs(t *testing.T) {
	const sid SID = "S-1-5-21-1-2-3-4"
	got := protectionACEs(`C:\ws`, sid, `C:\ws\.git\modules\lib\hooks`)
	want := []PlannedACE{
		{Path: `C:\ws\.git`, ACE: ACE{SID: sid, Access: Delete, Deny: true}},
		{Path: `C:\ws\.git\modules`, ACE: ACE{SID: sid, Access: Delete, Deny: true}},
		{Path: `C:\ws\.git\modules\lib`, ACE: ACE{SID: sid, Access: Delete, Deny: true}},
		{Path: `C:\ws\.git\modules\lib\hooks`, ACE: ACE{SID: sid, Access: AccessDenyWrite, Deny: true, Inherit: true}, protects: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].Path != want[i].Path || got[i].ACE != want[i].ACE || got[i].protects != want[i].protects {
			t.Errorf("[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if got := protectionACEs(`C:\ws`, sid, `C:\ws\.git`); len(got) != 1 || got[0].ACE.Access != AccessDenyWrite {
		t.Errorf("direct child: %v", got)
	}
}

// What was ExampleIsProtected: any case and a stream suffix name the
// protected object; a sibling does not.
func TestIsProtectedSpellings(t *testing.T) {
	protected := []string{`C:\ws\.git\hooks`, `C:\ws\.git\config`}
	for p, want := range map[string]bool{`C:\ws\.GiT\HOOKS\pre-commit`: true, `C:\ws\.git\config:evil`: true, `C:\ws\.git\index`: false} {
		if got := isProtected(p, protected); got != want {
			t.Errorf("isProtected(%s) = %v, want %v", p, got, want)
		}
	}
}
