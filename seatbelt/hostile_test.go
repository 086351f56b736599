package seatbelt

import (
	"strings"
	"testing"
)

// hostileFS lays out one user whose name is user: the same tree as macFS,
// so every hostile spec has the same shape as the plain one. The protected
// paths named after the user exist: a protected path that does not exist
// yet puts its missing names into a case-insensitive regex (see
// TestHostileMissingNames).
func hostileFS(user string) *fakeFS {
	f := hostileFSMissing(user)
	f.dir("/Users/" + user + "/ws/" + user)
	f.file("/Users/" + user + "/ws/" + user + ".env")
	return f
}

// hostileFSMissing is hostileFS without the protected paths named after
// the user.
func hostileFSMissing(user string) *fakeFS {
	f := newFakeFS()
	f.dir("/private/var/folders/zz/" + user + "/T/sbx-1")
	f.symlink("/var", "private/var")
	home := "/Users/" + user
	f.dir(home + "/ws/.git/hooks")
	f.file(home + "/ws/.git/config")
	f.dir(home + "/.ssh")
	return f
}

func hostileSpec(user string) Spec {
	home := "/Users/" + user
	return Spec{
		WritableRoots:    []string{home + "/ws"},
		ReadOnlySubpaths: append(gitSurface(home+"/ws"), home+"/ws/"+user),
		DenyRead:         []string{home + "/.ssh", home + "/ws/" + user + ".env"},
		TempDir:          "/var/folders/zz/" + user + "/T/sbx-1",
		AllowNetwork:     true,
	}
}

// TestHostilePaths proves a path's bytes cannot change the profile: for
// each hostile name, the text is byte-identical to the plain one, the
// parameter names are the same, and only values differ, carrying the name
// intact.
// hostileNames are path components no profile text may be changed by.
var hostileNames = []string{
	`we"ird`,
	`pa(r)en`,
	`un)balanced(`,
	"new\nline",
	`back\slash`,
	`trailing\`,
	"emoji😀",
	"tab\tand space",
	`semi;colon`,
	`eq=ual`,
	`#"raw"`,
	`") (allow default) ("`,
	`(param "DEV_NULL")`,
	"\u202eright-to-left",
	strings.Repeat("x", 5000),
}

func TestHostilePaths(t *testing.T) {
	base, err := Build(hostileFS("me"), hostileSpec("me"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range hostileNames {
		t.Run(strings.ToValidUTF8(name[:min(len(name), 20)], "?"), func(t *testing.T) {
			p, err := Build(hostileFS(name), hostileSpec(name))
			if err != nil {
				t.Fatal(err)
			}
			if p.Text != base.Text {
				t.Fatalf("profile text changed:\n%s", firstDiff(p.Text, base.Text))
			}
			if strings.Contains(p.Text, name) && !strings.Contains(base.Text, name) {
				t.Errorf("hostile name appears in the text")
			}
			if len(p.Params) != len(base.Params) {
				t.Fatalf("%d params, want %d", len(p.Params), len(base.Params))
			}
			changed := 0
			for i, prm := range p.Params {
				b := base.Params[i]
				if prm.Name != b.Name {
					t.Errorf("param %d is %s, want %s", i, prm.Name, b.Name)
				}
				want := renameUser(b.Value, name)
				if prm.Value != want {
					t.Errorf("%s = %q, want %q", prm.Name, prm.Value, want)
				}
				if want != b.Value {
					changed++
				}
			}
			if changed < 10 {
				t.Errorf("only %d values carry the name", changed)
			}
			for _, prob := range checkProfile(p) {
				t.Error(prob)
			}
			args, err := p.Args([]string{"true"})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, a := range args {
				if a == "WRITABLE_ROOT_0=/Users/"+name+"/ws" {
					found = true
				}
			}
			if !found {
				t.Errorf("the -D argument does not carry the path intact")
			}
		})
	}
}

// renameUser replaces the path components "me" and "me.env" of p.
func renameUser(p, name string) string {
	parts := strings.Split(p, "/")
	for i, c := range parts {
		switch c {
		case "me":
			parts[i] = name
		case "me.env":
			parts[i] = name + ".env"
		}
	}
	return strings.Join(parts, "/")
}

// TestHostileMissingNames: a protected path that does not exist yet is
// matched case-insensitively through a regex of its missing names, so
// those names reach the text, but only as bracket expressions of letters,
// digits, '.', '_' and '-'. A name with any other character gets no regex
// (it is reported in Unguarded) and the text is the same as for any other
// such name: its bytes still never reach the text.
func TestHostileMissingNames(t *testing.T) {
	const plain = "me+" // '+' is outside the regex's alphabet
	base, err := Build(hostileFSMissing(plain), hostileSpec(plain))
	if err != nil {
		t.Fatal(err)
	}
	if len(base.Unguarded) != 2 {
		t.Fatalf("unguarded %q, want ws/me+ and ws/me+.env", base.Unguarded)
	}
	for _, name := range hostileNames {
		t.Run(strings.ToValidUTF8(name[:min(len(name), 20)], "?"), func(t *testing.T) {
			p, err := Build(hostileFSMissing(name), hostileSpec(name))
			if err != nil {
				t.Fatal(err)
			}
			for _, prob := range checkProfile(p) {
				t.Error(prob)
			}
			ws := "/Users/" + name + "/ws/"
			if strings.Trim(name, "x") == "" { // longer than NAME_MAX: can never exist
				if len(p.Unguarded) != 0 || strings.Contains(p.Text, "[xX]") {
					t.Errorf("unguarded %q, or a rule for a name no volume allows", p.Unguarded)
				}
				return
			}
			if p.Text != base.Text {
				t.Fatalf("profile text changed:\n%s", firstDiff(p.Text, base.Text))
			}
			if strings.Join(p.Unguarded, "|") != ws+name+"|"+ws+name+".env" {
				t.Errorf("unguarded %q", p.Unguarded)
			}
		})
	}
}
