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
//
// The options are one table, [Options] in spec.go beside [Spec] (name,
// value kind, bound, repeatable or not, path or not, the options it needs,
// its C field): Encode writes, Decode reads and checks from it, and
// [CHeader] generates from it the C decoder's table and its struct spec
// (launcher/shared_contract_linux.h), so a new option is one field and one
// row there, and where each launcher applies it.
package vocab

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
)

// Version is the contract version carried as the first argument. Bump it on
// any change to the wire form or to the meaning of a field.
const Version = "sandbox-local/7"

// BridgeHello starts the message in which the namespaces launcher hands
// the provider its loopback listeners (-bridge): one seqpacket message,
// "BridgeHello TOKEN PORT...", space-separated, with one listening TCP
// socket per port in SCM_RIGHTS, in the same order; the provider answers
// "ok" once it serves them. The C side reads it from
// launcher/shared_contract_linux.h, which CHeader generates.
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

// NetMode is a Spec's network mode, the one value both launchers decode
// -net into.
type NetMode int

// The network modes; the C decoder's SBX_NET_MODE_ constants are the same
// numbers (CHeader generates them).
const (
	// NetworkDeny: no network but the allowed loopback ports.
	NetworkDeny NetMode = iota
	// NetworkAllow lifts the network confinement.
	NetworkAllow
	// NetworkProxied: the network is the domain proxy only.
	NetworkProxied
)

// netModes are the wire words of the network modes, by NetMode.
var netModes = [...]string{NetworkDeny: NetDeny, NetworkAllow: NetAllow, NetworkProxied: NetProxied}

// String returns the mode's word on the wire.
func (m NetMode) String() string {
	if m < 0 || int(m) >= len(netModes) {
		return fmt.Sprintf("NetMode(%d)", int(m))
	}
	return netModes[m]
}

// ParseNetMode returns the mode whose wire word is w.
func ParseNetMode(w string) (NetMode, bool) {
	for m, word := range netModes {
		if word == w {
			return NetMode(m), true
		}
	}
	return NetworkDeny, false
}

// TokenLen is the length of a token in hex characters (128 bits).
const TokenLen = 32

// MaxArgs bounds the number of launcher arguments Decode accepts, so a
// hostile or corrupted argv cannot make the launcher do unbounded work.
const MaxArgs = 1 << 16

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
	for i := range Options {
		o := &Options[i]
		for _, v := range o.get(&s) {
			if o.Value == Flag {
				args = append(args, o.Name)
			} else {
				args = append(args, o.Name, v)
			}
		}
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
	sawDashes := false
	var seen [numOptions]bool
	for i < len(args) {
		name := args[i]
		i++
		if name == "--" {
			sawDashes = true
			break
		}
		id, ok := lookupOption(name)
		if !ok {
			return s, fmt.Errorf("%w: unknown option %q", ErrMalformed, clip(name))
		}
		o := &Options[id]
		if seen[id] && !o.Repeatable {
			return s, fmt.Errorf("%w: %s given twice", ErrMalformed, o.Name)
		}
		seen[id] = true
		var val string
		var n int64
		if o.Value != Flag {
			if i >= len(args) {
				return s, fmt.Errorf("%w: option %s needs a value", ErrMalformed, o.Name)
			}
			val = args[i]
			i++
			var err error
			if n, err = o.check(val); err != nil {
				return s, err
			}
		}
		o.set(&s, val, n)
	}
	if !sawDashes {
		return s, fmt.Errorf("%w: missing --", ErrMalformed)
	}
	for id := range Options {
		if Options[id].Required && !seen[id] {
			return s, fmt.Errorf("%w: missing %s", ErrMalformed, Options[id].Name)
		}
	}
	s.Argv = append([]string(nil), args[i:]...)
	if err := s.validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// validate checks everything the arguments carry: each value against its
// option's row in Options, then what holds between options.
func (s Spec) validate() error {
	for i := range Options {
		o := &Options[i]
		if o.Value == Flag {
			continue
		}
		for _, v := range o.get(&s) {
			if _, err := o.check(v); err != nil {
				return err
			}
		}
	}
	for i := range Options {
		o := &Options[i]
		if len(o.get(&s)) == 0 {
			continue
		}
		for _, need := range o.Needs {
			if len(Options[need].get(&s)) == 0 {
				return fmt.Errorf("%w: %s without %s", ErrMalformed, o.Name, Options[need].Name)
			}
		}
	}
	if s.Network < NetworkDeny || s.Network > NetworkProxied {
		return fmt.Errorf("%w: unknown network mode %d", ErrMalformed, int(s.Network))
	}
	if s.Network == NetworkAllow && len(s.Ports) > 0 {
		return fmt.Errorf("%w: -port under network allow", ErrMalformed)
	}
	if s.Network == NetworkProxied && len(s.Ports) == 0 {
		return fmt.Errorf("%w: proxied network without the proxy's -port", ErrMalformed)
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

// MaxProcesses bounds -nproc: the kernel's own bound on pids
// (PID_MAX_LIMIT).
const MaxProcesses = 1 << 22

// MaxBytes bounds -as and -tmpsize (2^60: an exbibyte), so both decoders
// read every value without overflow.
const MaxBytes int64 = 1 << 60

// MaxABI bounds the Landlock ABI -abi may carry: a kernel's answer, kept
// small so the launchers' decoders agree on every value.
const MaxABI = 99

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
