package winacl

import (
	"errors"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// shortNames is a resolver with a fixed table of 8.3 names.
func shortNames() *fakeSystem {
	f := newFakeSystem(`C:\Users\runneradmin\AppData\Local\Temp`)
	f.mkdirAll(`C:\Users\runneradmin\Projects\My Project`)
	f.long[Key(`C:\Users\RUNNER~1`)] = `C:\Users\runneradmin`
	f.long[Key(`C:\Users\RUNNER~1\Projects`)] = `C:\Users\runneradmin\Projects`
	f.long[Key(`C:\Users\RUNNER~1\Projects\MYPROJ~1`)] = `C:\Users\runneradmin\Projects\My Project`
	f.long[Key(`C:\Users\RUNNER~1\AppData\Local\Temp`)] = `C:\Users\runneradmin\AppData\Local\Temp`
	return f
}

func TestCanonicalizeSpellings(t *testing.T) {
	r := shortNames()
	const want = `C:\Users\runneradmin\Projects\My Project`
	for _, in := range []string{
		`C:\Users\runneradmin\Projects\My Project`,
		`c:\users\RUNNERADMIN\projects\my project`,
		`C:/Users/runneradmin/Projects/My Project`,
		`C:\Users\runneradmin\Projects\My Project\`,
		`C:\Users\runneradmin\Projects\My Project\\\`,
		`C:\Users\runneradmin\Projects\My Project.`,
		`C:\Users\runneradmin\Projects\My Project. .`,
		`C:\Users\runneradmin\.\Projects\x\..\My Project`,
		`C:\Users\runneradmin\Projects\My Project\sub\..`,
		`C:\..\Users\runneradmin\Projects\My Project`,
		`\\?\C:\Users\runneradmin\Projects\My Project`,
		`\\?\c:\Users\runneradmin\Projects\My Project\`,
		`\??\C:\Users\runneradmin\Projects\My Project`,
		`\\.\C:\Users\runneradmin\Projects\My Project`,
		`\\localhost\C$\Users\runneradmin\Projects\My Project`,
		`\\?\UNC\127.0.0.1\c$\Users\runneradmin\Projects\My Project`,
		`C:\Users\RUNNER~1\Projects\MYPROJ~1`,
		`c:/users/runner~1/projects/myproj~1/`,
		`\\?\C:\Users\RUNNER~1\Projects\My Project`,
	} {
		got, err := Canonicalize(in, r)
		if err != nil {
			t.Errorf("Canonicalize(%q): %v", in, err)
			continue
		}
		if Key(got) != Key(want) {
			t.Errorf("Canonicalize(%q) = %q, want %q", in, got, want)
		}
		sid, err := WriteSID(in, r)
		if err != nil {
			t.Fatal(err)
		}
		wantSID, _ := WriteSID(want, r)
		if sid != wantSID {
			t.Errorf("WriteSID(%q) = %s, want %s", in, sid, wantSID)
		}
	}
}

func TestCanonicalizeForms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`c:\`, `C:\`},
		{`C:`, ``}, // drive-relative: error
		{`c:/a/b/`, `C:\a\b`},
		{`\\Server\Share`, `\\Server\Share\`},
		{`\\server\share\dir\`, `\\server\share\dir`},
		{`//server/share/dir`, `\\server\share\dir`},
		{`\\?\UNC\server\share\dir`, `\\server\share\dir`},
		{`\\.\UNC\server\share\dir\..\x`, `\\server\share\x`},
		{`\\server\share\..\..\x`, `\\server\share\x`},
		{`\\?\Volume{0A1B2C3D-0000-0000-0000-000000000000}\dir`, `\\?\Volume{0a1b2c3d-0000-0000-0000-000000000000}\dir`},
		{`C:\a\...\b`, `C:\a\b`},
		{`C:\a\~b`, `C:\a\~b`}, // a tilde that resolves to nothing stays
	} {
		got, err := Canonicalize(tc.in, nil)
		if tc.want == "" {
			if err == nil {
				t.Errorf("Canonicalize(%q) = %q, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Canonicalize(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		// Idempotent.
		if again, err := Canonicalize(got, nil); err != nil || again != got {
			t.Errorf("Canonicalize(%q) = %q, %v; not idempotent", got, again, err)
		}
	}
}

func TestCanonicalizeRejects(t *testing.T) {
	for _, in := range []string{
		``,
		`relative\path`,
		`.\x`,
		`C:relative`,
		`C:`,
		`\rooted\on\current\drive`,
		`\\server`,
		`\\server\`,
		`\\\share\x`,
		"C:\\a\x00b",
		"C:\\a\x01b",
		`C:\a\b:stream`,
		`C:\a::$INDEX_ALLOCATION`,
		`C:\a\b*`,
		`C:\a\b?`,
		`C:\a\<b>`,
		`C:\a|b`,
		`\\.\PhysicalDrive0`,
		`\\.\pipe\x`,
		`\\?\GLOBALROOT\Device\HarddiskVolume1\x`,
		`\\?\Volume{bad}\x`,
		`1:\x`,
	} {
		if got, err := Canonicalize(in, nil); err == nil {
			t.Errorf("Canonicalize(%q) = %q, want an error", in, got)
		} else if !errors.Is(err, ErrBadPath) || !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("Canonicalize(%q): %v does not match ErrBadPath and ErrInvalidPolicy", in, err)
		}
	}
}

func TestCanonicalizeResolverError(t *testing.T) {
	// A resolver failing with something other than "not found" surfaces.
	bad := resolverFunc(func(string) (string, error) { return "", errBoom })
	if _, err := Canonicalize(`C:\Users\RUNNER~1`, bad); !errors.Is(err, errBoom) {
		t.Errorf("error %v, want errBoom", err)
	}
	// A path with no tilde never asks the resolver.
	if _, err := Canonicalize(`C:\Users\runneradmin`, bad); err != nil {
		t.Errorf("unexpected %v", err)
	}
	// A missing path keeps its short names.
	got, err := Canonicalize(`C:\Users\RUNNER~1\missing~1\x`, shortNames())
	if err != nil || got != `C:\Users\runneradmin\missing~1\x` {
		t.Errorf("got %q, %v", got, err)
	}
}

type resolverFunc func(string) (string, error)

func (f resolverFunc) LongPathName(p string) (string, error) { return f(p) }

func TestWirePath(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{`C:\src\proj`, "/??/C:/src/proj", ""},
		{`c:/src/proj/`, "/??/C:/src/proj", ""},
		{`D:\`, "/??/D:", ""},
		{`\\srv\share\a b`, "/??/UNC/srv/share/a b", ""},
		{`\\?\UNC\srv\share\x`, "/??/UNC/srv/share/x", ""},
		{`\\?\Volume{01234567-89ab-cdef-0123-456789abcdef}\x`, "/??/Volume{01234567-89ab-cdef-0123-456789abcdef}/x", ""},
		{`\\localhost\C$\x`, "/??/C:/x", ""},
		{`src\proj`, "", "relative"},
		{"/home/me", "", "not absolute"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := WirePath(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("WirePath(%q) = %q, %v; want error %q", c.in, got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("WirePath(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
			if vocab.CheckPath(got) != nil {
				t.Errorf("%q is not a vocabulary path: %v", got, vocab.CheckPath(got))
			}
			want, _ := Canonicalize(c.in, nil)
			if back, err := Canonicalize(got, nil); err != nil || back != want {
				t.Errorf("Canonicalize(%q) = %q, %v; want %q", got, back, err, want)
			}
		})
	}
}
