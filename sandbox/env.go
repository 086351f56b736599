package sandbox

import (
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// EnvStart says which of the caller's variables the command's environment
// starts from.
type EnvStart string

const (
	// EnvInherit (the default, also ""): every variable of the caller's
	// environment.
	EnvInherit EnvStart = "inherit"
	// EnvMinimal: only the variables a shell and its tools need to start
	// (see MinimalEnv).
	EnvMinimal EnvStart = "minimal"
	// EnvEmpty: none; only what Set gives (and TMPDIR, which the wrap
	// sets). Without PATH a command must be named by a path with a slash.
	EnvEmpty EnvStart = "empty"
)

// MinimalEnv names the variables EnvMinimal starts from, as patterns
// (LC_* is every locale category); the Windows ones are absent elsewhere.
var MinimalEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR",
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "USERNAME", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TEMP", "TMP",
}

// EnvPolicy is how the command's environment is made from the caller's
// (Request.Env, or the process's own). In order: Start picks the variables
// to begin with, and Keep adds the ones it names; of the others, every one
// that looks like a credential (see docs/policy.md, "Environment") is
// withheld; Unset removes; Set adds or replaces. The zero value inherits everything but
// the credentials. Names are compared as the system does (exactly, but
// ignoring case on Windows).
type EnvPolicy struct {
	// Start is EnvInherit (default), EnvMinimal or EnvEmpty.
	Start EnvStart `json:"start,omitempty"`
	// Keep are names or path.Match patterns ("*", "?", "[...]") of the
	// caller's variables passed on although they look like credentials
	// or Start leaves them out: "GITHUB_TOKEN", "AWS_*".
	Keep []string `json:"keep,omitempty"`
	// Unset are names or patterns of variables removed.
	Unset []string `json:"unset,omitempty"`
	// Set are variables the command gets with these values, never
	// withheld. TMPDIR, TMP, TEMP and names starting SANDBOX_LOCAL_ are
	// the wrap's own: setting one is INVALID_POLICY.
	Set map[string]string `json:"set,omitempty"`
}

// envFoldCase: Windows compares environment names ignoring case.
const envFoldCase = runtime.GOOS == "windows"

// validateEnv checks an EnvPolicy: every name and pattern non-empty,
// without '=' or NUL, every pattern well-formed, no reserved name set.
func validateEnv(p EnvPolicy) error {
	switch p.Start {
	case "", EnvInherit, EnvMinimal, EnvEmpty:
	default:
		return invalidf("unknown env start %q (want %q, %q or %q)", p.Start, EnvInherit, EnvMinimal, EnvEmpty)
	}
	for what, list := range map[string][]string{"env keep": p.Keep, "env unset": p.Unset} {
		for _, pat := range list {
			if err := envName(what, pat); err != nil {
				return err
			}
			if _, err := path.Match(pat, ""); err != nil {
				return invalidf("%s pattern %q: %v", what, pat, err)
			}
		}
	}
	for name, value := range p.Set {
		if err := envName("env set", name); err != nil {
			return err
		}
		if err := checkNUL("env set value of "+name, value); err != nil {
			return err
		}
		if wrapOwnsEnv(name) {
			return invalidf("env set %q: the wrap sets it itself", name)
		}
	}
	return nil
}

func envName(what, name string) error {
	if err := checkNUL(what+" name", name); err != nil {
		return err
	}
	if name == "" {
		return invalidf("%s name is empty", what)
	}
	if strings.ContainsRune(name, '=') {
		return invalidf("%s name %q contains '='", what, name)
	}
	return nil
}

// wrapOwnsEnv reports whether the wrap sets name itself: the temp
// variables and the launcher's own.
func wrapOwnsEnv(name string) bool {
	n := strings.ToUpper(name)
	return n == "TMPDIR" || n == "TMP" || n == "TEMP" || strings.HasPrefix(n, "SANDBOX_LOCAL_")
}

// buildEnv applies p to base (NAME=value entries): it returns the
// command's environment and the names withheld as credentials, each once.
// allowedSocket says whether a UNIX socket path is in the policy's
// AllowUnixSockets (then SSH_AUTH_SOCK naming it is kept).
func buildEnv(base []string, p EnvPolicy, allowedSocket func(string) bool) (env, withheld []string) {
	env = []string{}
	for _, kv := range base {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case matchEnv(p.Keep, name):
		case p.Start == EnvEmpty, p.Start == EnvMinimal && !matchEnv(MinimalEnv, name):
			continue
		case looksSecret(name, value) && !(isEnv(name, "SSH_AUTH_SOCK") && allowedSocket(value)):
			if !slices.Contains(withheld, name) {
				withheld = append(withheld, name)
			}
			continue
		}
		if matchEnv(p.Unset, name) {
			continue
		}
		env = append(env, kv)
	}
	names := make([]string, 0, len(p.Set))
	for name := range p.Set {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		env = slices.DeleteFunc(env, func(kv string) bool { n, _, _ := strings.Cut(kv, "="); return isEnv(n, name) })
		env = append(env, name+"="+p.Set[name])
	}
	return env, withheld
}

// isEnv compares two variable names as the system does.
func isEnv(a, b string) bool {
	if envFoldCase {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// matchEnv reports whether name matches one of the patterns.
func matchEnv(patterns []string, name string) bool {
	if envFoldCase {
		name = strings.ToUpper(name)
	}
	for _, pat := range patterns {
		if envFoldCase {
			pat = strings.ToUpper(pat)
		}
		if ok, _ := path.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// Credential words, matched in a name's upper-case form. The rule, and
// why, is in docs/policy.md ("Environment").
var (
	// secretWords are withheld wherever they occur in a name: no
	// innocent name contains them.
	secretWords = []string{"SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "COOKIE", "CONNECTION_STRING"}
	// secretSuffixes are withheld as the end of a word part: TOKEN in
	// GITHUB_TOKEN and GHTOKEN, not in TOKENIZERS_PARALLELISM; KEY in
	// API_KEY and APIKEY, not in KEYBOARD or KEYTIMEOUT.
	secretSuffixes = []string{"TOKEN", "TOKENS", "KEY", "KEYS", "AUTH", "JWT", "CREDS", "DSN"}
	// secretParts are withheld as a whole word part (DB_PASS).
	secretParts = []string{"PASS"}
	// secretPrefixes are the cloud providers' SDK and CLI variables:
	// every one of them picks or carries credentials (AWS_PROFILE, a
	// role to assume, a token file), so all are withheld.
	secretPrefixes = []string{"AWS_", "AZURE_", "GCP_", "GCLOUD_", "CLOUDSDK_", "DIGITALOCEAN_", "OP_SESSION_"}
	// secretNames point at credentials, or are known secrets, without
	// saying so in a word: a kubeconfig holds cluster tokens and keys,
	// Docker's config registry logins, GPG_AGENT_INFO the agent's socket,
	// BW_SESSION unlocks a Bitwarden vault, MYSQL_PWD is a password.
	secretNames = []string{"KUBECONFIG", "DOCKER_CONFIG", "GPG_AGENT_INFO", "BW_SESSION", "MYSQL_PWD"}
)

// looksSecret reports whether the variable name=value looks like a
// credential: by its name, or by a value holding a URL with a password
// (postgres://user:pw@host, a proxy with a login).
func looksSecret(name, value string) bool {
	n := strings.ToUpper(name)
	if slices.Contains(secretNames, n) {
		return true
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(n, p) && !caBundle(n) {
			return true
		}
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(n, func(r rune) bool { return (r < 'A' || r > 'Z') && (r < '0' || r > '9') }) {
		if slices.Contains(secretParts, part) || authWord(part) {
			return true
		}
		for _, s := range secretSuffixes {
			if strings.HasSuffix(part, s) {
				return true
			}
		}
	}
	return urlWithPassword(value)
}

// caBundle: a cloud variable that names the CA certificates to trust
// (AWS_CA_BUNDLE, CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE), public by nature,
// which a CLI behind a TLS-intercepting proxy cannot work without.
func caBundle(n string) bool {
	return strings.HasSuffix(n, "_CA_BUNDLE") || strings.HasSuffix(n, "_CA_CERTS_FILE")
}

// authWord: a word part that begins with AUTH (AUTHTOKEN, AUTHZ,
// AUTHORIZATION), but not AUTHOR, AUTHORS or AUTHORITY (GIT_AUTHOR_NAME).
func authWord(part string) bool {
	return strings.HasPrefix(part, "AUTH") && (!strings.HasPrefix(part, "AUTHOR") || strings.HasPrefix(part, "AUTHORIZ"))
}

// urlWithPassword reports whether v holds scheme://user:password@host.
func urlWithPassword(v string) bool {
	for {
		i := strings.Index(v, "://")
		if i < 0 {
			return false
		}
		v = v[i+3:]
		authority := v
		if end := strings.IndexAny(v, "/?#, \t;"); end >= 0 {
			authority = v[:end]
		}
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			if _, pw, ok := strings.Cut(authority[:at], ":"); ok && pw != "" {
				return true
			}
		}
	}
}

// socketAllowed returns whether a path names one of the allowed UNIX
// sockets, as given or resolved.
func socketAllowed(given, resolved []string) func(string) bool {
	return func(p string) bool {
		if p == "" || !filepath.IsAbs(p) {
			return false
		}
		p = filepath.Clean(p)
		if slices.Contains(given, p) || slices.Contains(resolved, p) {
			return true
		}
		real, err := filepath.EvalSymlinks(p)
		return err == nil && slices.Contains(resolved, real)
	}
}
