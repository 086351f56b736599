package sandbox

import "path/filepath"

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
	// Other agents' and assistants' tokens.
	".codex/auth.json", ".claude/.credentials.json", ".gemini/oauth_creds.json", ".config/github-copilot",
}

// DefaultDenyRead returns the paths every wrap denies reading on top of
// Policy.DenyRead, unless Policy.AllowRead releases them: the credential
// stores under the home directory (see credentialPaths in this file for
// the list and why), whether they exist or not (one made during the run
// stays unreadable too). A default that is the workspace or a writable
// root, or contains one, is not applied: the caller chose to work there.
// Without a home directory there are none.
func DefaultDenyRead() []string {
	home, ok := realHome()
	if !ok {
		return nil
	}
	out := make([]string, len(credentialPaths))
	for i, p := range credentialPaths {
		out[i] = filepath.Join(home, p)
	}
	return out
}

// defaultDenied is DefaultDenyRead without what allow releases and without
// a default that is or contains one of roots (the workspace and the
// writable roots).
func defaultDenied(allow, roots []string) []string {
	var out []string
next:
	for _, d := range DefaultDenyRead() {
		for _, a := range allow {
			if within(d, a) {
				continue next
			}
		}
		for _, r := range roots {
			if within(r, d) {
				continue next
			}
		}
		out = append(out, d)
	}
	return out
}
