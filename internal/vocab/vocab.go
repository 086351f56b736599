// Package vocab is the one definition of the launcher's argument vocabulary:
// the provider (package sandbox) encodes a Spec into the launcher's argv, and
// the re-executed launcher (package launcher) decodes it. Both sides import
// this package, so the two can never drift apart; the contract version in
// every argv makes a launcher of another version refuse the call instead of
// misreading it.
//
// The wire form is
//
//	NAME VERSION [OPTION...] -- COMMAND [ARG...]
//
// where NAME is the launcher name reexec dispatches on, VERSION is
// [Version], and each OPTION is one of the flags below, paths as separate
// arguments so no path is ever split or joined. The per-wrap token that
// fatal lines carry is not in argv (every process can read a process's
// /proc/PID/cmdline) but in the environment variable [TokenEnv] (reading
// /proc/PID/environ needs ptrace access, which a sandboxed process lacks);
// the launcher removes it before the command starts. The descriptor of
// the refusal record travels in the environment too ([RefusalsEnv]): only
// sandbox.Wrapped.Command passes one, and the launcher removes it as well.
//
//	-w PATH   writable root (workspace, extra writable roots)
//	-t PATH   private temp dir (writable)
//	-r PATH   read-only subpath under a writable root
//	-g PATH   absent protected name the namespaces launcher guards: its
//	          seccomp filter hands every call that creates a name to a
//	          guard process, which refuses creating this one (EROFS)
//	-d PATH   deny-read path
//	-u PATH   pathname UNIX socket the command may connect to
//	-C DIR    working directory of the command
//	-net MODE allow, deny or proxied (the domain proxy only)
//	-port N   TCP port on loopback the command may connect to under deny or
//	          proxied (repeatable): the proxy's first when proxied, then the
//	          allowed local ports
//	-bridge PATH the provider's UNIX socket where the namespaces launcher
//	          hands over the loopback listeners it makes for the ports inside
//	          the sandbox's network namespace (only with -port)
//	-seccomp HEX the launcher's seccomp program (the provider compiles the
//	          filter from the one Go definition, package seccompfilter; it
//	          travels with the spec it was compiled for, and both launchers
//	          refuse to run without it)
//	-abi N    the Landlock ABI the provider planned the landlock launcher
//	          for (hostinfo's level: one below ABIScopes on a kernel whose
//	          signal scoping erratum is unfixed); the landlock launcher
//	          refuses a kernel that says otherwise
//	-notice TEXT the gaps the landlock launcher announces on stderr after
//	          NoticePrefix (JoinGaps of LandlockKernelGaps, one line), so
//	          both launchers print exactly the line the provider excludes
//	-cgroup DIR a cgroup the launcher moves itself into at its start,
//	          before any process of the sandbox exists (repeatable: one per
//	          cgroup hierarchy); the provider made it and set its limits
//	-nproc N  RLIMIT_NPROC of the command, set before exec (the namespaces
//	          launcher: counted in the sandbox's own user namespace)
//	-as N     RLIMIT_AS of the command in bytes, set before exec
//	-tmpsize N the private temp dir is a new tmpfs of N bytes (the
//	          namespaces launcher; landlock-run refuses it)
//	-full     refuse partial enforcement (fatal instead of a notice)
//	-probe    probe mode: confine, prove a denied and an allowed write, report
//
// Every path must be absolute and clean. Decode rejects anything else:
// unknown options, missing values, a missing "--", an empty command outside
// probe mode, a wrong version.
package vocab

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Version is the contract version carried as the first argument. Bump it on
// any change to the wire form or to the meaning of a field.
const Version = "sandbox-local/7"

// BridgeHello starts the message in which the namespaces launcher hands
// the provider its loopback listeners (-bridge): one seqpacket message,
// "BridgeHello TOKEN PORT...", space-separated, with one listening TCP
// socket per port in SCM_RIGHTS, in the same order; the provider answers
// "ok" once it serves them. launcher/ns_linux.h defines it for C, and a
// test holds the two together.
const BridgeHello = "sandbox-local-bridge/1"

// TokenEnv is the environment variable that carries the wrap's token to
// the launcher.
const TokenEnv = "SANDBOX_LOCAL_WRAP_TOKEN"

// Launcher names: argv[0] of the re-executed binary, dispatched by reexec.
const (
	LandlockRun = "landlock-run"
	NsRun       = "ns-run"
	WinACLRun   = "winacl-run"
)

// The pure-Go landlock launcher's later stages (a build without cgo, where
// no C supervisor starts before the Go runtime: launcher/landlock_chain_linux.go).
// landlock-run is then the relay; it re-executes the binary as the
// supervisor, which re-executes it as the launcher that confines itself and
// execs the command. Consumers only ever spawn LandlockRun.
const (
	LandlockSupervisor = "landlock-run-supervisor"
	LandlockConfine    = "landlock-run-confine"
)

// SeatbeltRun is the seatbelt runner's step inside sandbox-exec: the
// provider's own binary, started as "SELF seatbelt-run -- CMD ARGS...".
// sandbox-exec execs it with argv[0] set to its path, so it is dispatched
// on argv[1], not by reexec.
const SeatbeltRun = "seatbelt-run"

// AppliedEnv names the file descriptor, inherited by sandbox-exec and then
// by the seatbelt-run step, to which the step writes AppliedMarker once it
// runs, so inside the applied sandbox, and before it execs the command
// (closing it first, so the command cannot write to it). A spawner that
// passes the write end of a pipe there learns whether the sandbox was
// applied: a "sandbox-exec:" line the command printed itself is then not
// taken for a runner failure. Unset, the step reports nothing.
const AppliedEnv = "SANDBOX_LOCAL_APPLIED_FD"

// AppliedMarker is what the seatbelt-run step writes to the AppliedEnv
// descriptor.
const AppliedMarker = "applied\n"

// Network modes on the wire.
const (
	NetDeny    = "deny"
	NetAllow   = "allow"
	NetProxied = "proxied"
)

// TokenLen is the length of a token in hex characters (128 bits).
const TokenLen = 32

// MaxArgs bounds the number of launcher arguments Decode accepts, so a
// hostile or corrupted argv cannot make the launcher do unbounded work.
const MaxArgs = 1 << 16

// Spec is everything a launcher needs to confine one command.
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
	// AllowNetwork lifts the network confinement.
	AllowNetwork bool
	// Proxied: the network is the domain proxy only, at Ports[0] on
	// loopback. It excludes AllowNetwork.
	Proxied bool
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
	// Argv is the command and its arguments; empty only in probe mode.
	Argv []string
}

// NewToken returns a fresh random token.
func NewToken() (string, error) {
	var b [TokenLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("vocab: token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// ValidToken reports whether s has the form of a token.
func ValidToken(s string) bool {
	if len(s) != TokenLen {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Encode returns the launcher argv for s, starting with name.
func Encode(name string, s Spec) ([]string, error) {
	if !ValidToken(s.Token) {
		return nil, fmt.Errorf("%w: invalid token", ErrMalformed)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	args := []string{name, Version}
	for _, p := range s.Writable {
		args = append(args, "-w", p)
	}
	if s.TempDir != "" {
		args = append(args, "-t", s.TempDir)
	}
	for _, p := range s.ReadOnly {
		args = append(args, "-r", p)
	}
	for _, p := range s.Guarded {
		args = append(args, "-g", p)
	}
	for _, p := range s.DenyRead {
		args = append(args, "-d", p)
	}
	for _, p := range s.UnixSockets {
		args = append(args, "-u", p)
	}
	if s.Dir != "" {
		args = append(args, "-C", s.Dir)
	}
	net := NetDeny
	switch {
	case s.AllowNetwork:
		net = NetAllow
	case s.Proxied:
		net = NetProxied
	}
	args = append(args, "-net", net)
	for _, port := range s.Ports {
		args = append(args, "-port", strconv.Itoa(port))
	}
	if s.Bridge != "" {
		args = append(args, "-bridge", s.Bridge)
	}
	for _, p := range s.Cgroups {
		args = append(args, "-cgroup", p)
	}
	if s.MaxProcesses > 0 {
		args = append(args, "-nproc", strconv.Itoa(s.MaxProcesses))
	}
	if s.MaxAddressSpace > 0 {
		args = append(args, "-as", strconv.FormatInt(s.MaxAddressSpace, 10))
	}
	if s.TempSize > 0 {
		args = append(args, "-tmpsize", strconv.FormatInt(s.TempSize, 10))
	}
	if s.RequireFull {
		args = append(args, "-full")
	}
	if s.Probe {
		args = append(args, "-probe")
	}
	if s.Seccomp != "" {
		args = append(args, "-seccomp", s.Seccomp)
	}
	if s.LandlockABI > 0 {
		args = append(args, "-abi", strconv.Itoa(s.LandlockABI))
	}
	if s.Notice != "" {
		args = append(args, "-notice", s.Notice)
	}
	args = append(args, "--")
	args = append(args, s.Argv...)
	if len(args)-1 > MaxArgs {
		return nil, fmt.Errorf("%w: %d launcher arguments, at most %d: the policy is too large", ErrMalformed, len(args)-1, MaxArgs)
	}
	return args, nil
}

// ErrMalformed is wrapped by every Decode error.
var ErrMalformed = errors.New("malformed launcher arguments")

// Decode parses a launcher argv without its argv[0].
func Decode(args []string) (Spec, error) {
	var s Spec
	if len(args) > MaxArgs {
		return s, fmt.Errorf("%w: %d arguments, at most %d", ErrMalformed, len(args), MaxArgs)
	}
	if len(args) < 1 {
		return s, fmt.Errorf("%w: no contract version", ErrMalformed)
	}
	if args[0] != Version {
		return s, fmt.Errorf("%w: contract version %q, this launcher speaks %q", ErrMalformed, clip(args[0]), Version)
	}
	i := 1
	sawNet, sawDashes := false, false
	for i < len(args) {
		opt := args[i]
		i++
		if opt == "--" {
			sawDashes = true
			break
		}
		var val string
		switch opt {
		case "-w", "-t", "-r", "-g", "-d", "-u", "-C", "-net", "-seccomp", "-port", "-bridge", "-abi", "-notice",
			"-cgroup", "-nproc", "-as", "-tmpsize":
			if i >= len(args) {
				return s, fmt.Errorf("%w: option %s needs a value", ErrMalformed, opt)
			}
			val = args[i]
			i++
		}
		switch opt {
		case "-w":
			s.Writable = append(s.Writable, val)
		case "-t":
			if err := setOnce(&s.TempDir, opt, val); err != nil {
				return s, err
			}
		case "-r":
			s.ReadOnly = append(s.ReadOnly, val)
		case "-g":
			s.Guarded = append(s.Guarded, val)
		case "-d":
			s.DenyRead = append(s.DenyRead, val)
		case "-u":
			s.UnixSockets = append(s.UnixSockets, val)
		case "-C":
			if err := setOnce(&s.Dir, opt, val); err != nil {
				return s, err
			}
		case "-seccomp":
			if s.Seccomp != "" {
				return s, fmt.Errorf("%w: -seccomp given twice", ErrMalformed)
			}
			if !validProgram(val) {
				return s, fmt.Errorf("%w: -seccomp: not a program in hex", ErrMalformed)
			}
			s.Seccomp = val
		case "-net":
			if sawNet {
				return s, fmt.Errorf("%w: -net given twice", ErrMalformed)
			}
			sawNet = true
			switch val {
			case NetDeny:
			case NetAllow:
				s.AllowNetwork = true
			case NetProxied:
				s.Proxied = true
			default:
				return s, fmt.Errorf("%w: -net %q: want %s, %s or %s", ErrMalformed, clip(val), NetDeny, NetAllow, NetProxied)
			}
		case "-port":
			port, ok := parsePort(val)
			if !ok {
				return s, fmt.Errorf("%w: -port %q: want a port, 1 to 65535, in decimal without leading zeros", ErrMalformed, clip(val))
			}
			s.Ports = append(s.Ports, port)
		case "-bridge":
			if err := setOnce(&s.Bridge, opt, val); err != nil {
				return s, err
			}
		case "-abi":
			if s.LandlockABI != 0 {
				return s, fmt.Errorf("%w: -abi given twice", ErrMalformed)
			}
			abi, ok := parseABI(val)
			if !ok {
				return s, fmt.Errorf("%w: -abi %q: want a Landlock ABI, 1 to %d, in decimal without leading zeros", ErrMalformed, clip(val), MaxABI)
			}
			s.LandlockABI = abi
		case "-notice":
			if err := setOnce(&s.Notice, opt, val); err != nil {
				return s, err
			}
		case "-cgroup":
			s.Cgroups = append(s.Cgroups, val)
		case "-nproc":
			if s.MaxProcesses != 0 {
				return s, fmt.Errorf("%w: -nproc given twice", ErrMalformed)
			}
			n, ok := parseDecimal(val, MaxProcesses)
			if !ok {
				return s, fmt.Errorf("%w: -nproc %q: want 1 to %d, in decimal without leading zeros", ErrMalformed, clip(val), MaxProcesses)
			}
			s.MaxProcesses = n
		case "-as", "-tmpsize":
			dst := &s.MaxAddressSpace
			if opt == "-tmpsize" {
				dst = &s.TempSize
			}
			if *dst != 0 {
				return s, fmt.Errorf("%w: %s given twice", ErrMalformed, opt)
			}
			n, ok := parseBytes(val)
			if !ok {
				return s, fmt.Errorf("%w: %s %q: want a byte count, 1 to %d, in decimal without leading zeros", ErrMalformed, opt, clip(val), MaxBytes)
			}
			*dst = n
		case "-full":
			s.RequireFull = true
		case "-probe":
			s.Probe = true
		default:
			return s, fmt.Errorf("%w: unknown option %q", ErrMalformed, clip(opt))
		}
	}
	if !sawDashes {
		return s, fmt.Errorf("%w: missing --", ErrMalformed)
	}
	if !sawNet {
		return s, fmt.Errorf("%w: missing -net", ErrMalformed)
	}
	s.Argv = append([]string(nil), args[i:]...)
	if err := s.validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// setOnce sets *dst to val for an option that may be given once, and
// never empty.
func setOnce(dst *string, opt, val string) error {
	if *dst != "" {
		return fmt.Errorf("%w: %s given twice", ErrMalformed, opt)
	}
	if val == "" {
		return fmt.Errorf("%w: %s: empty", ErrMalformed, opt)
	}
	*dst = val
	return nil
}

// validate checks everything the arguments carry.
func (s Spec) validate() error {
	check := func(what, p string) error {
		if err := CheckPath(p); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrMalformed, what, err)
		}
		return nil
	}
	for _, p := range s.Writable {
		if err := check("writable root", p); err != nil {
			return err
		}
	}
	for _, p := range s.ReadOnly {
		if err := check("read-only subpath", p); err != nil {
			return err
		}
	}
	for _, p := range s.Guarded {
		if err := check("guarded name", p); err != nil {
			return err
		}
	}
	for _, p := range s.DenyRead {
		if err := check("deny-read path", p); err != nil {
			return err
		}
	}
	for _, p := range s.UnixSockets {
		if err := check("UNIX socket", p); err != nil {
			return err
		}
	}
	if s.TempDir != "" {
		if err := check("temp dir", s.TempDir); err != nil {
			return err
		}
	}
	for _, p := range s.Cgroups {
		if err := check("cgroup", p); err != nil {
			return err
		}
	}
	if s.MaxProcesses < 0 || s.MaxProcesses > MaxProcesses {
		return fmt.Errorf("%w: process limit %d out of range", ErrMalformed, s.MaxProcesses)
	}
	if s.MaxAddressSpace < 0 || s.MaxAddressSpace > MaxBytes || s.TempSize < 0 || s.TempSize > MaxBytes {
		return fmt.Errorf("%w: byte limit out of range", ErrMalformed)
	}
	if s.Dir != "" {
		if err := check("working directory", s.Dir); err != nil {
			return err
		}
	}
	if s.Bridge != "" {
		if err := check("bridge", s.Bridge); err != nil {
			return err
		}
	}
	if s.AllowNetwork && s.Proxied {
		return fmt.Errorf("%w: network allow and proxied at once", ErrMalformed)
	}
	if s.AllowNetwork && len(s.Ports) > 0 {
		return fmt.Errorf("%w: -port under network allow", ErrMalformed)
	}
	if s.Proxied && len(s.Ports) == 0 {
		return fmt.Errorf("%w: proxied network without the proxy's -port", ErrMalformed)
	}
	if s.Bridge != "" && len(s.Ports) == 0 {
		return fmt.Errorf("%w: -bridge without -port", ErrMalformed)
	}
	for _, port := range s.Ports {
		if port < 1 || port > 65535 {
			return fmt.Errorf("%w: port %d out of range", ErrMalformed, port)
		}
	}
	if s.LandlockABI < 0 || s.LandlockABI > MaxABI {
		return fmt.Errorf("%w: Landlock ABI %d out of range", ErrMalformed, s.LandlockABI)
	}
	if !plainLine(s.Notice) {
		return fmt.Errorf("%w: -notice holds a control character", ErrMalformed)
	}
	if s.Seccomp != "" && !validProgram(s.Seccomp) {
		return fmt.Errorf("%w: seccomp program is not hex instructions", ErrMalformed)
	}
	if s.Probe && len(s.Argv) != 0 {
		return fmt.Errorf("%w: probe mode takes no command", ErrMalformed)
	}
	if !s.Probe && len(s.Argv) == 0 {
		return fmt.Errorf("%w: no command", ErrMalformed)
	}
	for _, a := range s.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("%w: command argument contains NUL", ErrMalformed)
		}
	}
	return nil
}

// parsePort parses a port in the one form Encode writes (and the C
// decoder accepts): decimal, no sign, no leading zero, 1 to 65535.
func parsePort(v string) (int, bool) { return parseDecimal(v, 65535) }

// parseDecimal parses the one form Encode writes numbers in (and the C
// decoder accepts): decimal, no sign, no leading zero, 1 to max.
func parseDecimal(v string, max int) (int, bool) {
	if v == "" || len(v) > len(strconv.Itoa(max)) || v[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= max
}

// MaxProcesses bounds -nproc: the kernel's own bound on pids
// (PID_MAX_LIMIT).
const MaxProcesses = 1 << 22

// MaxBytes bounds -as and -tmpsize (2^60: an exbibyte), so both decoders
// read every value without overflow.
const MaxBytes int64 = 1 << 60

// parseBytes parses -as and -tmpsize: decimal, no sign, no leading zero,
// 1 to MaxBytes.
func parseBytes(v string) (int64, bool) {
	if v == "" || len(v) > len(strconv.FormatInt(MaxBytes, 10)) || v[0] == '0' {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, n <= MaxBytes
}

// MaxABI bounds the Landlock ABI -abi may carry: a kernel's answer, kept
// small so the launchers' decoders agree on every value.
const MaxABI = 99

// parseABI parses -abi: decimal, no sign, no leading zero, 1 to MaxABI.
func parseABI(v string) (int, bool) { return parseDecimal(v, MaxABI) }

// plainLine reports whether s holds no ASCII control character (the C
// decoder's same test; the provider's text has been through OneLine).
func plainLine(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

// validProgram reports whether h is a non-empty hex BPF program: lowercase
// hex, whole 8-byte instructions.
func validProgram(h string) bool {
	if h == "" || len(h)%16 != 0 {
		return false
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckPath reports why p is not an absolute, clean path free of NUL bytes.
func CheckPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case strings.IndexByte(p, 0) >= 0:
		return errors.New("path contains a NUL byte")
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is not absolute", clip(p))
	case path.Clean(p) != p:
		return fmt.Errorf("path %q is not clean", clip(p))
	}
	return nil
}

// clip shortens s for an error message.
func clip(s string) string {
	const n = 120
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
