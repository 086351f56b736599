package winacl

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// SID is a Windows security identifier in its string form, "S-1-5-21-...".
// The string form is what crosses the launcher boundary and what the
// Windows layer converts with ConvertStringSidToSidW.
type SID string

// Well-known SIDs the runner uses.
const (
	// SIDEveryone (S-1-1-0) stays a restricting SID: process start-up needs
	// it, so objects granting Everyone write stay writable (a Gap).
	SIDEveryone SID = "S-1-1-0"
	// SIDSystem (S-1-5-18) keeps full access to private dirs and to objects
	// the confined command creates.
	SIDSystem SID = "S-1-5-18"
)

// Domain-separation prefixes of the SID derivations. Changing one changes
// every SID it derives: bump the version suffix, never reuse a prefix.
const (
	writeSIDDomain   = "sandbox-local/winacl/write-sid/v1\x00"
	sessionSIDDomain = "sandbox-local/winacl/session-sid/v1\x00"
)

// WriteSID returns the deterministic write SID of a workspace or writable
// root: S-1-5-21-A-B-C-D where A..D are the first 16 bytes (big-endian
// uint32s) of SHA-256(domain prefix || Key(canonical path)). The same
// directory, however spelled (case, separators, \\?\ and UNC forms, 8.3
// names through r, trailing separators), always gets the same SID, so its
// standing ACE is found again on every run; different directories get
// different SIDs (128 bits, collisions negligible).
//
// S-1-5-21 is the authority and prefix Windows itself uses for machine and
// domain identities (96 random bits plus a RID); Windows accepts any
// well-formed SID in an ACE and in a restricting-SID list, and an S-1-5-21
// SID with 128 hashed bits cannot collide in practice with a real account.
func WriteSID(path string, r PathResolver) (SID, error) {
	c, err := Canonicalize(path, r)
	if err != nil {
		return "", err
	}
	return deriveSID(writeSIDDomain, c), nil
}

// SessionSID returns the SID of a private temp dir. The dir's last component
// carries 128 random bits (see Manager.Prepare), so the SID is random per
// session and distinct from every write SID (another domain prefix), yet a
// launcher can recompute it from the dir's path alone.
func SessionSID(dir string) (SID, error) {
	c, err := Canonicalize(dir, nil)
	if err != nil {
		return "", err
	}
	return deriveSID(sessionSIDDomain, c), nil
}

func deriveSID(domain, canonicalPath string) SID {
	sum := sha256.Sum256([]byte(domain + Key(canonicalPath)))
	return SID(fmt.Sprintf("S-1-5-21-%d-%d-%d-%d",
		binary.BigEndian.Uint32(sum[0:4]), binary.BigEndian.Uint32(sum[4:8]),
		binary.BigEndian.Uint32(sum[8:12]), binary.BigEndian.Uint32(sum[12:16])))
}

// maxSubAuthorities is the most sub-authorities a SID can have.
const maxSubAuthorities = 15

// ParseSID checks that s is a well-formed SID string (revision 1, a 48-bit
// identifier authority, 1 to 15 32-bit sub-authorities) and returns it.
func ParseSID(s string) (SID, error) {
	parts := strings.Split(s, "-")
	if len(parts) < 3 || parts[0] != "S" || parts[1] != "1" {
		return "", fmt.Errorf("winacl: malformed SID %q", clip(s))
	}
	if _, err := strconv.ParseUint(parts[2], 10, 48); err != nil {
		return "", fmt.Errorf("winacl: malformed SID %q: identifier authority: %w", clip(s), err)
	}
	subs := parts[3:]
	if len(subs) < 1 || len(subs) > maxSubAuthorities {
		return "", fmt.Errorf("winacl: malformed SID %q: %d sub-authorities", clip(s), len(subs))
	}
	for _, sub := range subs {
		if sub == "" || sub[0] == '+' {
			return "", fmt.Errorf("winacl: malformed SID %q", clip(s))
		}
		if _, err := strconv.ParseUint(sub, 10, 32); err != nil {
			return "", fmt.Errorf("winacl: malformed SID %q: sub-authority: %w", clip(s), err)
		}
	}
	return SID(s), nil
}
