package seatbelt

import (
	"strings"
	"testing"
)

// hostileFS lays out one user whose name is user: the same tree as macFS,
// so every hostile spec has the same shape as the plain one.
func hostileFS(user string) *fakeFS {
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
func TestHostilePaths(t *testing.T) {
	base, err := Build(hostileFS("me"), hostileSpec("me"))
	if err != nil {
		t.Fatal(err)
	}
	hostile := []string{
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
	for _, name := range hostile {
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
