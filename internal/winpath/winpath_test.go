package winpath

import "testing"

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		p, root string
		want    bool
	}{
		{`C:\a`, `C:\a`, true},
		{`C:\a\b`, `C:\A`, true},
		{`C:\ab`, `C:\a`, false},
		{`C:\a`, `C:\a\b`, false},
		{`C:\a`, `C:\`, true},
		{`c:\temp\x`, `C:\Temp`, true},
		{`D:\a`, `C:\`, false},
		{`\\s\sh\x`, `\\S\SH\`, true},
		{`\\s\sh2\x`, `\\s\sh\`, false},
	} {
		if got := Within(tc.p, tc.root); got != tc.want {
			t.Errorf("Within(%q, %q) = %v", tc.p, tc.root, got)
		}
	}
}
