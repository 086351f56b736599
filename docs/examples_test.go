package docs

import (
	"regexp"
	"strings"
	"testing"
)

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestGoBlocksAreFromTheExamples: every Go block in the Markdown files is
// an excerpt, verbatim, of a program under examples/ that its own test
// compiles and runs, so what a reader copies cannot drift from code that
// works.
func TestGoBlocksAreFromTheExamples(t *testing.T) {
	var examples []string
	walk(t, "../examples", func(p, text string) {
		if strings.HasSuffix(p, ".go") {
			examples = append(examples, text)
		}
	})
	if len(examples) == 0 {
		t.Fatal("no program under examples/")
	}
	n := 0
	walk(t, "..", func(p, text string) {
		if !strings.HasSuffix(p, ".md") {
			return
		}
		for _, m := range goBlock.FindAllStringSubmatch(text, -1) {
			n++
			found := false
			for _, e := range examples {
				found = found || strings.Contains(e, m[1])
			}
			if !found {
				t.Errorf("%s: a Go block that is not an excerpt of a program under examples/:\n%s", p, m[1])
			}
		}
	})
	if n == 0 {
		t.Error("no Go block found in the Markdown files: the test proves nothing")
	}
}
