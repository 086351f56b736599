package vocab

import "strings"

// HeldEnvPrefix is prepended to the name of every variable a launcher must
// not start with (see Held): the provider moves NAME=value to
// SANDBOX_LOCAL_ENV_NAME=value, and each launcher, once confined and just
// before it execs the command, renames every variable with the prefix back
// (ReleaseEnv), so the command gets the caller's variables unchanged while
// the launcher's own start (the dynamic loader, the C start-up, the Go
// runtime) never sees them. Only this prefix is shared with the C stage of
// ns-run, which renames back without knowing the list.
const HeldEnvPrefix = "SANDBOX_LOCAL_ENV_"

// HeldEnvNames are the variables held by exact name: glibc's list of the
// variables it ignores for a setuid program (UNSECURE_ENVVARS: they make
// the dynamic loader or libc load code, read or write files the variable
// names), but for TMPDIR, which the wrap sets itself; and the Go runtime's
// own settings, read where a launcher's Go runtime starts (the landlock Go
// chain: a build without cgo; the C launchers start none). GOMAXPROCS is
// not held: the Go chain starts its stages with GOMAXPROCS=1 unless the
// caller set it (launcher/landlock_chain_linux.go).
var HeldEnvNames = []string{
	"GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
	"NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR",
	"GODEBUG", "GOGC", "GOMEMLIMIT", "GOTRACEBACK",
}

// HeldEnvNamePrefixes hold every variable whose name starts with one of
// them: the dynamic loader's LD_* (LD_LIBRARY_PATH, LD_PRELOAD, LD_AUDIT,
// LD_DEBUG_OUTPUT, ...) and malloc's MALLOC_* (MALLOC_TRACE writes a file).
var HeldEnvNamePrefixes = []string{"LD_", "MALLOC_"}

// Held reports whether a launcher must start without the variable name.
func Held(name string) bool {
	for _, p := range HeldEnvNamePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, n := range HeldEnvNames {
		if name == n {
			return true
		}
	}
	return false
}

// HoldEnv returns env as a launcher is started with: every variable Held
// names renamed to HeldEnvPrefix+NAME, and every variable whose name
// already has the prefix dropped (it would otherwise become a variable of
// the command the caller never set). The order is kept.
func HoldEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, HeldEnvPrefix):
		case Held(name):
			out = append(out, HeldEnvPrefix+kv)
		default:
			out = append(out, kv)
		}
	}
	return out
}

// ReleaseEnv undoes HoldEnv for the command: every variable with
// HeldEnvPrefix gets its own name back, whatever it is (as ns-run's C stage
// does it). The order is kept.
func ReleaseEnv(env []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		out[i] = strings.TrimPrefix(kv, HeldEnvPrefix)
	}
	return out
}
