package seatbelt

import (
	"fmt"
	"regexp"
	"strings"
)

// This file is a small SBPL reader for the tests: it parses a profile as
// S-expressions, checks its structure, and evaluates its file rules, so the
// tests judge the generated text itself rather than the code that wrote it.

type sexpKind int

const (
	symbolAtom sexpKind = iota
	stringAtom          // "..." with \" and \\ escapes
	rawAtom             // #"..." (SBPL's regex literal, no escapes)
	listNode
)

type sexp struct {
	kind sexpKind
	atom string
	list []*sexp
}

func (s *sexp) String() string {
	switch s.kind {
	case symbolAtom:
		return s.atom
	case stringAtom:
		return fmt.Sprintf("%q", s.atom)
	case rawAtom:
		return `#"` + s.atom + `"`
	}
	parts := make([]string, len(s.list))
	for i, e := range s.list {
		parts[i] = e.String()
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// head returns the symbol a list starts with, or "".
func (s *sexp) head() string {
	if s.kind == listNode && len(s.list) > 0 && s.list[0].kind == symbolAtom {
		return s.list[0].atom
	}
	return ""
}

// parseSBPL reads every top-level form of text. It fails on unbalanced
// parentheses, unterminated strings and atoms outside a list.
func parseSBPL(text string) ([]*sexp, error) {
	var stack [][]*sexp
	var top []*sexp
	push := func(e *sexp) error {
		if len(stack) == 0 {
			if e.kind != listNode {
				return fmt.Errorf("atom %s outside a list", e)
			}
			top = append(top, e)
			return nil
		}
		stack[len(stack)-1] = append(stack[len(stack)-1], e)
		return nil
	}
	line := 1
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == ';':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '(':
			stack = append(stack, nil)
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, fmt.Errorf("line %d: unbalanced ')'", line)
			}
			l := &sexp{kind: listNode, list: stack[len(stack)-1]}
			stack = stack[:len(stack)-1]
			if err := push(l); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			i++
		case c == '"':
			var b strings.Builder
			i++
			for {
				if i >= len(text) {
					return nil, fmt.Errorf("line %d: unterminated string", line)
				}
				if text[i] == '\\' && i+1 < len(text) {
					b.WriteByte(text[i+1])
					i += 2
					continue
				}
				if text[i] == '"' {
					i++
					break
				}
				if text[i] == '\n' {
					line++
				}
				b.WriteByte(text[i])
				i++
			}
			if err := push(&sexp{kind: stringAtom, atom: b.String()}); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
		case c == '#' && i+1 < len(text) && text[i+1] == '"':
			end := strings.IndexByte(text[i+2:], '"')
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated #\"", line)
			}
			if err := push(&sexp{kind: rawAtom, atom: text[i+2 : i+2+end]}); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			i += 2 + end + 1
		default:
			j := i
			for j < len(text) && !strings.ContainsRune(" \t\r\n();\"", rune(text[j])) {
				j++
			}
			if err := push(&sexp{kind: symbolAtom, atom: text[i:j]}); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("%d unclosed '('", len(stack))
	}
	return top, nil
}

// pathFilters are the SBPL filters whose argument is a path.
var pathFilters = map[string]bool{"literal": true, "subpath": true, "prefix": true, "path": true}

// allowedRegexes are the only regex literals a profile may hold: fixed
// device patterns, written out here independently of the package.
var allowedRegexes = map[string]bool{`^/dev/ttys[0-9]+$`: true}

// caseVariantShape is the one grammar of the regexes that match a missing
// protected name in any letter case: a run of "/[^/]+" (the depth of the
// existing ancestor), then per name "(EXACT|LOOSE)", then "(/|$)". EXACT is
// bracket expressions of a letter pair or one of [0-9._-]; LOOSE is
// "SET*[^ -~](SET|[^ -~])*". No quote, backslash or parenthesis
// of SBPL can appear in it; isCaseVariantRegex checks the rest.
var caseVariantShape = regexp.MustCompile(`^\^(/\[\^/\]\+)*(/\(((\[[a-z][A-Z]\]|\[[0-9._-]\])+)\|(\[[a-zA-Z0-9._-]+\])\*\[\^ -~\]\((\[[a-zA-Z0-9._-]+\])\|\[\^ -~\]\)\*\))+\(/\|\$\)$`)

var caseVariantName = regexp.MustCompile(`/\(((?:\[[a-z][A-Z]\]|\[[0-9._-]\])+)\|(\[[a-zA-Z0-9._-]+\])\*\[\^ -~\]\((\[[a-zA-Z0-9._-]+\])\|\[\^ -~\]\)\*\)`)

// isCaseVariantRegex reports whether s has caseVariantShape and, in each
// name, the letter pairs are one letter in both cases and both sets hold
// exactly the name's characters in both cases ('-' last).
func isCaseVariantRegex(s string) bool {
	if !caseVariantShape.MatchString(s) {
		return false
	}
	for _, m := range caseVariantName.FindAllStringSubmatch(s, -1) {
		exact, set1, set2 := m[1], m[2], m[3]
		if set1 != set2 {
			return false
		}
		chars := map[rune]bool{}
		for _, cls := range regexp.MustCompile(`\[([^\]]+)\]`).FindAllStringSubmatch(exact, -1) {
			r := []rune(cls[1])
			if len(r) == 2 && (r[1] != r[0]-'a'+'A') {
				return false
			}
			for _, c := range r {
				chars[c] = true
			}
		}
		inner := strings.Trim(set1, "[]")
		if strings.Contains(strings.TrimSuffix(inner, "-"), "-") || len(inner) != len(chars) {
			return false
		}
		for _, c := range inner {
			if !chars[c] {
				return false
			}
		}
	}
	return true
}

var paramName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// checkProfile checks the structure of p and returns every problem found:
// balanced, (version 1) then (deny default) first, every path a
// (param ...), every param used passed with -D and every -D used, and no
// parameter value spliced into the text.
func checkProfile(p Profile) []string {
	var probs []string
	forms, err := parseSBPL(p.Text)
	if err != nil {
		return []string{"parse: " + err.Error()}
	}
	if len(forms) < 2 || forms[0].String() != "(version 1)" || forms[1].String() != "(deny default)" {
		probs = append(probs, "profile must open with (version 1) then (deny default)")
	}
	used := map[string]bool{}
	var walk func(e, parent *sexp)
	walk = func(e, parent *sexp) {
		switch e.kind {
		case stringAtom:
			ph := ""
			if parent != nil {
				ph = parent.head()
			}
			switch {
			case ph == "param":
				if !paramName.MatchString(e.atom) {
					probs = append(probs, fmt.Sprintf("parameter name %q is not plain ASCII", e.atom))
				}
				used[e.atom] = true
			case strings.HasPrefix(e.atom, "/") && ph != "ipc-posix-name-prefix":
				probs = append(probs, fmt.Sprintf("path literal %q in %s", e.atom, parent))
			}
		case rawAtom:
			if parent == nil || parent.head() != "regex" || !allowedRegexes[e.atom] && !isCaseVariantRegex(e.atom) {
				probs = append(probs, fmt.Sprintf("unexpected regex %s in %s", e, parent))
			}
		case listNode:
			if h := e.head(); pathFilters[h] {
				if len(e.list) != 2 || e.list[1].head() != "param" || len(e.list[1].list) != 2 || e.list[1].list[1].kind != stringAtom {
					probs = append(probs, fmt.Sprintf("path filter %s does not take a (param \"NAME\")", e))
				}
			}
			if e.head() == "regex" && (len(e.list) != 2 || e.list[1].kind != rawAtom) {
				probs = append(probs, fmt.Sprintf("regex %s does not take a fixed pattern", e))
			}
			for _, c := range e.list {
				walk(c, e)
			}
		}
	}
	for _, f := range forms {
		walk(f, nil)
	}
	passed := map[string]bool{}
	for _, prm := range p.Params {
		if passed[prm.Name] {
			probs = append(probs, fmt.Sprintf("-D %s passed twice", prm.Name))
		}
		passed[prm.Name] = true
		if !used[prm.Name] {
			probs = append(probs, fmt.Sprintf("-D %s passed but never used", prm.Name))
		}
		if len(prm.Value) > 1 && strings.Contains(withoutRegexes(p.Text), prm.Value) {
			probs = append(probs, fmt.Sprintf("value of %s (%q) appears in the text", prm.Name, prm.Value))
		}
	}
	for n := range used {
		if !passed[n] {
			probs = append(probs, fmt.Sprintf("(param %q) used but not passed with -D", n))
		}
	}
	return probs
}

// checkGitExcluded checks that, in the file-write* allow, every writable
// root's require-all excludes (literal and subpath) each READ_ONLY_*
// parameter whose value is that root's .git/hooks or .git/config, and that
// a later deny names them too. want is how many (root, git path) pairs must be found, so
// the check cannot pass by finding nothing.
func checkGitExcluded(p Profile, want int) []string {
	forms, err := parseSBPL(p.Text)
	if err != nil {
		return []string{"parse: " + err.Error()}
	}
	values := map[string]string{}
	for _, prm := range p.Params {
		values[prm.Name] = prm.Value
	}
	var probs []string
	found := 0
	denied := map[string]bool{} // "literal NAME" / "subpath NAME" in a deny file-write*
	for _, f := range forms {
		if f.head() == "deny" && len(f.list) > 1 && f.list[1].atom == "file-write*" {
			for _, flt := range f.list[2:] {
				if pathFilters[flt.head()] {
					denied[flt.head()+" "+flt.list[1].list[1].atom] = true
				}
			}
		}
	}
	for _, f := range forms {
		if f.head() != "allow" || len(f.list) < 2 || f.list[1].atom != "file-write*" {
			continue
		}
		for _, flt := range f.list[2:] {
			if flt.head() != "require-all" {
				continue
			}
			var roots []string
			excluded := map[string]bool{}
			for _, part := range flt.list[1:] {
				switch part.head() {
				case "subpath":
					roots = append(roots, values[part.list[1].list[1].atom])
				case "require-any":
					for _, alt := range part.list[1:] {
						if alt.head() == "subpath" {
							roots = append(roots, values[alt.list[1].list[1].atom])
						}
					}
				case "require-not":
					inner := part.list[1]
					excluded[inner.head()+" "+inner.list[1].list[1].atom] = true
				}
			}
			for _, root := range roots {
				if !strings.HasPrefix(root, "/Users/") {
					continue // the temporary directory
				}
				for name, v := range values {
					if !strings.HasPrefix(name, "READ_ONLY_") || v != root+"/.git/hooks" && v != root+"/.git/config" {
						continue
					}
					found++
					for _, kind := range []string{"literal", "subpath"} {
						if !excluded[kind+" "+name] {
							probs = append(probs, fmt.Sprintf("writable root %s: %s %s (%s) not excluded", root, kind, name, v))
						}
						if !denied[kind+" "+name] {
							probs = append(probs, fmt.Sprintf("%s %s (%s) not denied after the allows", kind, name, v))
						}
					}
				}
			}
		}
	}
	if found != want {
		probs = append(probs, fmt.Sprintf("found %d (root, .git path) exclusions, want %d", found, want))
	}
	return probs
}

// rule is one top-level allow or deny.
type rule struct {
	allow   bool
	ops     []string
	filters []*sexp
}

// evaluator decides file operations against a parsed profile, under two
// models of rule precedence: the last matching rule wins, or any matching
// deny (other than the default) beats any allow. A sound profile gives the
// same answer under both.
type evaluator struct {
	rules  []rule
	params map[string]string
}

func newEvaluator(p Profile) (*evaluator, error) {
	forms, err := parseSBPL(p.Text)
	if err != nil {
		return nil, err
	}
	ev := &evaluator{params: map[string]string{}}
	for _, prm := range p.Params {
		ev.params[prm.Name] = prm.Value
	}
	for _, f := range forms {
		h := f.head()
		if h != "allow" && h != "deny" {
			continue
		}
		r := rule{allow: h == "allow"}
		for _, e := range f.list[1:] {
			if e.kind == symbolAtom {
				r.ops = append(r.ops, e.atom)
			} else {
				r.filters = append(r.filters, e)
			}
		}
		ev.rules = append(ev.rules, r)
	}
	return ev, nil
}

func opMatches(ruleOp, op string) bool {
	return ruleOp == "default" || ruleOp == op ||
		strings.HasSuffix(ruleOp, "*") && strings.HasPrefix(op, strings.TrimSuffix(ruleOp, "*"))
}

func (ev *evaluator) arg(e *sexp) string {
	if e.head() == "param" {
		v, ok := ev.params[e.list[1].atom]
		if !ok {
			return "\x00unpassed" // matches no path; checkProfile reports it
		}
		return v
	}
	return e.atom
}

// match evaluates a filter against path. Filters this evaluator does not
// model (extension, target, vnode-type, ...) never match a path.
func (ev *evaluator) match(f *sexp, path string) bool {
	switch f.head() {
	case "literal":
		return path == ev.arg(f.list[1])
	case "subpath":
		v := ev.arg(f.list[1])
		return path == v || v == "/" || strings.HasPrefix(path, v+"/")
	case "regex":
		return regexp.MustCompile(f.list[1].atom).MatchString(path)
	case "require-all":
		for _, c := range f.list[1:] {
			if !ev.match(c, path) {
				return false
			}
		}
		return true
	case "require-any":
		for _, c := range f.list[1:] {
			if ev.match(c, path) {
				return true
			}
		}
		return false
	case "require-not":
		return !ev.match(f.list[1], path)
	}
	return false
}

func (ev *evaluator) ruleMatches(r rule, op, path string) bool {
	opOK := false
	for _, o := range r.ops {
		if opMatches(o, op) {
			opOK = true
		}
	}
	if !opOK {
		return false
	}
	if len(r.filters) == 0 {
		return true
	}
	for _, f := range r.filters {
		if ev.match(f, path) {
			return true
		}
	}
	return false
}

// decide returns the verdict under each precedence model.
func (ev *evaluator) decide(op, path string) (lastMatch, denyWins bool) {
	anyAllow, anyDeny := false, false
	for _, r := range ev.rules {
		if !ev.ruleMatches(r, op, path) {
			continue
		}
		lastMatch = r.allow
		if r.allow {
			anyAllow = true
		} else if !(len(r.ops) == 1 && r.ops[0] == "default") {
			anyDeny = true
		}
	}
	return lastMatch, anyAllow && !anyDeny
}

var regexLiteral = regexp.MustCompile(`#"[^"]*"`)

// withoutRegexes is text with its #"..." literals removed: they are the
// fixed patterns allowedRegexes admits, and may share a prefix with a
// device path.
func withoutRegexes(text string) string { return regexLiteral.ReplaceAllString(text, `#""`) }

// explicitlyDenied reports whether a deny rule other than the default
// matches op on path: the protection then holds even if a later change
// allows op somewhere above it.
func (ev *evaluator) explicitlyDenied(op, path string) bool {
	for _, r := range ev.rules {
		if !r.allow && !(len(r.ops) == 1 && r.ops[0] == "default") && ev.ruleMatches(r, op, path) {
			return true
		}
	}
	return false
}
