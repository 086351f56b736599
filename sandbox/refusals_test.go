package sandbox

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// TestRefusalsFromOutput: the wordings of the common tools, matched
// against a policy; a refusal the host's own permissions would have made
// (or of a path the policy allows) is never the sandbox's.
func TestRefusalsFromOutput(t *testing.T) {
	r := &pathRules{mode: WorkspaceWrite, dir: "/ws/sub", writable: []string{"/ws"}, temp: "/tmp/run",
		readOnly: []string{"/ws/.git/hooks", "/ws/.vscode"}, guarded: []string{"/ws/.envrc"}, toolConfigs: []string{".vscode", ".envrc"},
		extraRO: []string{"keep"}, denyRead: []string{"/home/u/.ssh", "/secret"}, userDeny: []string{"/secret"},
		network: NetworkDeny, withheld: []string{"GITHUB_TOKEN"}}
	hostOK := map[string]bool{"/etc/shadow": false, "/etc/passwd": false} // what the user could not do unconfined
	defer func(f func(string, bool) bool, e func(string) bool) { hostAccess, hostExists = f, e }(hostAccess, hostExists)
	hostAccess = func(p string, write bool) bool {
		ok, known := hostOK[p]
		return ok || !known
	}
	hostExists = func(string) bool { return true }
	tests := []struct {
		name, out string
		want      []string // Refusal.String() prefixes, in order
	}{
		{"sh, EROFS", "sh: 1: cannot create /var/x: Read-only file system", []string{"write /var/x: outside the writable roots (/ws, $TMPDIR); --allow-write /var (Policy.WritableRoots)"}},
		{"sh, relative", "sh: 1: cannot create ../../out: Permission denied", []string{"write /out"}},
		{"sh, relative name", "sh: 1: cannot create f: Read-only file system", nil}, // /ws/sub/f is writable
		{"go, lowercase", "open /var/x.go: read-only file system", []string{"write /var/x.go"}},
		{"go, landlock", "mkdir /home/u/.cache: permission denied", []string{"write /home/u/.cache"}},
		{"python", "PermissionError: [Errno 13] Permission denied: '/var/x.py'", []string{"write /var/x.py"}},
		{"node", "Error: EROFS: read-only file system, open '/var/x.js'", []string{"write /var/x.js"}},
		{"rust, path above", "error: failed to create directory `/home/u/.cargo/registry`\n\nCaused by:\n  Read-only file system (os error 30)", []string{"write /home/u/.cargo/registry"}},
		{"git", "error: could not lock config file /ws/.git/hooks/x: Permission denied", []string{"write /ws/.git/hooks/x: protected /ws/.git/hooks"}},
		{"tool config", "sh: 1: cannot create /ws/.vscode/settings.json: Read-only file system", []string{"write /ws/.vscode/settings.json: protected tool config .vscode: a later tool runs what it names; --writable-config .vscode (Policy.WritableConfigs)"}},
		{"guarded", "sh: 1: cannot create /ws/.envrc: Read-only file system", []string{"write /ws/.envrc: protected tool config .envrc"}},
		{"deny-read, namespaces", "cat: /home/u/.ssh/id_rsa: No such file or directory", []string{"read /home/u/.ssh/id_rsa: deny-read path /home/u/.ssh: a credential store, unreadable by default; --allow-read /home/u/.ssh (Policy.AllowRead)"}},
		{"deny-read, the caller's", "open /secret/k: permission denied", []string{"read /secret/k: deny-read path /secret (Policy.DenyRead); drop --deny-read /secret"}},
		{"the host's own refusal", "cat: /etc/shadow: Permission denied\nsh: 1: cannot create /etc/passwd: Read-only file system", nil},
		{"allowed path", "cat: /ws/missing: No such file or directory\nsh: cannot create /tmp/run/x: Permission denied", nil},
		{"curl", "curl: (6) Could not resolve host: example.com", []string{"network example.com: network deny: the command reaches no host; --allow-domain example.com"}},
		{"git, network", "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com", []string{"network github.com"}},
		{"go, network", `go: example.org/m@v1: Get "https://proxy.golang.org/x": dial tcp: lookup proxy.golang.org on 10.0.0.53:53: connect: network is unreachable`, []string{"network proxy.golang.org"}},
		{"npm", "npm error getaddrinfo ENOTFOUND registry.npmjs.org", []string{"network registry.npmjs.org"}},
		{"pip", "WARNING: Retrying ... HTTPSConnectionPool(host='pypi.org', port=443): Failed to establish a new connection: [Errno -3] Temporary failure in name resolution", []string{"network pypi.org"}},
		{"python, no host", "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>", []string{"network the network"}},
		{"withheld variable", "sh: 1: GITHUB_TOKEN: parameter not set", []string{"env GITHUB_TOKEN: withheld: it looks like a credential; --keep-env GITHUB_TOKEN (Policy.Env.Keep)"}},
		{"a longer name is another variable", "MY_GITHUB_TOKEN_X is not set", nil},
		{"one line per refusal", "cat: /home/u/.ssh/a: No such file or directory\ncat: /home/u/.ssh/a: No such file or directory", []string{"read /home/u/.ssh/a"}},
		{"no error word", "wrote /var/x", nil},
		{"directly below /", "mkdir: cannot create directory '/opt2': Permission denied", []string{"write /opt2: outside the writable roots (/ws, $TMPDIR); directly below /, where no writable root is suggested"}},
		{"a deny-read path is only a read", "cat: /home/u/.ssh/id_ed25519: Permission denied", []string{"read /home/u/.ssh/id_ed25519"}},
		{"GNU's 'for reading'", "head: cannot open '/home/u/.ssh/id_rsa' for reading: Permission denied", []string{"read /home/u/.ssh/id_rsa"}},
		{"the host's unreadable file", "sh: 1: cannot create /etc/shadow: Permission denied", nil},
		{"the tool's own path", "/bin/sh: 1: cannot create /var/x: Permission denied", []string{"write /var/x"}},
		{"the tool's own path, a relative name", "/bin/sh: 1: cannot create f: Read-only file system", nil}, // /ws/sub/f is writable
		{"the tool's own path, a relative name refused", "/bin/sh: 1: cannot create ../../y: Read-only file system", []string{"write /y"}},
		{"a path first", "/var/x: Permission denied", []string{"write /var/x"}},
		{"cargo, git dir", "fatal: cannot create directory at '../../y': Read-only file system", []string{"write /y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := r.refusals([]byte(tt.out), nil, nil)
			if len(got) != len(tt.want) {
				t.Fatalf("refusals %v, want %d like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i].String(), w) || got[i].Seen != "output" {
					t.Errorf("refusal %d %q (seen %s), want it to start %q", i, got[i].String(), got[i].Seen, w)
				}
			}
		})
	}
	// Under the proxied or allowed network, resolution errors are not
	// the sandbox's; the proxy's own refusals are exact.
	r.network = NetworkProxied
	got, _ := r.refusals([]byte("curl: (6) Could not resolve host: example.com"), []BlockedRequest{{Host: "evil.example", Port: 443, Count: 2, Reason: "not in allow_domains"}}, nil)
	if len(got) != 1 || got[0].Target != "evil.example:443" || got[0].Seen != "sandbox" || !strings.Contains(got[0].Allow, "--allow-domain evil.example") {
		t.Errorf("proxied: %+v", got)
	}
}

// TestRefusalsRecorded: what the guard or supervisor recorded comes
// first, exact (Seen "sandbox", what was tried, the policy's rule and
// allowing change), and wins over the same path matched from the output;
// a name no terminal should see is quoted; a malformed record is
// skipped; past the bounds, the rest are counted.
func TestRefusalsRecorded(t *testing.T) {
	r := &pathRules{mode: WorkspaceWrite, dir: "/ws", writable: []string{"/ws"}, temp: "/tmp/run",
		guarded: []string{"/ws/.envrc"}, toolConfigs: []string{".envrc"}}
	defer func(f func(string, bool) bool) { hostAccess = f }(hostAccess)
	hostAccess = func(string, bool) bool { return true }
	records := string(vocab.RefusalLine("create", vocab.RefusalRuleProtected, "/ws/.envrc")) +
		string(vocab.RefusalLine("chmod", vocab.RefusalRuleOutside, "/var/a\nb\xff")) +
		"forged rule /x\nmore 7\nmore 3\n" +
		"chmod outside /var/half" // unfinished: skipped
	got, unlisted := r.refusals([]byte("sh: 1: cannot create /ws/.envrc: Read-only file system\nsh: 1: cannot create /var/y: Read-only file system"), nil, []byte(records))
	want := []Refusal{
		{Kind: RefusedWrite, Target: "/ws/.envrc", Rule: "protected tool config .envrc: a later tool runs what it names", Allow: "--writable-config .envrc (Policy.WritableConfigs)", Seen: "sandbox", Op: "create"},
		{Kind: RefusedWrite, Target: `"/var/a\nb\xff"`, Rule: "outside the writable roots (/ws, $TMPDIR)", Allow: "--allow-write /var (Policy.WritableRoots)", Seen: "sandbox", Op: "chmod"},
		{Kind: RefusedWrite, Target: "/var/y", Rule: "outside the writable roots (/ws, $TMPDIR)", Allow: "--allow-write /var (Policy.WritableRoots)", Seen: "output"},
	}
	if !reflect.DeepEqual(got, want) || unlisted != 7 {
		t.Errorf("refusals %+v, unlisted %d; want %+v, 7", got, unlisted, want)
	}
	if s := got[0].String(); s != "write /ws/.envrc (create): protected tool config .envrc: a later tool runs what it names; --writable-config .envrc (Policy.WritableConfigs) allows it" {
		t.Errorf("String() = %q", s)
	}
	// Past maxRefusals, the distinct rest are counted.
	var many []byte
	for i := range maxRefusals + 5 {
		many = append(many, vocab.RefusalLine("chmod", vocab.RefusalRuleOutside, fmt.Sprintf("/var/%d", i))...)
	}
	if got, unlisted := r.refusals(nil, nil, many); len(got) != maxRefusals || unlisted != 5 {
		t.Errorf("%d refusals, %d unlisted; want %d, 5", len(got), unlisted, maxRefusals)
	}
}

// TestExplain: the rule that decides each access, and the change that
// allows it.
func TestExplain(t *testing.T) {
	r := &pathRules{mode: WorkspaceWrite, dir: "/ws", writable: []string{"/ws", "/cache"}, temp: "/tmp/run",
		readOnly: []string{"/ws/.git/config", "/ws/keep"}, extraRO: []string{"keep"}, denyRead: []string{"/home/u/.aws"}}
	tests := []struct {
		path        string
		read, write bool
		rule, allow string
	}{
		{"src/main.go", true, true, "inside the writable root /ws", ""},
		{"/cache/x", true, true, "inside the writable root /cache", ""},
		{"/tmp/run/f", true, true, "temp dir", ""},
		{"/etc/hosts", true, false, "outside the writable roots (/ws, /cache, $TMPDIR)", "--allow-write /etc (Policy.WritableRoots)"},
		{".git/config", true, false, "a version-control hook or config", ""},
		{"keep/f", true, false, "read-only subpath /ws/keep (Policy.ReadOnlySubpaths)", "drop --read-only keep"},
		{"/home/u/.aws/credentials", false, false, "no writable root is suggested", ""},
	}
	for _, tt := range tests {
		a := r.explain(tt.path)
		if a.Read != tt.read || a.Write != tt.write || !strings.Contains(a.WriteRule, tt.rule) || !strings.HasPrefix(a.AllowWrite, tt.allow) {
			t.Errorf("explain(%q) = %+v, want read %v write %v, rule %q, allow %q", tt.path, a, tt.read, tt.write, tt.rule, tt.allow)
		}
	}
	if a := r.explain("/home/u/.aws/credentials"); a.ReadRule != "deny-read path /home/u/.aws: a credential store, unreadable by default" || a.AllowRead != "--allow-read /home/u/.aws (Policy.AllowRead)" {
		t.Errorf("deny-read: %+v", a)
	}
	// The home directory's dot-files and the credential stores: refused,
	// with no flag offered (a command's output could name any of them).
	r.home = "/home/u"
	for _, p := range []string{"/home/u/.config/autostart/x.desktop", "/home/u/.ssh/authorized_keys", "/home/u/.aws/credentials"} {
		if a := r.explain(p); a.Write || a.AllowWrite != "" || !strings.Contains(a.WriteRule, "no writable root is suggested") {
			t.Errorf("explain(%q) = %+v, want refused with no flag offered", p, a)
		}
	}
	if a := r.explain("/home/u/src/other/x"); a.Write || a.AllowWrite != "--allow-write /home/u/src/other (Policy.WritableRoots)" {
		t.Errorf("a project in the home directory: %+v", a)
	}
	r.mode = ReadOnly
	if a := r.explain("/ws/x"); a.Write || a.AllowWrite != "--mode workspace-write (Policy.Mode)" {
		t.Errorf("read-only mode: %+v", a)
	}
}

// TestNoRefusalsOfARunnerFailure: a launcher that failed ran no command;
// what its fatal line names is not a refusal (and no flag is offered for
// it). The control: the same line from the command is one.
func TestNoRefusalsOfARunnerFailure(t *testing.T) {
	const prefix = "ns-run: fatal: [0123456789abcdef0123456789abcdef] "
	defer func(f func(string, bool) bool, e func(string) bool) { hostAccess, hostExists = f, e }(hostAccess, hostExists)
	hostAccess = func(string, bool) bool { return true }
	hostExists = func(string) bool { return false }
	w := &Wrapped{
		RunnerFailure: RunnerFailureRule{Kind: RuleExitAndLine, ExitCode: 125, FatalPrefix: prefix},
		rules:         &pathRules{mode: WorkspaceWrite, writable: []string{"/ws"}, network: NetworkDeny},
	}
	line := "mount a fresh /var/proc2 : Operation not permitted\n"
	if o := w.Classify(125, []byte(prefix+line)); o.Kind != OutcomeRunnerFailure || len(o.Refusals) != 0 {
		t.Errorf("runner failure: %+v", o)
	}
	if o := w.Classify(1, []byte("cannot create /var/proc2: Operation not permitted\n")); len(o.Refusals) != 1 {
		t.Errorf("control, the command's own line: %+v", o)
	}
}
