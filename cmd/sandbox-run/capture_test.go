package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCaptureKeepsStartAndEnd: everything is passed on; Classify gets the
// start (the launcher's lines) and the end (a tool's last error), however
// much came between.
func TestCaptureKeepsStartAndEnd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		head   string
		tail   string
	}{
		{"short", []string{"a\n", "b\n"}, "a\nb\n", ""},
		{"exactly the head", []string{strings.Repeat("h", stderrKeep)}, strings.Repeat("h", stderrKeep), ""},
		{"head then tail", []string{strings.Repeat("h", stderrKeep), "x\n"}, strings.Repeat("h", stderrKeep), "x\n"},
		{"middle dropped", []string{strings.Repeat("h", stderrKeep), strings.Repeat("m", 3*stderrTail), "Permission denied\n"},
			strings.Repeat("h", stderrKeep), strings.Repeat("m", stderrTail-len("Permission denied\n")) + "Permission denied\n"},
		{"a byte at a time", append([]string{strings.Repeat("h", stderrKeep)}, append(strings.Split(strings.Repeat("m", 5*stderrTail), ""), "end\n")...),
			strings.Repeat("h", stderrKeep), strings.Repeat("m", stderrTail-len("end\n")) + "end\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dst bytes.Buffer
			c := &capture{dst: &dst}
			for _, w := range tc.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write: %d, %v", n, err)
				}
			}
			if dst.String() != strings.Join(tc.writes, "") {
				t.Error("not everything was passed on")
			}
			if tail := c.tail[max(0, len(c.tail)-stderrTail):]; string(c.head) != tc.head || string(tail) != tc.tail {
				t.Errorf("head %d bytes, tail %d bytes; want %d, %d", len(c.head), len(tail), len(tc.head), len(tc.tail))
			}
			want := tc.head
			if tc.tail != "" {
				want += "\n" + tc.tail
			}
			if string(c.kept()) != want {
				t.Errorf("kept() is not the head and the tail")
			}
		})
	}
}
