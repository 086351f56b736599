package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/nativepath"
)

// credentialPaths are the places, relative to the home directory, where
// tools keep what authenticates the user: keys, tokens, cookies, password
// stores. DefaultDenyRead denies them; Policy.AllowRead releases them.
// They are the ones a command needs only to act as the user somewhere
// else (push, publish, deploy, sign, log in), which an agent's command
// should not do unasked; tools that merely build and test read none of
// them (npm, pip, cargo, go, git and make were checked with the list on).
var credentialPaths = []string{
	// SSH and GPG keys, and agents' sockets beside them.
	".ssh", ".gnupg",
	// Cloud and cluster credentials.
	".aws", ".azure", ".config/gcloud", ".kube", ".oci", ".config/doctl",
	// Container registries.
	".docker", ".config/containers/auth.json",
	// Object stores and hosting providers' command-line tools.
	".s3cfg", ".boto", ".config/rclone", ".config/hcloud", ".config/scw", ".config/linode-cli",
	".databrickscfg", ".snowflake", ".fly", ".config/ngrok", ".ngrok2",
	// Forges and git over HTTP (git's credential store in both of its
	// places, and its credential cache daemon's socket).
	".netrc", ".git-credentials", ".config/git/credentials", ".git-credential-cache", ".cache/git/credential",
	".config/gh", ".config/hub", ".config/glab-cli",
	// Package registries.
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
	".gem/credentials", ".terraform.d/credentials.tfrc.json", ".terraformrc", ".vault-token",
	".config/pypoetry/auth.toml", ".composer/auth.json", ".config/composer/auth.json",
	// Model and data hubs.
	".cache/huggingface/token", ".huggingface/token", ".kaggle",
	// Encryption keys (age keys for sops) and the NSS database of client
	// certificates.
	".config/sops", ".pki",
	// Databases.
	".pgpass", ".my.cnf",
	// Password stores and keyrings.
	".password-store", ".local/share/keyrings", ".config/op",
	// Browser profiles (cookies, saved passwords).
	".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".config/microsoft-edge", ".thunderbird",
	// Deploy and hosting tools, error trackers, CI.
	".pulumi/credentials.json", ".config/configstore/firebase-tools.json", ".local/share/com.vercel.cli",
	".config/netlify", ".netlify", ".wrangler", ".config/.wrangler", ".config/stripe", ".sentryclirc", ".circleci/cli.yml",
	// Other agents' and assistants' tokens.
	".codex/auth.json", ".claude/.credentials.json", ".gemini/oauth_creds.json", ".config/github-copilot",
}

// DefaultDenyRead returns the paths every wrap denies reading on top of
// Policy.DenyRead, unless Policy.AllowRead releases them: the credential
// stores under the home directory (see credentialPaths in this file for
// the list and why), whether they exist or not (one made during the run
// stays unreadable too); the same stores below $XDG_CONFIG_HOME,
// $XDG_CACHE_HOME and $XDG_DATA_HOME when this process's environment sets
// them elsewhere; and what the credential variables of this process's
// environment name (credentialVars). A default that is the workspace or a writable
// root, or contains one, is not applied: the caller chose to work there.
// Without a home directory there are none.
func DefaultDenyRead() []string {
	home, ok := realHome()
	if !ok {
		return nil
	}
	out := make([]string, 0, len(credentialPaths)+8)
	for _, p := range credentialPaths {
		out = append(out, filepath.Join(home, p))
		// The same store where the XDG variables move a tool's files.
		for _, x := range xdgDirs {
			if rest, ok := strings.CutPrefix(p, x.under+"/"); ok {
				if dir := os.Getenv(x.env); filepath.IsAbs(dir) && filepath.Clean(dir) != filepath.Join(home, x.under) {
					out = append(out, filepath.Join(dir, rest))
				}
			}
		}
	}
	// Stores the caller's environment names elsewhere.
	for _, v := range credentialVars {
		for _, p := range filepath.SplitList(os.Getenv(v)) {
			if filepath.IsAbs(p) {
				out = append(out, filepath.Clean(p))
			}
		}
	}
	return out
}

// xdgDirs are the XDG base directories a credential path may lie under:
// with the variable set, the tool keeps the same store there instead
// (git's credentials and gh's hosts under $XDG_CONFIG_HOME).
var xdgDirs = []struct{ env, under string }{
	{"XDG_CONFIG_HOME", ".config"}, {"XDG_CACHE_HOME", ".cache"}, {"XDG_DATA_HOME", ".local/share"},
}

// credentialVars name a credential file or directory a tool uses instead
// of its default place (a list, for KUBECONFIG): what they name is denied
// too. The variables themselves are withheld from the command by the
// environment rule; the files they name were otherwise still readable.
var credentialVars = []string{
	"GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "KUBECONFIG", "AWS_SHARED_CREDENTIALS_FILE",
	"AWS_CONFIG_FILE", "AZURE_CONFIG_DIR", "DOCKER_CONFIG", "GNUPGHOME", "GH_CONFIG_DIR",
	"PASSWORD_STORE_DIR", "NPM_CONFIG_USERCONFIG", "NETRC", "VAULT_TOKEN_FILE",
}

// defaultDenied is DefaultDenyRead without what allow releases and without
// a default that is or contains one of roots (the workspace and the
// writable roots).
func defaultDenied(allow, roots []string) []string {
	var out []string
next:
	for _, d := range DefaultDenyRead() {
		for _, a := range allow {
			if nativepath.Within(d, a) {
				continue next
			}
		}
		for _, r := range roots {
			if nativepath.Within(r, d) {
				continue next
			}
		}
		out = append(out, d)
	}
	return out
}
