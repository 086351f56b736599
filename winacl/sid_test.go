package winacl

import (
	"strings"
	"testing"
)

func TestWriteSIDDeterministicAndWellFormed(t *testing.T) {
	a1, err := WriteSID(`C:\src\proj`, nil)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := WriteSID(`C:\src\proj`, nil)
	if a1 != a2 {
		t.Fatalf("same path, different SIDs: %s %s", a1, a2)
	}
	if !strings.HasPrefix(string(a1), "S-1-5-21-") || strings.Count(string(a1), "-") != 7 {
		t.Errorf("SID %s is not S-1-5-21 with four sub-authorities", a1)
	}
	if _, err := ParseSID(string(a1)); err != nil {
		t.Errorf("ParseSID(%s): %v", a1, err)
	}
	// A pinned value: the derivation is part of the contract (standing ACEs
	// on users' disks carry it); changing it must be deliberate.
	const pinned SID = "S-1-5-21-35582850-3608892301-2061588724-3332586256"
	if a1 != pinned {
		t.Errorf("WriteSID(C:\\src\\proj) = %s; the derivation changed (was %s)", a1, pinned)
	}
}

func TestWriteSIDDistinct(t *testing.T) {
	paths := []string{
		`C:\src\proj`, `C:\src\proj2`, `C:\src\pro`, `C:\src`, `D:\src\proj`,
		`C:\src\proj\sub`, `\\server\share\src\proj`, `\\server\share2\src\proj`,
		`C:\src\prój`, `C:\Users\a\ws`, `C:\Users\b\ws`,
	}
	seen := map[SID]string{}
	for _, p := range paths {
		sid, err := WriteSID(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := seen[sid]; dup {
			t.Errorf("%s and %s share SID %s", p, other, sid)
		}
		seen[sid] = p
		ss, _ := SessionSID(p)
		if ss == sid {
			t.Errorf("session SID of %s equals its write SID", p)
		}
	}
}

func TestParseSID(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"S-1-1-0", true},
		{"S-1-5-18", true},
		{"S-1-5-21-1-2-3-4", true},
		{"S-1-5-21-4294967295-0-0-0", true},
		{"S-1-5-21-4294967296-0-0-0", false},
		{"S-1-5", false},
		{"S-2-5-18", false},
		{"s-1-5-18", false},
		{"S-1-5-+18", false},
		{"S-1-5--18", false},
		{"S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16", false},
		{"", false},
	} {
		_, err := ParseSID(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseSID(%q): %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}

func TestAccessMasks(t *testing.T) {
	if AccessModify != 0x1301BF {
		t.Errorf("AccessModify = %#x (%s), want the Modify permission 0x1301BF", uint32(AccessModify), AccessModify)
	}
	if AccessModify&(DeleteChild|WriteDAC|WriteOwner) != 0 {
		t.Errorf("AccessModify grants %s", AccessModify&(DeleteChild|WriteDAC|WriteOwner))
	}
	want := WriteData | AppendData | WriteEA | WriteAttributes | DeleteChild | Delete | WriteDAC | WriteOwner
	if AccessDenyWrite != want {
		t.Errorf("AccessDenyWrite = %s", AccessDenyWrite)
	}
	if AccessDenyWrite&(ReadData|Execute|ReadAttributes|ReadControl|Synchronize) != 0 {
		t.Errorf("AccessDenyWrite denies reading: %s", AccessDenyWrite)
	}
	if got := (ReadData | Delete | 0x04000000).String(); got != "read_data|delete|0x4000000" {
		t.Errorf("String() = %q", got)
	}
}
