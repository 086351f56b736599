package vocab

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// RefusalsEnv names the descriptor, inherited from the spawner, on which
// the namespaces launcher's guard and the landlock launcher's metadata
// supervisor record each refusal they make themselves (a protected name
// created or written, a metadata change outside the writable roots), in
// the record format below. Its value is "FD:INODE": the descriptor and the
// pipe's inode, as sandbox.Wrapped.Command passes the write end of a pipe
// there. The record is a diagnostic, not confinement: unset, or naming
// anything but that pipe (a consumer that replaced Command's ExtraFiles,
// whose fd 3 is now its own file or pipe), nothing is recorded and the
// launch goes on; the inode keeps the launcher from writing records into
// a descriptor of the consumer's. The launcher takes the variable out of
// the environment, and only the guard or the supervisor keeps the
// descriptor: the command never holds it.
const RefusalsEnv = "SANDBOX_LOCAL_REFUSALS_FD"

// MaxRefusalRecords is how many distinct refusals one writer (a guard, a
// supervisor) records; past it the rest are only counted.
const MaxRefusalRecords = 16

// MaxRefusalLine bounds one record line in bytes, its newline included:
// a longer escaped path is cut and the record marked cut. The most a
// writer writes (MaxRefusalRecords lines, then at most 64 count lines)
// fits in a pipe's default buffer, so it never waits for a reader; a
// record that does not fit all the same (the pipe made smaller) is
// counted with the rest.
const MaxRefusalLine = 2048

// The rules a record names.
const (
	// RefusalRuleProtected: the guard refused a protected name (created,
	// written, renamed or linked).
	RefusalRuleProtected = "protected"
	// RefusalRuleOutside: the supervisor refused a metadata change to an
	// object outside the writable roots and the temp dir.
	RefusalRuleOutside = "outside"
)

// RefusalOps are what a record says was tried: the guard's create,
// write, truncate, rename, link; the supervisor's chmod, chown, times,
// xattr, flags.
var RefusalOps = []string{"create", "write", "truncate", "rename", "link", "chmod", "chown", "times", "xattr", "flags"}

// The record format: one line per record, each field a run of printable
// ASCII without spaces,
//
//	OP RULE PATH\n      one refusal (PATH escaped)
//	OP RULE PATH +\n    the same, PATH cut to fit MaxRefusalLine
//	more N\n            N refusals past the records were not recorded
//
// where PATH is the path with every byte outside '!'..'~', and '%'
// itself, written %XX (two upper-case hex digits). A writer writes the
// count line each time the count reaches a power of two and once more
// when it ends, so the largest count read is at least what was dropped.
const refusalMore = "more"

// RefusalRecord is one refusal a guard or supervisor recorded.
type RefusalRecord struct {
	Op, Rule, Path string
	// Cut: Path is only the start of the path (it did not fit).
	Cut bool
}

// EscapeRefusalPath is PATH as a record writes it, cut to at most room
// bytes; cut reports that it was.
func EscapeRefusalPath(path string, room int) (escaped string, cut bool) {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		n := 1
		if c <= ' ' || c > '~' || c == '%' {
			n = 3
		}
		if b.Len()+n > room {
			return b.String(), true
		}
		if n == 3 {
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[c>>4])
			b.WriteByte("0123456789ABCDEF"[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String(), false
}

func unescapeRefusalPath(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), true
}

// RefusalLine is the record line for one refusal, at most MaxRefusalLine
// bytes.
func RefusalLine(op, rule, path string) []byte {
	head := op + " " + rule + " "
	// room for the path: the line less its head, " +" and the newline.
	p, cut := EscapeRefusalPath(path, MaxRefusalLine-len(head)-3)
	line := head + p
	if cut {
		line += " +"
	}
	return []byte(line + "\n")
}

// RefusalCountLine is the count line for n refusals not recorded.
func RefusalCountLine(n int) []byte {
	return []byte(refusalMore + " " + strconv.Itoa(n) + "\n")
}

// RefusalRecorder is what a writer keeps: which refusals it recorded (a
// hash of each, so a repeat is not recorded again) and how many it
// dropped past MaxRefusalRecords. It decides; the writer writes. The C
// writers (shared_linux.c) keep the same rule.
type RefusalRecorder struct {
	seen    [MaxRefusalRecords]uint64
	n       int
	dropped int
}

// Refused returns what to write for one refusal: its record (record
// true: should the write fail, call Dropped), a count line (a power of
// two reached past the records), or nothing (a repeat, or a count in
// between).
func (r *RefusalRecorder) Refused(op, rule, path string) (line []byte, record bool) {
	h := RefusalHash(op, path)
	for _, s := range r.seen[:r.n] {
		if s == h {
			return nil, false
		}
	}
	if r.n < MaxRefusalRecords {
		r.seen[r.n] = h
		r.n++
		return RefusalLine(op, rule, path), true
	}
	return r.Dropped(), false
}

// Dropped counts one refusal not recorded (past the records, or a record
// the pipe had no room for) and returns the count line when the count is
// a power of two.
func (r *RefusalRecorder) Dropped() []byte {
	r.dropped++
	if r.dropped&(r.dropped-1) == 0 {
		return RefusalCountLine(r.dropped)
	}
	return nil
}

// End returns the last count line, or nothing when none is owed.
func (r *RefusalRecorder) End() []byte {
	if r.dropped == 0 || r.dropped&(r.dropped-1) == 0 {
		return nil
	}
	return RefusalCountLine(r.dropped)
}

// RefusalHash is FNV-1a of op, a NUL and path: how a writer tells a
// repeat.
func RefusalHash(op, path string) uint64 {
	h := uint64(14695981039346656037)
	for _, s := range []string{op, "\x00", path} {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
	}
	return h
}

// ParseRefusalRecords reads what the writers wrote: the records (at most
// MaxRefusalRecords per writer, so a reader bounds what it reads) and the
// largest count of those not recorded. A line that is not a record is
// skipped, and so is an unfinished last line.
func ParseRefusalRecords(b []byte) (recs []RefusalRecord, more int) {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return recs, more
		}
		line := string(b[:i])
		b = b[i+1:]
		f := strings.Split(line, " ")
		if len(f) == 2 && f[0] == refusalMore {
			if n, err := strconv.Atoi(f[1]); err == nil && n > more {
				more = n
			}
			continue
		}
		if len(f) < 3 || len(f) > 4 || len(f) == 4 && f[3] != "+" || !slices.Contains(RefusalOps, f[0]) ||
			f[1] != RefusalRuleProtected && f[1] != RefusalRuleOutside {
			continue
		}
		p, ok := unescapeRefusalPath(f[2])
		if !ok || p == "" {
			continue
		}
		recs = append(recs, RefusalRecord{Op: f[0], Rule: f[1], Path: p, Cut: len(f) == 4})
	}
}
