package docs

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// fileName is a backquoted file name in the layout: `ns_plan_linux.c`.
var fileName = regexp.MustCompile("`([A-Za-z0-9_]+\\.(?:go|c|h))`")

// launcherRooms are the prefixes that say which launcher a file of
// launcher/ belongs to; launcherEntry are the files every launcher goes
// through, which need none.
var (
	launcherRooms = []string{"ns_", "landlock_", "shared_", "seatbelt_"}
	launcherEntry = map[string]bool{
		"init.go": true, "init_linux.go": true, "init_windows.go": true, "init_other.go": true,
		"fatal.go": true, "cgo_linux.go": true, "nocgo_linux.go": true, "nocgo_linux_test.go": true,
	}
)

// TestLauncherLayout: contributing.md's list of launcher/ names every
// file there, and no other, and each file is in a room (ns_, landlock_,
// shared_, seatbelt_) or is the package's entry. cgo builds only the C
// files of the package's own directory, so the rooms are file prefixes,
// and a name is all a reader has to tell which launcher a file serves.
func TestLauncherLayout(t *testing.T) {
	b, err := os.ReadFile("contributing.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n- `launcher/`")
	if start < 0 {
		t.Fatal("contributing.md has no launcher/ item")
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n- "); end >= 0 {
		section = section[:end]
	}
	listed := map[string]bool{}
	for _, m := range fileName.FindAllStringSubmatch(section, -1) {
		listed[m[1]] = true
	}
	entries, err := os.ReadDir("../launcher")
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		present[name] = true
		if !listed[name] {
			t.Errorf("launcher/%s is not in contributing.md's layout", name)
		}
		if !launcherEntry[name] && !hasAnyPrefix(name, launcherRooms) {
			t.Errorf("launcher/%s is in no room (%s) and is not the entry", name, strings.Join(launcherRooms, ", "))
		}
	}
	for name := range listed {
		if !present[name] {
			t.Errorf("contributing.md's layout names launcher/%s, which does not exist", name)
		}
	}
	if len(present) == 0 {
		t.Fatal("launcher/ has no files: the walk is broken")
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
