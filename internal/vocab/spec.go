package vocab

import (
	"fmt"
	"strconv"
)

// Spec is everything a launcher needs to confine one command. Each field
// but Token and Argv is one launcher option, a row of Options below.
type Spec struct {
	// Token is the per-wrap secret carried by fatal lines. It travels in
	// TokenEnv, not in the arguments: Encode requires it, Decode leaves it
	// empty.
	Token string
	// Writable are the writable roots, workspace first. Empty in read-only mode.
	Writable []string
	// TempDir is the private temp dir of this wrap; writable in every mode.
	TempDir string
	// ReadOnly are paths kept read-only even though a writable root contains them.
	ReadOnly []string
	// Guarded are protected names that did not exist at Wrap (a main
	// repository's .git/commondir, a tool config the workspace lacks):
	// the namespaces launcher cannot bind what is not there, so its guard
	// refuses creating them instead. Set for the namespaces runner only.
	Guarded []string
	// DenyRead are paths the command may not read.
	DenyRead []string
	// UnixSockets are the pathname UNIX sockets the command may connect
	// to (and send datagrams to) under network deny; every other UNIX
	// socket of the host stays out of reach.
	UnixSockets []string
	// Dir is the command's working directory.
	Dir string
	// Network is the network mode: deny (the zero value), allow, or
	// proxied (the domain proxy only, at Ports[0] on loopback).
	Network NetMode
	// Ports are the TCP ports on loopback the command may connect to
	// (network deny or proxied): the proxy's first when Proxied, then the
	// allowed local ports. Each is 1 to 65535.
	Ports []int
	// Bridge is the provider's UNIX socket where the namespaces launcher
	// hands over the listeners it makes for Ports on the sandbox's own
	// loopback; set only with Ports.
	Bridge string
	// RequireFull turns partial enforcement into a launcher failure.
	RequireFull bool
	// Probe asks the launcher to confine itself and prove the confinement
	// instead of running a command.
	Probe bool
	// Seccomp is the compiled seccomp program, in hex, that the launcher
	// loads (package seccompfilter compiles it in the provider).
	Seccomp string
	// LandlockABI is the Landlock ABI the provider planned the landlock
	// launcher for (hostinfo.LandlockABI); 0 when not set. The landlock
	// launcher requires it and refuses a kernel that reports another.
	LandlockABI int
	// Notice is what the landlock launcher announces after NoticePrefix:
	// the provider's JoinGaps of LandlockKernelGaps, one line; empty when
	// there is nothing to announce.
	Notice string
	// Limits are the resource limits the launcher applies.
	Limits
	// Overlay is a directory of the user's (Go's module cache) that the
	// namespaces launcher shows at its own path as an overlay: the
	// user's files are its read-only lower layer, and what the command
	// writes there goes to OverlayDir's upper layer, never to the user's
	// files. Set for the namespaces runner only; landlock-run refuses it.
	Overlay string
	// OverlayDir holds the overlay's "upper" and "work" directories, on
	// one file system; given with Overlay and only with it.
	OverlayDir string
	// Argv is the command and its arguments; empty only in probe mode.
	Argv []string
}

// Limits are the resource limits of a Spec: what the provider's limit
// plan (package sandbox) hands the launcher whole, so that a new limit is
// a field here and a row of Options, not a copy line in the provider.
type Limits struct {
	// Cgroups are cgroup directories the launcher moves itself into at
	// its start (one per hierarchy), so that every process of the sandbox
	// is counted by the limits the provider set there.
	Cgroups []string
	// MaxProcesses, when positive, is the command's RLIMIT_NPROC, soft and
	// hard, set before exec.
	MaxProcesses int
	// MaxAddressSpace, when positive, is the command's RLIMIT_AS in
	// bytes, soft and hard, set before exec.
	MaxAddressSpace int64
	// TempSize, when positive, makes the private temp dir a new tmpfs of
	// that many bytes instead of a bind of TempDir (the namespaces
	// launcher; landlock-run refuses it).
	TempSize int64
}

// ValueKind is what an option's value is; both decoders check it the same
// way, from the one table (Options).
type ValueKind int

const (
	// Flag: the option takes no value.
	Flag ValueKind = iota
	// Text: a value that is not empty (a path when Option.Path).
	Text
	// Number: decimal, no sign, no leading zero, 1 to Option.Max.
	Number
	// NetModeWord: one of NetDeny, NetAllow, NetProxied.
	NetModeWord
	// Program: a seccomp program in lowercase hex, whole 8-byte
	// instructions, not empty.
	Program
	// Line: not empty, no ASCII control character.
	Line
)

// OptionID indexes Options; the C decoder's SBX_OPT_ constants are the
// same numbers (CHeader generates them).
type OptionID int

// The launcher options, in the order Encode writes them.
const (
	OptWritable OptionID = iota
	OptTempDir
	OptReadOnly
	OptGuarded
	OptDenyRead
	OptUnixSocket
	OptDir
	OptNet
	OptPort
	OptBridge
	OptCgroup
	OptMaxProcesses
	OptMaxAddressSpace
	OptTempSize
	OptOverlay
	OptOverlayDir
	OptRequireFull
	OptProbe
	OptSeccomp
	OptABI
	OptNotice
	numOptions
)

// Option is one launcher option of the wire form: everything a decoder
// checks about it before it stores the value.
type Option struct {
	// Name is the option on the wire ("-w").
	Name string
	// Key names it in C: SBX_OPT_ + Key.
	Key string
	// Value is what the value is.
	Value ValueKind
	// Max bounds a Number.
	Max int64
	// Repeatable: the option may be given more than once.
	Repeatable bool
	// Path: the value is an absolute, clean path (CheckPath).
	Path bool
	// Required: every argv carries the option.
	Required bool
	// Needs are the options an argv that carries this one must carry
	// too; both decoders refuse it without them ("-bridge without
	// -port").
	Needs []OptionID
	// What names the value in a decoder's error.
	What string
	// CField is the option's field in the C decoder's struct spec
	// (CHeader generates it); a repeatable option's count is n+CField.
	CField string
	// CType is a Number's C type, int or long long.
	CType string

	// get returns the values Encode writes for s (for a Flag, one empty
	// value when set); set stores one decoded value (n for a Number or
	// a network mode).
	get func(s *Spec) []string
	set func(s *Spec, val string, n int64)
}

// Options is the launcher vocabulary, indexed by OptionID: the one table
// Encode, Decode and (through CHeader) the C decoder are driven by.
var Options = [numOptions]Option{
	OptWritable: {Name: "-w", Key: "WRITABLE", CField: "writable", Value: Text, Repeatable: true, Path: true, What: "writable root",
		get: func(s *Spec) []string { return s.Writable },
		set: func(s *Spec, v string, _ int64) { s.Writable = append(s.Writable, v) }},
	OptTempDir: {Name: "-t", Key: "TEMP_DIR", CField: "tempdir", Value: Text, Path: true, What: "temp dir",
		get: func(s *Spec) []string { return one(s.TempDir) },
		set: func(s *Spec, v string, _ int64) { s.TempDir = v }},
	OptReadOnly: {Name: "-r", Key: "READ_ONLY", CField: "ro", Value: Text, Repeatable: true, Path: true, What: "read-only subpath",
		get: func(s *Spec) []string { return s.ReadOnly },
		set: func(s *Spec, v string, _ int64) { s.ReadOnly = append(s.ReadOnly, v) }},
	OptGuarded: {Name: "-g", Key: "GUARDED", CField: "guard", Value: Text, Repeatable: true, Path: true, What: "guarded name",
		get: func(s *Spec) []string { return s.Guarded },
		set: func(s *Spec, v string, _ int64) { s.Guarded = append(s.Guarded, v) }},
	OptDenyRead: {Name: "-d", Key: "DENY_READ", CField: "deny", Value: Text, Repeatable: true, Path: true, What: "deny-read path",
		get: func(s *Spec) []string { return s.DenyRead },
		set: func(s *Spec, v string, _ int64) { s.DenyRead = append(s.DenyRead, v) }},
	OptUnixSocket: {Name: "-u", Key: "UNIX_SOCKET", CField: "unixsock", Value: Text, Repeatable: true, Path: true, What: "UNIX socket",
		get: func(s *Spec) []string { return s.UnixSockets },
		set: func(s *Spec, v string, _ int64) { s.UnixSockets = append(s.UnixSockets, v) }},
	OptDir: {Name: "-C", Key: "DIR", CField: "dir", Value: Text, Path: true, What: "working directory",
		get: func(s *Spec) []string { return one(s.Dir) },
		set: func(s *Spec, v string, _ int64) { s.Dir = v }},
	OptNet: {Name: "-net", Key: "NET", CField: "net", Value: NetModeWord, Required: true, What: "network mode",
		get: func(s *Spec) []string { return []string{s.Network.String()} },
		set: func(s *Spec, _ string, n int64) { s.Network = NetMode(n) }},
	OptPort: {Name: "-port", Key: "PORT", CField: "ports", CType: "int", Value: Number, Max: 65535, Repeatable: true, What: "port",
		get: func(s *Spec) []string { return decimals(s.Ports) },
		set: func(s *Spec, _ string, n int64) { s.Ports = append(s.Ports, int(n)) }},
	OptBridge: {Name: "-bridge", Key: "BRIDGE", CField: "bridge", Value: Text, Path: true, What: "bridge", Needs: []OptionID{OptPort},
		get: func(s *Spec) []string { return one(s.Bridge) },
		set: func(s *Spec, v string, _ int64) { s.Bridge = v }},
	OptCgroup: {Name: "-cgroup", Key: "CGROUP", CField: "cgroups", Value: Text, Repeatable: true, Path: true, What: "cgroup",
		get: func(s *Spec) []string { return s.Cgroups },
		set: func(s *Spec, v string, _ int64) { s.Cgroups = append(s.Cgroups, v) }},
	OptMaxProcesses: {Name: "-nproc", Key: "MAX_PROCESSES", CField: "nproc", CType: "int", Value: Number, Max: MaxProcesses, What: "process count",
		get: func(s *Spec) []string { return positive(int64(s.MaxProcesses)) },
		set: func(s *Spec, _ string, n int64) { s.MaxProcesses = int(n) }},
	OptMaxAddressSpace: {Name: "-as", Key: "MAX_ADDRESS_SPACE", CField: "as", CType: "long long", Value: Number, Max: MaxBytes, What: "byte count",
		get: func(s *Spec) []string { return positive(s.MaxAddressSpace) },
		set: func(s *Spec, _ string, n int64) { s.MaxAddressSpace = n }},
	OptTempSize: {Name: "-tmpsize", Key: "TEMP_SIZE", CField: "tmpsize", CType: "long long", Value: Number, Max: MaxBytes, What: "byte count",
		get: func(s *Spec) []string { return positive(s.TempSize) },
		set: func(s *Spec, _ string, n int64) { s.TempSize = n }},
	OptOverlay: {Name: "-overlay", Key: "OVERLAY", CField: "overlay", Value: Text, Path: true, What: "overlay", Needs: []OptionID{OptOverlayDir},
		get: func(s *Spec) []string { return one(s.Overlay) },
		set: func(s *Spec, v string, _ int64) { s.Overlay = v }},
	OptOverlayDir: {Name: "-overlay-dir", Key: "OVERLAY_DIR", CField: "overlay_dir", Value: Text, Path: true, What: "overlay dir", Needs: []OptionID{OptOverlay},
		get: func(s *Spec) []string { return one(s.OverlayDir) },
		set: func(s *Spec, v string, _ int64) { s.OverlayDir = v }},
	OptRequireFull: {Name: "-full", Key: "REQUIRE_FULL", CField: "require_full", Value: Flag,
		get: func(s *Spec) []string { return flag(s.RequireFull) },
		set: func(s *Spec, _ string, _ int64) { s.RequireFull = true }},
	OptProbe: {Name: "-probe", Key: "PROBE", CField: "probe", Value: Flag,
		get: func(s *Spec) []string { return flag(s.Probe) },
		set: func(s *Spec, _ string, _ int64) { s.Probe = true }},
	OptSeccomp: {Name: "-seccomp", Key: "SECCOMP", CField: "seccomp", Value: Program, What: "seccomp program",
		get: func(s *Spec) []string { return one(s.Seccomp) },
		set: func(s *Spec, v string, _ int64) { s.Seccomp = v }},
	OptABI: {Name: "-abi", Key: "ABI", CField: "abi", CType: "int", Value: Number, Max: MaxABI, What: "Landlock ABI",
		get: func(s *Spec) []string { return positive(int64(s.LandlockABI)) },
		set: func(s *Spec, _ string, n int64) { s.LandlockABI = int(n) }},
	OptNotice: {Name: "-notice", Key: "NOTICE", CField: "notice", Value: Line, What: "notice",
		get: func(s *Spec) []string { return one(s.Notice) },
		set: func(s *Spec, v string, _ int64) { s.Notice = v }},
}

// Put stores one decoded value of o in s as Decode does: val for text, n
// for a Number or a network mode (a NetMode), nothing for a Flag but its
// presence. A decoder of another language is read back into a Spec with
// it (launcher's test of the C decoder), so a new option needs no copy
// line there.
func (o *Option) Put(s *Spec, val string, n int64) { o.set(s, val, n) }

// one is the value of an option given once when set, none when empty.
func one(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

// flag is a Flag's presence.
func flag(set bool) []string {
	if set {
		return []string{""}
	}
	return nil
}

// positive is a Number given once when set, none when zero; a negative
// one is written as it is, for check to refuse.
func positive(n int64) []string {
	if n == 0 {
		return nil
	}
	return []string{strconv.FormatInt(n, 10)}
}

// decimals are a repeatable Number's values.
func decimals(ns []int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = strconv.Itoa(n)
	}
	return out
}

// lookupOption finds the option named name.
func lookupOption(name string) (OptionID, bool) {
	for id := range Options {
		if Options[id].Name == name {
			return OptionID(id), true
		}
	}
	return 0, false
}

// check reports why val is not a value of o, and parses a Number (a
// network mode into its NetMode).
func (o *Option) check(val string) (int64, error) {
	if val == "" {
		return 0, fmt.Errorf("%w: %s: empty", ErrMalformed, o.Name)
	}
	switch o.Value {
	case Number:
		n, ok := parseNumber(val, o.Max)
		if !ok {
			return 0, fmt.Errorf("%w: %s %q: want a %s, 1 to %d, in decimal without leading zeros", ErrMalformed, o.Name, clip(val), o.What, o.Max)
		}
		return n, nil
	case NetModeWord:
		m, ok := ParseNetMode(val)
		if !ok {
			return 0, fmt.Errorf("%w: %s %q: want %s, %s or %s", ErrMalformed, o.Name, clip(val), NetDeny, NetAllow, NetProxied)
		}
		return int64(m), nil
	case Program:
		if !validProgram(val) {
			return 0, fmt.Errorf("%w: %s: not a program in hex", ErrMalformed, o.Name)
		}
	case Line:
		if !plainLine(val) {
			return 0, fmt.Errorf("%w: %s holds a control character", ErrMalformed, o.Name)
		}
	}
	if o.Path {
		if err := CheckPath(val); err != nil {
			return 0, fmt.Errorf("%w: %s: %w", ErrMalformed, o.What, err)
		}
	}
	return 0, nil
}

// parseNumber parses the one form Encode writes numbers in (and the C
// decoder accepts): decimal, no sign, no leading zero, 1 to max.
func parseNumber(v string, max int64) (int64, bool) {
	if v == "" || len(v) > len(strconv.FormatInt(max, 10)) || v[0] == '0' {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return int64(n), n <= uint64(max)
}
