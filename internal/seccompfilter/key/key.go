// Package key names the seccomp programs: the runner's profile and the
// parts of a spec the filter depends on. It is shared by package
// seccompfilter (which looks the generated programs up) and its generator
// (gen), which must build without the files it generates.
package key

import (
	"slices"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// Profile selects the runner's variant of the filter.
type Profile int

const (
	// Landlock is the landlock runner's filter.
	Landlock Profile = iota
	// Namespaces is the namespaces runner's filter.
	Namespaces
)

// Key is everything a program depends on: the runner's profile, the
// network mode, whether some UNIX sockets are allowed by path (the paths
// themselves are the launcher's Landlock rules, not the filter's), and,
// for the landlock profile under network deny, whether some loopback TCP
// ports are (the ports are Landlock's rules too). The namespaces profile
// allows IP in its own network namespace already, so its ports change
// nothing here. Guard: the namespaces profile hands the calls that
// create a name or write to one to the launcher's guard, when the spec
// protects a path in a way the guard enforces (Guards). The definition
// (gen) reads nothing else, so one program per Key and architecture is
// generated.
type Key struct {
	Profile      Profile
	AllowNetwork bool
	UnixSockets  bool
	TCPPorts     bool
	Guard        bool
}

// Of is the Key of the program for s under profile.
func Of(s vocab.Spec, profile Profile) Key {
	return Key{Profile: profile, AllowNetwork: s.Network == vocab.NetworkAllow, UnixSockets: len(s.UnixSockets) > 0,
		TCPPorts: profile == Landlock && s.Network != vocab.NetworkAllow && len(s.Ports) > 0,
		Guard:    profile == Namespaces && Guards(s)}
}

// Guards reports whether the namespaces launcher runs its guard for s: it
// refuses creating the guarded names (vocab.Spec.Guarded), and writing to
// a read-only or deny-read path inside a writable root or the temp dir,
// which a host process may replace during the run (its mount then
// detached); elsewhere the host's tree is read-only already. ns-run
// decides the same from its decoded arguments (ns_guards in
// launcher/ns_guard_linux.c), and loads the program with a listener
// exactly then.
func Guards(s vocab.Spec) bool {
	if len(s.Guarded) > 0 {
		return true
	}
	roots := slices.Clone(s.Writable)
	if s.TempDir != "" {
		roots = append(roots, s.TempDir)
	}
	for _, p := range slices.Concat(s.ReadOnly, s.DenyRead) {
		if vocab.WithinAny(p, roots) {
			return true
		}
	}
	return false
}

// All are every Key Of can give: the programs generated.
func All() []Key {
	var keys []Key
	for _, p := range []Profile{Landlock, Namespaces} {
		for _, allow := range []bool{false, true} {
			for _, socks := range []bool{false, true} {
				for _, tcp := range []bool{false, true} {
					if tcp && (p != Landlock || allow) {
						continue
					}
					keys = append(keys, Key{Profile: p, AllowNetwork: allow, UnixSockets: socks, TCPPorts: tcp})
					if p == Namespaces {
						keys = append(keys, Key{Profile: p, AllowNetwork: allow, UnixSockets: socks, Guard: true})
					}
				}
			}
		}
	}
	return keys
}
