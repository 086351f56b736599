// Package docs holds the project's documents; its test checks that every
// relative link in the repository's Markdown files, and every docs/ path a
// source comment names, points at a file (and heading) that exists.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeRef   = regexp.MustCompile(`\b(docs/[A-Za-z0-9_./-]*[A-Za-z0-9_/-]|SECURITY\.md|integration/README\.md)`)
	heading   = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*$`)
	notAnchor = regexp.MustCompile(`[^a-z0-9 _-]`)
)

// anchors returns the GitHub anchors of a Markdown file's headings.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(string(b), -1) {
		a := notAnchor.ReplaceAllString(strings.ToLower(m[1]), "")
		set[strings.ReplaceAll(a, " ", "-")] = true
	}
	return set
}

func walk(t *testing.T, root string, fn func(path string, text string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fn(p, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMarkdownLinks: every relative link in a .md file names an existing
// file, and its #fragment an existing heading there.
func TestMarkdownLinks(t *testing.T) {
	n := 0
	walk(t, "..", func(p, text string) {
		if !strings.HasSuffix(p, ".md") {
			return
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := p
			if file != "" {
				dest = filepath.Join(filepath.Dir(p), file)
			}
			n++
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: link %q: %v", p, target, err)
				continue
			}
			if frag != "" && !anchors(t, dest)[frag] {
				t.Errorf("%s: link %q: no heading with anchor #%s in %s", p, target, frag, dest)
			}
		}
	})
	if n == 0 {
		t.Fatal("no relative links found: the walk is broken")
	}
}

// TestSourceReferences: every docs/ path, SECURITY.md and
// integration/README.md named in a source file exists.
func TestSourceReferences(t *testing.T) {
	n := 0
	walk(t, "..", func(p, text string) {
		switch filepath.Ext(p) {
		case ".go", ".c", ".h", ".sh":
		default:
			if !strings.HasPrefix(filepath.Base(filepath.Dir(p)), "scripts") && filepath.Base(p) != "run" {
				return
			}
		}
		if strings.HasSuffix(p, "links_test.go") {
			return
		}
		for _, ref := range codeRef.FindAllString(text, -1) {
			n++
			if _, err := os.Stat(filepath.Join("..", strings.TrimSuffix(ref, "."))); err != nil {
				t.Errorf("%s names %s, which does not exist", p, ref)
			}
		}
	})
	if n == 0 {
		t.Fatal("no references found: the walk is broken")
	}
}
