package winacl

import (
	"errors"
	"fmt"
	"testing"
)

const testTemp = `C:\Users\me\AppData\Local\Temp`

func newTestManager(t *testing.T, f *fakeSystem) *Manager {
	t.Helper()
	m, err := NewManager(Config{System: f})
	if err != nil {
		t.Fatal(err)
	}
	f.take()
	return m
}

func TestTempRootContainment(t *testing.T) {
	for _, tc := range []struct {
		name  string
		temp  string // default testTemp
		roots []string
		want  error // nil: Prepare succeeds
	}{
		{name: "equal", roots: []string{testTemp}, want: ErrContainsTempRoot},
		{name: "containing", roots: []string{`C:\Users\me`}, want: ErrContainsTempRoot},
		{name: "containing parent", roots: []string{`C:\Users\me\AppData`}, want: ErrContainsTempRoot},
		{name: "drive root", roots: []string{`C:\`}, want: ErrContainsTempRoot},
		{name: "contained-by", roots: []string{testTemp + `\proj`}, want: nil},
		{name: "inside the session root", roots: []string{testTemp + `\sandbox-local\x`}, want: ErrInsideSessionRoot},
		{name: "the session root", roots: []string{testTemp + `\SANDBOX-LOCAL`}, want: ErrInsideSessionRoot},
		{name: "sibling", roots: []string{`C:\Users\me\AppData\Local\Tempest`}, want: nil},
		{name: "sibling prefix", roots: []string{`C:\Users\me\AppData\Local\Tem`}, want: nil},
		{name: "other drive", roots: []string{`D:\Users\me\AppData\Local\Temp`}, want: nil},
		{name: "other drive root", roots: []string{`D:\`}, want: ErrVolumeRoot},
		{name: "UNC", roots: []string{`\\server\share\Users\me`}, want: nil},
		{name: "UNC share root", roots: []string{`\\server\share\`}, want: ErrVolumeRoot},
		{name: "UNC alias of the local drive", roots: []string{`\\localhost\c$\Users\me`}, want: ErrContainsTempRoot},
		{name: "extended-length", roots: []string{`\\?\C:\USERS\ME`}, want: ErrContainsTempRoot},
		{name: "case differences", roots: []string{`c:\users\ME\appdata\local\TEMP`}, want: ErrContainsTempRoot},
		{name: "trailing separator", roots: []string{testTemp + `\`}, want: ErrContainsTempRoot},
		{name: "trailing separators on parent", roots: []string{`C:\Users\me\\`}, want: ErrContainsTempRoot},
		{name: "forward slashes", roots: []string{`C:/Users/me/AppData/Local/Temp/`}, want: ErrContainsTempRoot},
		{name: "dot dot", roots: []string{`C:\Users\me\ws\..`}, want: ErrContainsTempRoot},
		{name: "short temp root", temp: `C:\Users\ME~1\AppData\Local\Temp`, roots: []string{`C:\Users\me`}, want: ErrContainsTempRoot},
		{name: "short workspace", roots: []string{`C:\Users\ME~1`}, want: ErrContainsTempRoot},
		{name: "short temp, sibling workspace", temp: `C:\Users\ME~1\AppData\Local\Temp`, roots: []string{`C:\Users\me\src`}, want: nil},
		{name: "second root contains it", roots: []string{`D:\ok`, `C:\Users`}, want: ErrContainsTempRoot},
		{name: "UNC temp root", temp: `\\srv\tmp\me\Temp`, roots: []string{`\\?\UNC\SRV\tmp\me`}, want: ErrContainsTempRoot},
		{name: "UNC temp root, other share", temp: `\\srv\tmp\me\Temp`, roots: []string{`\\srv\tmp2\me`}, want: nil},
		{name: "relative root", roots: []string{`ws`}, want: ErrBadPath},
		{name: "NUL in root", roots: []string{"C:\\ws\x00"}, want: ErrBadPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			temp := tc.temp
			if temp == "" {
				temp = testTemp
			}
			f := newFakeSystem(`C:\Users\me\AppData\Local\Temp`)
			f.temp = temp
			f.long[Key(`C:\Users\ME~1`)] = `C:\Users\me`
			f.long[Key(`C:\Users\ME~1\AppData\Local\Temp`)] = `C:\Users\me\AppData\Local\Temp`
			for _, r := range tc.roots {
				if wp, err := parsePath(r, rejectStreams); err == nil && !wp.isRoot() {
					f.mkdirAll(wp.String())
				}
			}
			if wp, err := parsePath(temp, rejectStreams); err == nil {
				f.mkdirAll(wp.String())
			}
			m := newTestManager(t, f)
			s, err := m.Prepare(Request{WriteRoots: tc.roots})
			calls := f.take()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Prepare: %v", err)
				}
				if count(calls, "AddACE") == 0 {
					t.Errorf("no ACE added on success:\n%s", joinCalls(calls))
				}
				if err := s.Cleanup(); err != nil {
					t.Error(err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("Prepare: %v, want %v (and ErrInvalidPolicy)", err, tc.want)
			}
			if s != nil {
				t.Error("session returned with an error")
			}
			if mut := mutations(calls); len(mut) > 0 {
				t.Errorf("mutations before the policy error:\n%s", joinCalls(mut))
			}
			if n := count(calls, "HasACE"); n > 0 {
				t.Errorf("%d DACL reads before the policy error", n)
			}
		})
	}
}

func TestWriteRootBound(t *testing.T) {
	roots := func(n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, fmt.Sprintf(`D:\src\p%02d`, i))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		roots []string
		ok    bool
	}{
		{"none (read-only)", nil, true},
		{"at the limit", roots(MaxWriteRoots), true},
		{"one over", roots(MaxWriteRoots + 1), false},
		{"over, but nested ones fold", append(roots(MaxWriteRoots), `D:\src\p00\sub`, `d:\SRC\P01\`), true},
		{"over, duplicates fold", append(roots(MaxWriteRoots), `D:\src\p03`), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSystem(testTemp)
			for _, r := range tc.roots {
				f.mkdirAll(r)
			}
			m := newTestManager(t, f)
			s, err := m.Prepare(Request{WriteRoots: tc.roots})
			calls := f.take()
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if len(s.writeSIDs()) > MaxWriteRoots {
					t.Errorf("%d write SIDs", len(s.writeSIDs()))
				}
				spec, err := s.LaunchSpec([]string{"cmd"}, `D:\src`, nil)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(RestrictingSIDs(spec, "S-1-5-5-0-1")); n > MaxWriteRoots+3 {
					t.Errorf("%d restricting SIDs", n)
				}
				return
			}
			if !errors.Is(err, ErrTooManyWriteRoots) || !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("Prepare: %v, want ErrTooManyWriteRoots", err)
			}
			if mut := mutations(calls); len(mut) > 0 {
				t.Errorf("mutations:\n%s", joinCalls(mut))
			}
		})
	}
	// The launcher refuses too many SIDs on its own.
	spec := LaunchSpec{SessionSID: "S-1-5-21-1-2-3-4", Argv: []string{"x"}, Dir: `C:\`}
	for i := 0; i <= MaxWriteRoots; i++ {
		spec.WriteSIDs = append(spec.WriteSIDs, SID(fmt.Sprintf("S-1-5-21-1-2-3-%d", i)))
	}
	if err := spec.Validate(); !errors.Is(err, ErrTooManyWriteRoots) {
		t.Errorf("Validate: %v", err)
	}
}

func TestRootInsideProtectedPath(t *testing.T) {
	f := newFakeSystem(testTemp)
	f.mkdirAll(`C:\ws\.git\hooks`)
	m := newTestManager(t, f)
	for _, req := range []Request{
		{WriteRoots: []string{`C:\ws`, `C:\ws\.git\hooks`}, ReadOnlySubpaths: []string{`C:\ws\.GIT`}},
		{WriteRoots: []string{`C:\ws`, `C:\ws\.git\hooks`}, ReadOnlySubpaths: []string{`.git/hooks`}},
		{WriteRoots: []string{`C:\ws\.git\hooks\x`}, ReadOnlySubpaths: []string{`C:\ws\.git\hooks::$INDEX_ALLOCATION`}},
	} {
		_, err := m.Prepare(req)
		if !errors.Is(err, ErrRootProtected) || !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("Prepare(%v): %v, want ErrRootProtected", req, err)
		}
		if mut := mutations(f.take()); len(mut) > 0 {
			t.Errorf("mutations:\n%s", joinCalls(mut))
		}
	}
}

func TestMissingWriteRootBeforeAnyMutation(t *testing.T) {
	f := newFakeSystem(testTemp)
	f.mkdirAll(`C:\a`)
	m := newTestManager(t, f)
	_, err := m.Prepare(Request{WriteRoots: []string{`C:\a`, `C:\missing`}})
	if !errors.Is(err, ErrMissingRoot) || !errors.Is(err, ErrInvalidPolicy) {
		t.Fatalf("Prepare: %v", err)
	}
	if mut := mutations(f.take()); len(mut) > 0 {
		t.Errorf("mutations:\n%s", joinCalls(mut))
	}
}

func TestPlanBadInputs(t *testing.T) {
	for _, req := range []Request{
		{WriteRoots: []string{`C:\ws\x:stream`}},
		{WriteRoots: []string{`C:\ws`}, ReadOnlySubpaths: []string{`C:rel`}},
		{WriteRoots: []string{`C:\ws`}, ReadOnlySubpaths: []string{`\rooted`}},
		{WriteRoots: []string{`C:\ws`}, ReadOnlySubpaths: []string{""}},
		{WriteRoots: []string{`C:\ws`}, ReadOnlySubpaths: []string{"a\x00b"}},
		{WriteRoots: []string{`C:\ws`}, DenyRead: []string{`relative`}},
		{WriteRoots: []string{`C:\ws`}, ReadOnlySubpaths: []string{`..\outside`}},
		{WriteRoots: []string{`C:\ws`}, ReadOnlySubpaths: []string{`.`}},
	} {
		if _, err := NewPlan(req, testTemp, nil); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("NewPlan(%+v): %v, want ErrInvalidPolicy", req, err)
		}
	}
	if _, err := NewPlan(Request{}, `Temp`, nil); !errors.Is(err, ErrBadPath) {
		t.Errorf("relative temp root: %v", err)
	}
}
