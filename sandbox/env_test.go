package sandbox

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// TestLooksSecret is the classifier's rule, name by name: true is
// withheld by default.
func TestLooksSecret(t *testing.T) {
	cases := []struct {
		name, value string
		secret      bool
		why         string
	}{
		// What a shell and its tools need.
		{"PATH", "/usr/bin:/bin", false, ""},
		{"HOME", "/home/u", false, ""},
		{"USER", "u", false, ""},
		{"SHELL", "/bin/bash", false, ""},
		{"TERM", "xterm-256color", false, ""},
		{"LANG", "C.UTF-8", false, ""},
		{"LC_ALL", "C", false, ""},
		{"TZ", "UTC", false, ""},
		{"PWD", "/w", false, "the working directory, not a password"},
		{"XDG_RUNTIME_DIR", "/run/user/1000", false, ""},
		{"XDG_SESSION_ID", "3", false, "SESSION alone is no credential word"},
		{"XDG_SESSION_TYPE", "wayland", false, ""},
		{"DESKTOP_SESSION", "gnome", false, ""},
		{"SESSION_MANAGER", "local/host:@/tmp/.ICE-unix/1", false, ""},
		{"TERM_SESSION_ID", "w0t0p0:1234", false, ""},
		{"DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus", false, ""},
		{"XAUTHORITY", "/run/user/1000/.Xauthority", false, "AUTHORITY is no AUTH word; a path, the file is the fs policy's"},
		{"DISPLAY", ":0", false, ""},
		// Build tools.
		{"GOPATH", "/home/u/go", false, ""},
		{"GOFLAGS", "-mod=mod", false, ""},
		{"GOPRIVATE", "github.com/corp", false, "module paths, not secrets"},
		{"GOPROXY", "https://proxy.golang.org,direct", false, ""},
		{"GOPROXY", "https://u:hunter2@goproxy.corp,direct", true, "a URL with a password"},
		{"CARGO_HOME", "/home/u/.cargo", false, ""},
		{"NODE_OPTIONS", "--max-old-space-size=4096", false, ""},
		{"TOKENIZERS_PARALLELISM", "false", false, "TOKEN only as the end of a word part"},
		{"KEYBOARD", "us", false, "KEY only as the end of a word part"},
		{"KEYTIMEOUT", "1", false, "zsh's, not a key"},
		{"KEYMAP", "us", false, ""},
		{"SSLKEYLOGFILE", "/tmp/keys", false, ""},
		{"PGPASSFILE", "/home/u/.pgpass", false, "PASS only as a whole word part"},
		{"GIT_ASKPASS", "/usr/bin/ksshaskpass", false, ""},
		{"GIT_AUTHOR_NAME", "A U Thor", false, "AUTHOR is no AUTH word"},
		{"GIT_AUTHOR_EMAIL", "a@example.com", false, ""},
		{"AUTHORS", "x", false, ""},
		{"HTTP_PROXY", "http://proxy:3128", false, "no login in it"},
		{"GIT_REMOTE", "ssh://git@github.com/x/y", false, "a user but no password"},
		{"AWSOME", "1", false, "AWS_ is the prefix, with its underscore"},
		{"SSH_AGENT_PID", "42", false, ""},
		{"CI", "true", false, ""},
		{"GITHUB_ACTIONS", "true", false, ""},

		// Credentials by word.
		{"GITHUB_TOKEN", "ghp_x", true, ""},
		{"GH_TOKEN", "x", true, ""},
		{"github_token", "x", true, "case is ignored"},
		{"GHTOKEN", "x", true, "TOKEN ending a word part"},
		{"NPM_TOKEN", "x", true, ""},
		{"NODE_AUTH_TOKEN", "x", true, ""},
		{"VAULT_TOKEN", "x", true, ""},
		{"HF_TOKEN", "x", true, ""},
		{"CI_JOB_JWT_V2", "x", true, ""},
		{"ACTIONS_ID_TOKEN_REQUEST_TOKEN", "x", true, ""},
		{"OPENAI_API_KEY", "sk-x", true, ""},
		{"ANTHROPIC_API_KEY", "x", true, ""},
		{"HEROKU_API_KEY", "x", true, ""},
		{"STRIPE_APIKEY", "x", true, "KEY ending a word part"},
		{"SIGNING_KEYS", "x", true, ""},
		{"MONKEY", "banana", true, "a false positive the rule accepts: Keep passes it"},
		{"HOTKEY", "F1", true, "the same"},
		{"LESSKEY", "/home/u/.less", true, "the same"},
		{"PASSWORD_STORE_DIR", "/home/u/.password-store", true, "the same"},
		{"CLIENT_SECRET", "x", true, ""},
		{"SECRETS_FILE", "x", true, ""},
		{"PGPASSWORD", "x", true, ""},
		{"DB_PASSWD", "x", true, ""},
		{"DB_PASS", "x", true, ""},
		{"GPG_PASSPHRASE", "x", true, ""},
		{"GOOGLE_APPLICATION_CREDENTIALS", "/k.json", true, ""},
		{"GCP_CREDS", "x", true, ""},
		{"SESSION_COOKIE", "x", true, ""},
		{"AZURE_STORAGE_CONNECTION_STRING", "x", true, ""},
		{"SENTRY_DSN", "https://k@sentry.io/1", true, ""},
		{"BASIC_AUTH", "u:p", true, ""},
		{"AUTH_HEADER", "Bearer x", true, ""},
		{"OAUTH_CLIENT_ID", "x", true, "AUTH ending a word part"},
		{"HTTP_AUTHORIZATION", "x", true, "AUTHORIZATION is an AUTH word"},
		{"npm_config__authToken", "x", true, ""},
		{"SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1", true, "unless AllowUnixSockets lists it"},
		{"DOCKER_AUTH_CONFIG", "{}", true, ""},
		// Credentials by provider or by name.
		{"AWS_SECRET_ACCESS_KEY", "x", true, ""},
		{"AWS_PROFILE", "prod", true, "every AWS_ variable"},
		{"AWS_REGION", "eu-west-1", true, "every AWS_ variable: Keep passes it"},
		{"AZURE_CLIENT_ID", "x", true, ""},
		{"CLOUDSDK_CORE_ACCOUNT", "x", true, ""},
		{"AWS_CA_BUNDLE", "/etc/ssl/corp.pem", false, "the CA certificates to trust: public"},
		{"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "/etc/ssl/corp.pem", false, "the CA certificates to trust: public"},
		{"DIGITALOCEAN_ACCESS_TOKEN", "x", true, ""},
		{"OP_SESSION_my", "x", true, ""},
		{"BW_SESSION", "x", true, ""},
		{"KUBECONFIG", "/k/config", true, ""},
		{"DOCKER_CONFIG", "/d", true, ""},
		{"GPG_AGENT_INFO", "/run/gpg:0:1", true, ""},
		{"MYSQL_PWD", "x", true, ""},
		// By value.
		{"DATABASE_URL", "postgres://app:s3cret@db:5432/app", true, "a URL with a password"},
		{"HTTPS_PROXY", "http://me:pw@proxy:3128", true, ""},
		{"REDIS_URL", "redis://:pw@cache:6379", true, "an empty user, a password"},
	}
	for _, c := range cases {
		if got := looksSecret(c.name, c.value); got != c.secret {
			t.Errorf("looksSecret(%q, %q) = %v, want %v %s", c.name, c.value, got, c.secret, c.why)
		}
	}
}

// TestHeldNamesAreNotSecret: the launcher's held variables are a
// different mechanism (they reach the command unchanged); none of them is
// withheld.
func TestHeldNamesAreNotSecret(t *testing.T) {
	for _, n := range append(append([]string(nil), vocab.HeldEnvNames...), "LD_LIBRARY_PATH", "LD_PRELOAD", "MALLOC_ARENA_MAX") {
		if looksSecret(n, "x") {
			t.Errorf("held variable %s looks secret", n)
		}
	}
}

func TestBuildEnv(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "FOO=bar", "GITHUB_TOKEN=t", "AWS_REGION=r", "AWS_SECRET_ACCESS_KEY=s",
		"SSH_AUTH_SOCK=/run/agent.sock", "GITHUB_TOKEN=again", "NOEQUALS"}
	none := func(string) bool { return false }
	cases := []struct {
		name         string
		p            EnvPolicy
		sock         func(string) bool
		env, witheld []string
	}{
		{"default", EnvPolicy{}, none,
			[]string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "FOO=bar", "NOEQUALS"},
			[]string{"GITHUB_TOKEN", "AWS_REGION", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK"}},
		{"inherit, allowed agent socket", EnvPolicy{Start: EnvInherit}, func(p string) bool { return p == "/run/agent.sock" },
			[]string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "FOO=bar", "SSH_AUTH_SOCK=/run/agent.sock", "NOEQUALS"},
			[]string{"GITHUB_TOKEN", "AWS_REGION", "AWS_SECRET_ACCESS_KEY"}},
		{"keep by name and pattern", EnvPolicy{Keep: []string{"GITHUB_TOKEN", "AWS_R*"}}, none,
			[]string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "FOO=bar", "GITHUB_TOKEN=t", "AWS_REGION=r", "GITHUB_TOKEN=again", "NOEQUALS"},
			[]string{"AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK"}},
		{"minimal", EnvPolicy{Start: EnvMinimal, Keep: []string{"FOO"}}, none,
			[]string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "FOO=bar"}, nil},
		{"empty, set", EnvPolicy{Start: EnvEmpty, Set: map[string]string{"B": "2", "A": "1", "API_KEY": "k"}}, none,
			[]string{"A=1", "API_KEY=k", "B=2"}, nil},
		{"unset, set replaces", EnvPolicy{Unset: []string{"L*", "HOME"}, Set: map[string]string{"PATH": "/usr/bin", "FOO": ""}}, none,
			[]string{"NOEQUALS", "FOO=", "PATH=/usr/bin"},
			[]string{"GITHUB_TOKEN", "AWS_REGION", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK"}},
	}
	for _, c := range cases {
		env, withheld := buildEnv(base, c.p, c.sock)
		if !slices.Equal(env, c.env) || !slices.Equal(withheld, c.witheld) {
			t.Errorf("%s:\n env %q\nwant %q\n withheld %q\nwant %q", c.name, env, c.env, withheld, c.witheld)
		}
	}
	if env, _ := buildEnv(nil, EnvPolicy{Start: EnvEmpty}, none); env == nil || len(env) != 0 {
		t.Errorf("empty start: %q, want an empty, non-nil environment", env)
	}
}

func TestValidateEnvRejects(t *testing.T) {
	ws := t.TempDir()
	cases := map[string]EnvPolicy{
		"unknown start":     {Start: "some"},
		"empty keep":        {Keep: []string{""}},
		"keep with =":       {Keep: []string{"A=B"}},
		"keep with NUL":     {Keep: []string{"A\x00"}},
		"bad keep pattern":  {Keep: []string{"A["}},
		"unset with =":      {Unset: []string{"=X"}},
		"empty unset":       {Unset: []string{""}},
		"set with =":        {Set: map[string]string{"A=B": "c"}},
		"set with NUL":      {Set: map[string]string{"A\x00B": "c"}},
		"set empty name":    {Set: map[string]string{"": "c"}},
		"set NUL value":     {Set: map[string]string{"A": "c\x00d"}},
		"set TMPDIR":        {Set: map[string]string{"TMPDIR": "/x"}},
		"set the token var": {Set: map[string]string{vocab.TokenEnv: "x"}},
		"set a held name":   {Set: map[string]string{vocab.HeldEnvPrefix + "LD_PRELOAD": "x"}},
	}
	for name, ep := range cases {
		_, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: ReadOnly, Workspace: ws, Env: ep}})
		if !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%s: %v, want INVALID_POLICY", name, err)
		}
	}
}

// TestValidateAppliesEnv: validate builds the command's environment from
// Request.Env, or the process's own when it is nil.
func TestValidateAppliesEnv(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("SBX_ENV_TEST_TOKEN", "secret")
	t.Setenv("SBX_ENV_TEST_PLAIN", "plain")
	r, err := validate(Request{Argv: []string{"true"}, Policy: Policy{Mode: ReadOnly, Workspace: ws}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.env, "SBX_ENV_TEST_PLAIN=plain") || slices.ContainsFunc(r.env, func(kv string) bool { return strings.HasPrefix(kv, "SBX_ENV_TEST_TOKEN=") }) {
		t.Errorf("env from os.Environ: %q", r.env)
	}
	if !slices.Contains(r.withheldEnv, "SBX_ENV_TEST_TOKEN") {
		t.Errorf("withheld %q, want SBX_ENV_TEST_TOKEN", r.withheldEnv)
	}
	r, err = validate(Request{Argv: []string{"true"}, Env: []string{"A=1", "API_KEY=k"}, Policy: Policy{Mode: ReadOnly, Workspace: ws}})
	if err != nil || !slices.Equal(r.env, []string{"A=1"}) || !slices.Equal(r.withheldEnv, []string{"API_KEY"}) {
		t.Errorf("env from Request.Env: %q withheld %q (%v)", r.env, r.withheldEnv, err)
	}
}

// launcherRunner is a fake runner shaped like the Linux ones: a held
// environment and a token-signed failure line.
type launcherRunner struct{ fakeRunner }

func (*launcherRunner) prepare(context.Context, vocab.Spec) (launch, error) {
	return launch{
		heldEnv: &HeldEnv{Prefix: vocab.HeldEnvPrefix, Names: vocab.HeldEnvNames, NamePrefixes: vocab.HeldEnvNamePrefixes},
		rule:    RunnerFailureRule{Kind: RuleExitAndLine},
	}, nil
}

// TestWrapWithholdsEnv: the policy is applied before the launcher's own
// variables: the withheld names are reported, a held variable is still
// held, and TMPDIR and the token survive even an empty start.
func TestWrapWithholdsEnv(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	p := &Provider{cands: []runner{&launcherRunner{fakeRunner{n: "fake"}}}, fsys: osFS{}}
	caller := []string{"A=1", "GITHUB_TOKEN=t", "LD_PRELOAD=/x.so", vocab.TokenEnv + "=forged", vocab.HeldEnvPrefix + "X=1"}
	for _, start := range []EnvStart{EnvInherit, EnvEmpty} {
		w, err := p.Wrap(context.Background(), Request{Argv: []string{"true"}, Env: caller,
			Policy: Policy{Mode: ReadOnly, Workspace: t.TempDir(), Env: EnvPolicy{Start: start}, Caches: CachePolicy{Off: true}}})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Cleanup()
		var want []string
		if start == EnvInherit {
			want = []string{"A=1", vocab.HeldEnvPrefix + "LD_PRELOAD=/x.so"}
			if !slices.Equal(w.WithheldEnv, []string{"GITHUB_TOKEN", vocab.TokenEnv}) {
				t.Errorf("%s: withheld %q", start, w.WithheldEnv)
			}
		}
		want = append(want, "TMPDIR="+w.TempDir, w.LaunchEnv[1])
		if !slices.Equal(w.Env, want) || !strings.HasPrefix(w.LaunchEnv[1], vocab.TokenEnv+"=") || w.LaunchEnv[1] == vocab.TokenEnv+"=forged" {
			t.Errorf("%s: Env %q, want %q", start, w.Env, want)
		}
	}
}

// TestSetVars: the one pass gives what setting each variable in turn
// (dropping the name, appending the value) and then dropping the unset
// names gives, duplicates and names in both lists included.
func TestSetVars(t *testing.T) {
	cases := []struct {
		name            string
		env, set, unset []string
		want            []string
	}{
		{"empty", nil, nil, nil, []string{}},
		{"set appends after env", []string{"A=1", "B=2"}, []string{"C=3"}, nil, []string{"A=1", "B=2", "C=3"}},
		{"set replaces", []string{"A=1", "B=2", "C=3"}, []string{"B=x"}, nil, []string{"A=1", "C=3", "B=x"}},
		{"env duplicates go", []string{"A=1", "A=2", "B=2"}, []string{"A=x"}, nil, []string{"B=2", "A=x"}},
		{"last of set wins, at its place", []string{"Z=0"}, []string{"A=1", "B=2", "A=3"}, nil, []string{"Z=0", "B=2", "A=3"}},
		{"unset drops env", []string{"A=1", "R=5", "B=2"}, nil, []string{"R"}, []string{"A=1", "B=2"}},
		{"unset drops set too", []string{"A=1"}, []string{"R=6", "C=3"}, []string{"R"}, []string{"A=1", "C=3"}},
		{"value with =", []string{"A=a=b"}, []string{"B=c=d"}, []string{"X"}, []string{"A=a=b", "B=c=d"}},
		{"a name is not a prefix", []string{"AB=1", "A=2"}, []string{"A=3"}, []string{"ABC"}, []string{"AB=1", "A=3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := setVars(c.env, c.set, c.unset)
			if !slices.Equal(got, c.want) {
				t.Errorf("setVars = %q, want %q", got, c.want)
			}
			// The step-by-step reference.
			ref := append([]string(nil), c.env...)
			for _, kv := range c.set {
				name, _, _ := strings.Cut(kv, "=")
				ref = append(dropVar(ref, name), kv)
			}
			for _, name := range c.unset {
				ref = dropVar(ref, name)
			}
			if !slices.Equal(got, ref) {
				t.Errorf("setVars = %q, step by step %q", got, ref)
			}
		})
	}
}
