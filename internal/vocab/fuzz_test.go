package vocab

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzDecode: Decode never panics, and whatever it accepts encodes back to
// arguments that decode to the same Spec.
func FuzzDecode(f *testing.F) {
	seed, _ := Encode(LandlockRun, Spec{Token: tok, Writable: []string{"/ws"}, TempDir: "/t", DenyRead: []string{"/s"}, Dir: "/ws", Argv: []string{"true"}})
	f.Add(strings.Join(seed[1:], "\x1f"))
	f.Add(Version + "\x1f-net\x1fallow\x1f-probe\x1f-w\x1f/a\x1f--")
	f.Add("")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x1f")
		s, err := Decode(args)
		if err != nil {
			return
		}
		s.Token = tok // travels beside the arguments
		again, err := Encode(LandlockRun, s)
		if err != nil {
			t.Fatalf("accepted spec does not encode: %v (%#v)", err, s)
		}
		s2, err := Decode(again[1:])
		if err != nil {
			t.Fatalf("re-encoded args do not decode: %v", err)
		}
		s2.Token = tok
		if !reflect.DeepEqual(s, s2) {
			t.Fatalf("round trip changed the spec:\n%#v\n%#v", s, s2)
		}
	})
}
