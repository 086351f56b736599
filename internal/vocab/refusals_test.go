package vocab

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestRefusalRecords: a record says its path exactly, whatever bytes it
// holds (spaces, newlines, '%', not UTF-8), on one line of at most
// MaxRefusalLine bytes; a path too long for it is cut and marked.
func TestRefusalRecords(t *testing.T) {
	long := "/" + strings.Repeat("d\n", MaxRefusalLine)
	tests := []struct {
		path string
		cut  bool
	}{
		{"/ws/.envrc", false},
		{"/a b/c\nd%e\xff\x7f", false},
		{long, true},
	}
	for _, tt := range tests {
		line := RefusalLine("chmod", RefusalRuleOutside, tt.path)
		if len(line) > MaxRefusalLine || bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Errorf("line %q: %d bytes, want one line of at most %d", line[:min(len(line), 80)], len(line), MaxRefusalLine)
		}
		recs, more := ParseRefusalRecords(line)
		if len(recs) != 1 || more != 0 || recs[0].Op != "chmod" || recs[0].Rule != RefusalRuleOutside || recs[0].Cut != tt.cut ||
			!strings.HasPrefix(tt.path, recs[0].Path) || !tt.cut && recs[0].Path != tt.path {
			t.Errorf("%q: parsed %+v, more %d", tt.path[:min(len(tt.path), 40)], recs, more)
		}
	}
	// Lines a writer never writes are skipped.
	for _, bad := range []string{"chmod outside\n", "run outside /x\n", "chmod inside /x\n", "chmod outside /x%4\n", "chmod outside /x -\n", "more x\n", "chmod outside /x"} {
		if recs, more := ParseRefusalRecords([]byte(bad)); len(recs) != 0 || more != 0 {
			t.Errorf("%q parsed as %+v, more %d", bad, recs, more)
		}
	}
}

// TestRefusalRecorder: each distinct refusal is recorded once, up to
// MaxRefusalRecords; past them the count is written at each power of two
// and at the end, so the largest count read is the number dropped.
func TestRefusalRecorder(t *testing.T) {
	var r RefusalRecorder
	var out []byte
	for i := range 3 * MaxRefusalRecords {
		for range 2 { // each one twice: the repeat is not recorded again
			line, record := r.Refused("create", RefusalRuleProtected, "/p/"+strings.Repeat("x", i))
			if record != (i < MaxRefusalRecords && line != nil) {
				t.Fatalf("refusal %d: record %v for line %q", i, record, line)
			}
			out = append(out, line...)
		}
	}
	out = append(out, r.End()...)
	recs, more := ParseRefusalRecords(out)
	if len(recs) != MaxRefusalRecords || more != 2*2*MaxRefusalRecords {
		// past the records a repeat is not told apart: counted too
		t.Errorf("%d records, more %d", len(recs), more)
	}
	if n := bytes.Count(out, []byte("more ")); n > 64 {
		t.Errorf("%d count lines", n)
	}
	var want []string
	for i := range MaxRefusalRecords {
		want = append(want, "/p/"+strings.Repeat("x", i))
	}
	var got []string
	for _, rec := range recs {
		got = append(got, rec.Path)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %q", got)
	}
}
