package winacl

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/winpath"
)

// This file holds the Windows path rules in plain Go, so they behave the
// same on every GOOS (path/filepath follows the host's rules, not Windows').
//
// A canonical path has one of three roots, each ending in a separator:
//
//	C:\                      a drive (letter upper-cased)
//	\\server\share\          a UNC share (\\?\UNC\server\share is the same)
//	\\?\Volume{GUID}\        a volume without a drive letter
//
// followed by its components joined with `\`, with no trailing separator,
// no empty, `.` or `..` components, no trailing dots or spaces (Win32 strips
// them), and 8.3 short names replaced by long ones where they resolve.
// Comparison is by Key, which folds case the way NTFS does (simple
// upper-casing), so `c:/Users/ME/` and `\\?\C:\users\me` are one path.

// maxPathLen bounds the length of a path accepted, in bytes; NTFS paths are
// at most 32767 UTF-16 units.
const maxPathLen = 32767 * 3

// winPath is a parsed absolute Windows path.
type winPath struct {
	root  string   // `C:\`, `\\server\share\` or `\\?\Volume{...}\`
	comps []string // cleaned components
}

func (p winPath) String() string {
	if len(p.comps) == 0 {
		return p.root
	}
	return p.root + strings.Join(p.comps, `\`)
}

// isRoot reports whether p is a drive, share or volume root.
func (p winPath) isRoot() bool { return len(p.comps) == 0 }

// streamMode says what parsePath does with NTFS stream syntax (`name:stream`,
// `name::$DATA`, `dir::$INDEX_ALLOCATION`) in a component.
type streamMode int

const (
	rejectStreams streamMode = iota // a directory is meant: stream syntax is an error
	stripStreams                    // the object is meant: drop the stream part
)

func badPath(p, why string) error {
	return fmt.Errorf("%w: %q: %s", ErrBadPath, clip(p), why)
}

// parsePath parses an absolute Windows path in any of its spellings.
func parsePath(s string, streams streamMode) (winPath, error) {
	orig := s
	switch {
	case s == "":
		return winPath{}, badPath(orig, "empty")
	case len(s) > maxPathLen:
		return winPath{}, badPath(orig, "too long")
	case strings.IndexByte(s, 0) >= 0:
		return winPath{}, badPath(orig, "contains NUL")
	}
	s = strings.ReplaceAll(s, "/", `\`)
	var root, rest string
	var err error
	switch {
	case hasPrefixFold(s, `\\?\`), hasPrefixFold(s, `\??\`), hasPrefixFold(s, `\\.\`):
		body := s[4:]
		switch {
		case hasPrefixFold(body, `UNC\`):
			root, rest, err = parseUNC(orig, body[4:])
		case isDrive(body) && (len(body) == 2 || body[2] == '\\'):
			root, rest = strings.ToUpper(body[:1])+`:\`, body[2:]
		case hasPrefixFold(body, "Volume{"):
			name, tail, _ := strings.Cut(body, `\`)
			if !strings.HasSuffix(name, "}") || len(name) != len("Volume{00000000-0000-0000-0000-000000000000}") {
				return winPath{}, badPath(orig, "malformed volume name")
			}
			root, rest = `\\?\Volume`+strings.ToLower(name[len("Volume"):])+`\`, tail
		default:
			return winPath{}, badPath(orig, "a device path, not a file system path")
		}
	case strings.HasPrefix(s, `\\`):
		root, rest, err = parseUNC(orig, s[2:])
	case isDrive(s):
		if len(s) == 2 || s[2] != '\\' {
			return winPath{}, badPath(orig, "drive-relative, not absolute")
		}
		root, rest = strings.ToUpper(s[:1])+`:\`, s[3:]
	case strings.HasPrefix(s, `\`):
		return winPath{}, badPath(orig, "relative to the current drive, not absolute")
	default:
		return winPath{}, badPath(orig, "relative, not absolute")
	}
	if err != nil {
		return winPath{}, err
	}
	comps, err := cleanComponents(orig, rest, streams)
	if err != nil {
		return winPath{}, err
	}
	return winPath{root: root, comps: comps}, nil
}

// parseUNC parses `server\share\rest` (the part after `\\` or `\\?\UNC\`).
// An administrative share of the local host (\\localhost\C$) is the drive
// itself and becomes C:\.
func parseUNC(orig, body string) (root, rest string, err error) {
	server, tail, _ := strings.Cut(body, `\`)
	share, rest, _ := strings.Cut(tail, `\`)
	if server == "" || share == "" {
		return "", "", badPath(orig, "UNC path without server or share")
	}
	for _, part := range []string{server, share} {
		if strings.ContainsAny(part, `<>"|?*:`) || hasControl(part) {
			return "", "", badPath(orig, "invalid character in UNC server or share")
		}
	}
	if isLocalHost(server) && len(share) == 2 && isLetter(share[0]) && share[1] == '$' {
		return strings.ToUpper(share[:1]) + `:\`, rest, nil
	}
	return `\\` + server + `\` + share + `\`, rest, nil
}

func isLocalHost(server string) bool {
	switch strings.ToLower(server) {
	case "localhost", "127.0.0.1", "[::1]", "::1", "0--1.ipv6-literal.net":
		return true
	}
	return false
}

// cleanComponents applies the Win32 normalisation to the part after the root.
func cleanComponents(orig, rest string, streams streamMode) ([]string, error) {
	var out []string
	for _, c := range strings.Split(rest, `\`) {
		if i := strings.IndexByte(c, ':'); i >= 0 {
			if streams == rejectStreams {
				return nil, badPath(orig, "stream syntax (':') in a directory path")
			}
			c = c[:i]
		}
		switch c {
		case "", ".":
			continue
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			continue
		}
		c = strings.TrimRight(c, ". ")
		if c == "" {
			continue
		}
		if strings.ContainsAny(c, `<>"|?*`) || hasControl(c) {
			return nil, badPath(orig, "character NTFS forbids in a name")
		}
		out = append(out, c)
	}
	return out, nil
}

// PathResolver resolves 8.3 short names. The Windows layer implements it
// with GetLongPathNameW; tests use a fake.
type PathResolver interface {
	// LongPathName returns path with each 8.3 short component replaced by
	// its long name. The path must exist; otherwise the error matches
	// fs.ErrNotExist.
	LongPathName(path string) (string, error)
}

// Canonicalize returns the canonical form of the absolute Windows path p
// (see the package doc): separators, `\\?\` and `\\?\UNC\` prefixes, `.`,
// `..`, trailing separators, dots and spaces, and the drive letter's case
// are normalised, and, when r is not nil, 8.3 short names are replaced by
// long names through r (only for paths with a `~` in a component, the mark
// of a generated short name). A path that does not exist keeps the short
// names of its missing part. Errors match ErrBadPath (and ErrInvalidPolicy).
//
// Canonicalize is idempotent: a canonical path canonicalises to itself, with
// or without a resolver, so a launcher can recompute SIDs from the paths a
// provider passed it.
func Canonicalize(p string, r PathResolver) (string, error) {
	wp, err := canonical(p, rejectStreams, r)
	if err != nil {
		return "", err
	}
	return wp.String(), nil
}

// canonical parses p and resolves its short names through r.
func canonical(p string, streams streamMode, r PathResolver) (winPath, error) {
	wp, err := parsePath(p, streams)
	if err != nil {
		return winPath{}, err
	}
	if r == nil || !hasShortName(wp.comps) {
		return wp, nil
	}
	return resolveLong(wp, r)
}

func hasShortName(comps []string) bool {
	for _, c := range comps {
		if strings.ContainsRune(c, '~') {
			return true
		}
	}
	return false
}

// resolveLong resolves the longest existing prefix of wp through r and keeps
// the rest as written.
func resolveLong(wp winPath, r PathResolver) (winPath, error) {
	for n := len(wp.comps); n > 0; n-- {
		if !hasShortName(wp.comps[:n]) {
			return wp, nil // the missing part holds every short name
		}
		prefix := winPath{root: wp.root, comps: wp.comps[:n]}
		long, err := r.LongPathName(prefix.String())
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return winPath{}, fmt.Errorf("winacl: resolve short names of %q: %w", clip(prefix.String()), err)
		}
		lp, err := parsePath(long, rejectStreams)
		if err != nil {
			return winPath{}, fmt.Errorf("winacl: long name of %q: %w", clip(prefix.String()), err)
		}
		lp.comps = append(lp.comps, wp.comps[n:]...)
		return lp, nil
	}
	return wp, nil
}

// WirePath spells the absolute Windows path p in the form the launcher
// vocabulary carries (absolute and clean in slash form, see
// vocab.CheckPath): the NT object-manager spelling `\??\C:\a` with forward
// slashes, `/??/C:/a`; a share `\\srv\sh\a` is `/??/UNC/srv/sh/a`, a volume
// `\\?\Volume{g}\a` is `/??/Volume{g}/a`. Canonicalize parses that form
// back to p's canonical form, so a launcher needs no decoder of its own.
func WirePath(p string) (string, error) {
	c, err := Canonicalize(p, nil)
	if err != nil {
		return "", fmt.Errorf("launcher path: %w", err)
	}
	var body string
	switch {
	case strings.HasPrefix(c, `\\?\`):
		body = c[len(`\\?\`):]
	case strings.HasPrefix(c, `\\`):
		body = `UNC\` + c[len(`\\`):]
	default:
		body = c
	}
	wire := strings.TrimSuffix("/??/"+strings.ReplaceAll(body, `\`, "/"), "/")
	if path.Clean(wire) != wire {
		return "", fmt.Errorf("launcher path: %q has no clean slash form", p)
	}
	if back, err := Canonicalize(wire, nil); err != nil || back != c {
		return "", fmt.Errorf("launcher path: %q does not survive the slash form (%q)", p, back)
	}
	return wire, nil
}

// Key returns the comparison key of a canonical path: NTFS compares names
// case-insensitively by simple upper-casing, and so does Key
// (winpath.Key).
func Key(canonicalPath string) string { return winpath.Key(canonicalPath) }

// Within reports whether the canonical path p is root or lies beneath it,
// case-insensitively and by whole components (winpath.Within).
func Within(p, root string) bool { return winpath.Within(p, root) }

// join appends the relative path rel (either separator) to the canonical
// directory dir and cleans the result.
func join(dir, rel string, streams streamMode) (winPath, error) {
	base, err := parsePath(dir, rejectStreams)
	if err != nil {
		return winPath{}, err
	}
	rel = strings.ReplaceAll(rel, "/", `\`)
	comps, err := cleanComponents(rel, strings.Join(base.comps, `\`)+`\`+rel, streams)
	if err != nil {
		return winPath{}, err
	}
	return winPath{root: base.root, comps: comps}, nil
}

// isAbsSpelling reports whether s is spelled as an absolute Windows path
// (drive, UNC or \\?\ form), whether or not it is otherwise valid.
func isAbsSpelling(s string) bool {
	s = strings.ReplaceAll(s, "/", `\`)
	return strings.HasPrefix(s, `\\`) || strings.HasPrefix(s, `\??\`) ||
		isDrive(s) && len(s) > 2 && s[2] == '\\'
}

func isDrive(s string) bool { return len(s) >= 2 && isLetter(s[0]) && s[1] == ':' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
