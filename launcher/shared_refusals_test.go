//go:build linux && cgo && sandbox_ctest

package launcher

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// TestCRefusalWriterMatchesGo: the C writer (the guard's, the C
// supervisor's) writes byte for byte what vocab.RefusalRecorder, which
// the Go chain's supervisor writes by, decides: the same records, the
// same escaping and cut, the same repeats skipped and counts.
func TestCRefusalWriterMatchesGo(t *testing.T) {
	calls := []refusalCall{
		{"create", vocab.RefusalRuleProtected, "/ws/.envrc"},
		{"create", vocab.RefusalRuleProtected, "/ws/.envrc"},
		{"chmod", vocab.RefusalRuleOutside, "/a b/c\nd%e\xff\x7f\x01"},
		{"chmod", vocab.RefusalRuleOutside, "/" + strings.Repeat("é\n", vocab.MaxRefusalLine)},
	}
	for i := range 3 * vocab.MaxRefusalRecords {
		calls = append(calls, refusalCall{"times", vocab.RefusalRuleOutside, fmt.Sprintf("/var/%d", i%(2*vocab.MaxRefusalRecords))})
	}
	got, err := cRefusals(calls)
	if err != nil {
		t.Fatal(err)
	}
	var rec vocab.RefusalRecorder
	var want []byte
	for _, c := range calls {
		line, _ := rec.Refused(c.op, c.rule, c.path)
		want = append(want, line...)
	}
	want = append(want, rec.End()...)
	if !bytes.Equal(got, want) {
		t.Errorf("C wrote\n%q\nGo decides\n%q", got, want)
	}
	if recs, more := vocab.ParseRefusalRecords(got); len(recs) != vocab.MaxRefusalRecords || more == 0 {
		t.Errorf("parsed %d records, more %d", len(recs), more)
	}
}
