package winpath

import "testing"

func TestWithin(t *testing.T) {
	for _, tt := range []struct {
		p, root string
		want    bool
	}{
		{`C:\Temp`, `C:\Temp`, true},
		{`c:\temp\x`, `C:\Temp`, true},
		{`C:\Tempest`, `C:\Temp`, false},
		{`C:\x`, `C:\`, true},
		{`\\srv\share\a`, `\\SRV\share\`, true},
		{`D:\Temp`, `C:\Temp`, false},
	} {
		if got := Within(tt.p, tt.root); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.p, tt.root, got, tt.want)
		}
	}
}
