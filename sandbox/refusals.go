package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// RefusalKind says what kind of access the sandbox refused.
type RefusalKind string

// The kinds of a Refusal.
const (
	RefusedWrite   RefusalKind = "write"   // a path outside the writable roots, or a protected one
	RefusedRead    RefusalKind = "read"    // a deny-read path
	RefusedNetwork RefusalKind = "network" // a host, under network deny or through the proxy
	RefusedEnv     RefusalKind = "env"     // a variable withheld as a credential
)

// Refusal is one distinct thing the sandbox refused during a run: what
// (Target: a path, a host, a variable), why (Rule) and the change that
// would allow it (Allow: a sandbox-run flag and the Policy field; empty
// when nothing releases it).
type Refusal struct {
	Kind   RefusalKind `json:"kind"`
	Target string      `json:"target"`
	Rule   string      `json:"rule"`
	Allow  string      `json:"allow,omitempty"`
	// Seen is "sandbox" when the sandbox itself refused it and recorded
	// it (the domain proxy; the namespaces runner's guard, for a protected
	// name; the landlock runner's supervisor, for a metadata change
	// outside the writable roots), "output" when it was matched from the
	// command's stderr against the policy: a path, host or variable named
	// next to an error that this policy explains and that the user's own
	// permissions would not have caused.
	Seen string `json:"seen"`
	// Op is what was tried, when the guard or the supervisor recorded it:
	// create, write, truncate, rename, link (the guard); chmod, chown,
	// times, xattr, flags (the supervisor).
	Op string `json:"op,omitempty"`
}

// String is the refusal as one line: "write /x: outside the writable
// roots (...); --allow-write / (Policy.WritableRoots) allows it", with
// what was tried after the target when it was recorded ("write /x
// (chmod): ...").
func (r Refusal) String() string {
	s := fmt.Sprintf("%s %s: %s", r.Kind, r.Target, r.Rule)
	if r.Op != "" {
		s = fmt.Sprintf("%s %s (%s): %s", r.Kind, r.Target, r.Op, r.Rule)
	}
	if r.Allow != "" {
		s += "; " + r.Allow + " allows it"
	}
	return s
}

// maxRefusals bounds the refusals one outcome lists.
const maxRefusals = 20

// hostAccess answers, for the user outside the sandbox, whether the host's
// own permissions allow reading or writing a path (an absent path: whether
// it could be created), so a refusal they would have caused anyway is not
// blamed on the sandbox. Tests replace it.
var hostAccess = hostPermits

// The error wordings of the common tools (coreutils and shells, Go,
// Python, Node, Rust, git), lower-cased.
var (
	roWords     = []string{"read-only file system", "erofs", "os error 30"}
	deniedWords = []string{"permission denied", "eacces", "os error 13", "operation not permitted", "eperm", "os error 1)"}
	absentWords = []string{"no such file or directory", "enoent", "os error 2)", "cannot find the path"}
	dnsWords    = []string{"could not resolve host", "couldn't resolve host", "temporary failure in name resolution",
		"name or service not known", "no such host", "enotfound", "eai_again", "unable to resolve host",
		"network is unreachable", "nodename nor servname"}
)

// The patterns are compiled on first use, not at package init: a program
// importing the package pays for them only when an output is classified,
// and a command that printed nothing never needs them.
var (
	quoted = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("'([^'\\n]+)'|\"([^\"\\n]+)\"|`([^`'\\n]+)['`]|‘([^’\\n]+)’")
	})
	hostAfter = sync.OnceValue(func() []*regexp.Regexp {
		return []*regexp.Regexp{
			regexp.MustCompile(`(?i)resolve host:?\s*['‘]?([a-z0-9][a-z0-9.-]*[a-z0-9])`),
			regexp.MustCompile(`(?i)resolve host address\s*['‘]?([a-z0-9][a-z0-9.-]*[a-z0-9])`),
			regexp.MustCompile(`(?i)\blookup ([a-z0-9][a-z0-9.-]*\.[a-z0-9-]+)`),
			regexp.MustCompile(`(?i)enotfound ([a-z0-9][a-z0-9.-]*[a-z0-9])`),
			regexp.MustCompile(`(?i)eai_again ([a-z0-9][a-z0-9.-]*[a-z0-9])`),
			regexp.MustCompile(`(?i)host='([a-z0-9][a-z0-9.-]*[a-z0-9])'`),
			regexp.MustCompile(`(?i)https?://([a-z0-9][a-z0-9.-]*\.[a-z0-9-]+)`),
		}
	})
)

// refusals returns what the proxy refused, what the guard or supervisor
// recorded (records, vocab's format), and what a run's stderr shows
// matched against the wrap's policy, in that order, each distinct
// refusal once (the first, so the sandbox's own record wins over the
// output's); and at least how many distinct ones are not listed.
func (r *pathRules) refusals(stderr []byte, blocked []BlockedRequest, records []byte) ([]Refusal, int) {
	var out []Refusal
	seen := map[string]bool{}
	unlisted := 0
	add := func(f Refusal) {
		key := string(f.Kind) + "\x00" + f.Target
		if seen[key] {
			return
		}
		seen[key] = true
		if len(out) < maxRefusals {
			out = append(out, f)
		} else {
			unlisted++
		}
	}
	for _, b := range blocked {
		add(Refusal{Kind: RefusedNetwork, Target: fmt.Sprintf("%s:%d", b.Host, b.Port), Rule: "the domain proxy: " + b.Reason,
			Allow: "--allow-domain " + b.Host + " (Policy.AllowDomains)", Seen: "sandbox"})
	}
	recs, more := vocab.ParseRefusalRecords(records)
	for _, rec := range recs {
		add(r.recordedRefusal(rec))
	}
	unlisted += more
	lines := strings.Split(string(bytes.ToValidUTF8(stderr, []byte("?"))), "\n")
	for i, line := range lines {
		low := strings.ToLower(line)
		switch {
		case containsAny(low, dnsWords) && r.network == NetworkDeny:
			host, allow := hostIn(line), "--allow-domain HOST"
			if host != "" {
				allow = "--allow-domain " + host
			} else {
				host = "the network"
			}
			add(Refusal{Kind: RefusedNetwork, Target: host, Rule: "network deny: the command reaches no host",
				Allow: allow + " (Policy.AllowDomains, proxied) or --network allow (Policy.Network)", Seen: "output"})
		case containsAny(low, roWords), containsAny(low, deniedWords), containsAny(low, absentWords):
			cands := pathsIn(line, low)
			for j := i - 1; len(cands) == 0 && j >= 0 && j >= i-3; j-- {
				cands = quotedPaths(lines[j]) // cargo and rustc name the path lines above the cause
			}
			for _, c := range cands {
				if f, ok := r.pathRefusal(c, low); ok {
					add(f)
				}
			}
		}
		for _, v := range r.withheld {
			if wordIn(line, v) {
				add(Refusal{Kind: RefusedEnv, Target: v, Rule: "withheld: it looks like a credential",
					Allow: "--keep-env " + v + " (Policy.Env.Keep)", Seen: "output"})
			}
		}
	}
	return out, unlisted
}

// recordedRefusal is the refusal a guard or supervisor recorded: the
// rule and the change that allows it as the policy words them at that
// path (writeRefusal), or, should the policy call the path writable (the
// guard and the policy disagree), the record's own rule.
func (r *pathRules) recordedRefusal(rec vocab.RefusalRecord) Refusal {
	target := rec.Path
	if rec.Cut {
		target += "..."
	}
	if !utf8.ValidString(target) || strings.ContainsFunc(target, unicode.IsControl) {
		// A name the command chose: quoted, so that no byte of it is
		// taken for anything but the name.
		target = strconv.Quote(target)
	}
	f := Refusal{Kind: RefusedWrite, Target: target, Seen: "sandbox", Op: rec.Op}
	if w, ok := r.writeRefusal(rec.Path); ok && !rec.Cut {
		f.Rule, f.Allow = w.Rule, w.Allow
		return f
	}
	f.Rule = "a protected name, refused by the guard"
	if rec.Rule == vocab.RefusalRuleOutside {
		f.Rule = "outside the writable roots, refused by the supervisor"
	}
	return f
}

// writeRefusal is the refused write at path as the policy words it, and
// whether the policy refuses writing there.
func (r *pathRules) writeRefusal(path string) (Refusal, bool) {
	a := r.explain(path)
	return Refusal{Kind: RefusedWrite, Target: a.Path, Rule: a.WriteRule, Allow: a.AllowWrite}, !a.Write
}

// pathRefusal judges one path named next to an error: a refusal when the
// policy refuses that access there and the host's own permissions would
// have allowed it.
//
// A deny-read path is only ever a refused read (an error naming one says
// nothing of a write). A "permission denied" on an object the user cannot
// read on the host is the host's own refusal, whatever the command tried.
func (r *pathRules) pathRefusal(p, low string) (Refusal, bool) {
	a := r.explain(p)
	denied := containsAny(low, deniedWords)
	switch {
	case !a.Read:
		if (containsAny(low, absentWords) || denied) && hostAccess(a.Path, false) {
			return Refusal{Kind: RefusedRead, Target: a.Path, Rule: a.ReadRule, Allow: a.AllowRead, Seen: "output"}, true
		}
	case !a.Write && (containsAny(low, roWords) || denied) && hostAccess(a.Path, true):
		if denied && hostExists(a.Path) && !hostAccess(a.Path, false) {
			return Refusal{}, false
		}
		f, _ := r.writeRefusal(a.Path)
		f.Seen = "output"
		return f, true
	}
	return Refusal{}, false
}

// hostExists reports whether p names something on the host; tests
// replace it with hostAccess.
var hostExists = func(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// pathsIn returns the path a line of error output names: of the quoted
// strings, the absolute and ./ ../ words, and the name before ": error" in
// the "tool: name: error" form (which may be relative), the one nearest
// before the error's wording (sh, coreutils, Go, git), else the first after
// it (Python, Node): one path per line, never the tool's own name.
func pathsIn(line, low string) []string {
	at := firstIndex(low, roWords, deniedWords, absentWords)
	if at < 0 {
		return nil
	}
	type cand struct {
		p   string
		pos int
	}
	var cands []cand
	for _, m := range quoted().FindAllStringSubmatchIndex(line, -1) {
		for g := 2; g < len(m); g += 2 {
			if m[g] >= 0 && looksLikePath(line[m[g]:m[g+1]]) {
				cands = append(cands, cand{line[m[g]:m[g+1]], m[g]})
			}
		}
	}
	// In "tool: ...: name: error" the first segment is the tool, named by
	// its path when it was run by it (/bin/sh), never what was refused.
	tool := strings.Count(line[:at], ": ") >= 2
	for pos := 0; pos < len(line); {
		for pos < len(line) && line[pos] == ' ' {
			pos++
		}
		end := strings.IndexByte(line[pos:], ' ')
		if end < 0 {
			end = len(line) - pos
		}
		f := strings.TrimSuffix(strings.Trim(line[pos:pos+end], ":,;()[]'\"`‘’"), ".")
		if looksLikePath(f) && !(pos == 0 && tool && strings.HasSuffix(line[:end], ":")) {
			cands = append(cands, cand{f, pos})
		}
		pos += end
	}
	if i := strings.LastIndex(line[:at], ": "); i > 0 && len(cands) == 0 {
		// "tool: name: error": the word before ": " when it is not the
		// line's first segment (the tool), and only when nothing on the
		// line looks more like a path ("cannot open 'x' for reading").
		head := line[:i]
		if j := strings.LastIndex(head, ": "); j >= 0 {
			fields := strings.Fields(head[j+2:])
			if len(fields) > 0 {
				f := strings.Trim(fields[len(fields)-1], "'\"`‘’")
				cands = append(cands, cand{f, i - len(f)})
			}
		}
	}
	best, bestPos := "", -1
	for _, c := range cands {
		if c.pos < at && c.pos > bestPos {
			best, bestPos = c.p, c.pos
		}
	}
	if best == "" {
		for _, c := range cands {
			if c.pos > at && (bestPos < 0 || c.pos < bestPos) {
				best, bestPos = c.p, c.pos
			}
		}
	}
	if best == "" || strings.ContainsAny(best, "[]()") {
		return nil
	}
	return []string{best}
}

// firstIndex returns where the first of the words of any list occurs in
// s, or -1.
func firstIndex(s string, lists ...[]string) int {
	at := -1
	for _, words := range lists {
		for _, w := range words {
			if i := strings.Index(s, w); i >= 0 && (at < 0 || i < at) {
				at = i
			}
		}
	}
	return at
}

// quotedPaths returns the quoted strings of line that look like paths.
func quotedPaths(line string) []string {
	var out []string
	for _, m := range quoted().FindAllStringSubmatch(line, -1) {
		for _, g := range m[1:] {
			if looksLikePath(g) {
				out = append(out, g)
			}
		}
	}
	return out
}

func looksLikePath(s string) bool {
	return filepath.IsAbs(s) || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../")
}

// hostIn returns the host a name-resolution error names, or "".
func hostIn(line string) string {
	for _, re := range hostAfter() {
		if m := re.FindStringSubmatch(line); m != nil {
			return strings.ToLower(strings.TrimSuffix(m[1], "."))
		}
	}
	return ""
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// wordIn reports whether name occurs in line as a whole word.
func wordIn(line, name string) bool {
	for i := 0; ; {
		j := strings.Index(line[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !isWordByte(line[start-1])) && (end == len(line) || !isWordByte(line[end])) {
			return true
		}
		i = start + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
