package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/nativepath"
)

// Mode says where a command may write.
type Mode string

const (
	// ReadOnly: reads anywhere (minus DenyRead), writes only to the private
	// temp dir and /dev/null-like devices.
	ReadOnly Mode = "read-only"
	// WorkspaceWrite: ReadOnly plus writes under Workspace and WritableRoots,
	// minus ReadOnlySubpaths.
	WorkspaceWrite Mode = "workspace-write"
)

// String returns the mode's name, as the CLI's --mode takes it.
func (m Mode) String() string { return string(m) }

// NetworkMode says whether the command may use the network.
type NetworkMode string

const (
	// NetworkDeny (the default): no sockets but socketpair(2); no TCP, UDP,
	// raw, netlink, or UNIX sockets to host daemons, except the sockets
	// listed in Policy.AllowUnixSockets.
	NetworkDeny NetworkMode = "deny"
	// NetworkAllow: the network is not confined.
	NetworkAllow NetworkMode = "allow"
	// NetworkProxied: the network is a domain proxy that the provider runs
	// for the wrap, and only the names Policy.AllowDomains lists are
	// reached through it; no other connection leaves the sandbox (see
	// docs/policy.md, "The proxied network"). Otherwise as NetworkDeny.
	NetworkProxied NetworkMode = "proxied"
)

// Policy is what one command may do. It is per call: the provider keeps none.
type Policy struct {
	// Mode is required.
	Mode Mode `json:"mode"`
	// Workspace is an absolute, existing directory; symlinks are resolved.
	// Required in both modes (it is the default working directory).
	Workspace string `json:"workspace"`
	// WritableRoots are extra writable directories (workspace-write only).
	// Symlinks on their paths are resolved, except one inside the workspace
	// or another writable root, which an earlier command could have
	// planted: that is INVALID_POLICY (give the real path).
	WritableRoots []string `json:"writable_roots,omitempty"`
	// ReadOnlySubpaths are kept read-only under every writable root, on top
	// of the defaults (see DefaultReadOnlySubpaths). A relative entry is
	// taken under each writable root; an absolute one as it is.
	ReadOnlySubpaths []string `json:"read_only_subpaths,omitempty"`
	// WritableConfigs releases entries of DefaultToolConfigs, by their name
	// as listed there (".vscode", ".cargo/config.toml"): those stay
	// writable under every writable root, for an agent asked to edit them.
	// A name that is not a default is INVALID_POLICY. Git's surface
	// (DefaultReadOnlySubpaths) is never released.
	WritableConfigs []string `json:"writable_configs,omitempty"`
	// DenyRead are absolute paths the command may not read, on top of
	// DefaultDenyRead (the credential stores under the home directory).
	DenyRead []string `json:"deny_read,omitempty"`
	// AllowRead releases defaults of DefaultDenyRead: a default path equal
	// to or beneath one of these absolute paths stays readable (the home
	// directory releases them all). It releases nothing of DenyRead.
	AllowRead []string `json:"allow_read,omitempty"`
	// Network defaults to NetworkDeny.
	Network NetworkMode `json:"network,omitempty"`
	// AllowDomains are the destinations the proxy of NetworkProxied
	// connects to: a name ("registry.npmjs.org"), a wildcard for the names
	// below one ("*.github.com", not github.com itself), or an IP literal,
	// each with an optional ":port" (any port without). Only with
	// NetworkProxied; a malformed entry is INVALID_POLICY.
	AllowDomains []string `json:"allow_domains,omitempty"`
	// DenyDomains are refused even where AllowDomains would allow them.
	// Only with NetworkProxied.
	DenyDomains []string `json:"deny_domains,omitempty"`
	// AllowPrivateDestinations lets an allowed name resolve to a loopback,
	// private or link-local address (or an allowed IP literal be one).
	// Off, the proxy refuses those, so a public name that an attacker
	// points at 127.0.0.1 or the cloud metadata address (DNS rebinding)
	// reaches nothing. Only with NetworkProxied.
	AllowPrivateDestinations bool `json:"allow_private_destinations,omitempty"`
	// AllowLocalPorts are TCP ports on the host's loopback the command may
	// connect to directly, under NetworkDeny or NetworkProxied: a dev
	// server or a test database the agent runs outside the sandbox. The
	// command reaches them at 127.0.0.1.
	AllowLocalPorts []int `json:"allow_local_ports,omitempty"`
	// AllowUnixSockets are absolute paths of pathname UNIX sockets the
	// command may connect (and send datagrams) to even under network deny:
	// an ssh-agent, a language server, a test database. Every other UNIX
	// socket of the host stays unreachable where the runner can confine
	// sockets by path (Linux: Landlock ABI 9; macOS: always); elsewhere the
	// wrap is partial and a gap says so. A symlink is resolved to the
	// socket it names, unless it lies inside a writable root, where a
	// command could have planted it (INVALID_POLICY: give the real path);
	// a path that does not exist yet is kept (it is reachable only if a
	// socket is there by launch). Under
	// NetworkAllow the listed sockets are reachable like every other one.
	AllowUnixSockets []string `json:"allow_unix_sockets,omitempty"`
	// RequireFull makes Wrap fail with SANDBOX_UNAVAILABLE instead of
	// returning partial enforcement.
	RequireFull bool `json:"require_full,omitempty"`
	// Env is how the command's environment is made from Request.Env; the
	// zero value withholds the variables that look like credentials
	// (Wrapped.WithheldEnv names them).
	Env EnvPolicy `json:"env,omitzero"`
	// Limits bounds the processes, memory and temp dir size of the
	// command; the zero value holds only DefaultMaxProcesses.
	Limits Limits `json:"limits,omitzero"`
	// Caches says where the toolchains keep their caches; the zero value
	// gives the workspace caches of the sandbox's own (Wrapped.Caches
	// names them).
	Caches CachePolicy `json:"caches,omitzero"`
}

// Request is one command to wrap.
type Request struct {
	// Argv is the command and its arguments; Argv[0] is looked up in PATH
	// inside the sandbox when it has no slash.
	Argv []string `json:"argv"`
	// Dir is the working directory; defaults to Policy.Workspace.
	Dir string `json:"dir,omitempty"`
	// Env is the caller's environment, which Policy.Env makes the
	// command's; nil means os.Environ(). TMPDIR is always set to the wrap's
	// private temp dir.
	Env []string `json:"-"`
	// Policy is required.
	Policy Policy `json:"policy"`
}

// resolved is a validated request with every path absolute, clean and, where
// it exists, free of symlinks.
type resolved struct {
	argv          []string
	dir           string
	env           []string // the command's, Policy.Env applied
	withheldEnv   []string // names Policy.Env withheld as credentials
	mode          Mode
	workspace     string
	writableRoots []string // workspace first in workspace-write; empty in read-only
	extraRO       []string // caller's ReadOnlySubpaths, validated, unexpanded
	toolConfigs   []string // DefaultToolConfigs minus WritableConfigs, relative
	denyRead      []string
	userDeny      []string // the caller's own DenyRead entries, resolved as in denyRead
	unixSockets   []string
	network       netPolicy // its mode is the policy's network mode
	requireFull   bool
	limits        Limits
	caches        *cachePlan
}

// Validate checks r as Wrap does before it selects a runner: the
// INVALID_POLICY errors, with nothing spawned or created.
func (r Request) Validate() error {
	_, err := validate(r)
	return err
}

// validate checks req before anything is spawned or changed, and resolves
// its paths.
func validate(req Request) (*resolved, error) {
	p := req.Policy
	r := &resolved{requireFull: p.RequireFull}
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, invalidf("empty argv")
	}
	for _, a := range req.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, invalidf("argv contains a NUL byte")
		}
	}
	r.argv = append([]string(nil), req.Argv...)
	for _, e := range req.Env {
		if strings.IndexByte(e, 0) >= 0 {
			return nil, invalidf("env contains a NUL byte")
		}
	}
	if err := validateEnv(p.Env); err != nil {
		return nil, err
	}
	if err := validateLimits(p.Limits); err != nil {
		return nil, err
	}
	r.limits = p.Limits

	switch p.Mode {
	case ReadOnly, WorkspaceWrite:
		r.mode = p.Mode
	case "":
		return nil, invalidf("policy mode is required (%q or %q)", ReadOnly, WorkspaceWrite)
	default:
		return nil, invalidf("unknown policy mode %q", p.Mode)
	}
	switch p.Network {
	case "", NetworkDeny, NetworkProxied, NetworkAllow:
	default:
		return nil, invalidf("unknown network mode %q", p.Network)
	}
	network, err := validateNetwork(p)
	if err != nil {
		return nil, err
	}
	r.network = network

	ws, err := existingDir("workspace", p.Workspace)
	if err != nil {
		return nil, err
	}
	r.workspace = ws
	if p.Mode == ReadOnly && len(p.WritableRoots) > 0 {
		return nil, invalidf("writable roots given in %s mode", ReadOnly)
	}
	if p.Mode == WorkspaceWrite {
		if err := saneWritable("workspace", ws); err != nil {
			return nil, err
		}
		if err := vcsInterior("workspace", ws); err != nil {
			return nil, err
		}
		roots := pathList{}
		roots.add(ws)
		for _, w := range p.WritableRoots {
			d, err := existingDir("writable root", w)
			if err != nil {
				return nil, err
			}
			if err := saneWritable("writable root", d); err != nil {
				return nil, err
			}
			if err := vcsInterior("writable root", d); err != nil {
				return nil, err
			}
			roots.add(d)
		}
		r.writableRoots = roots.list
		// A symlink on the way to a root that lies inside a writable root
		// may have been planted by an earlier command under this very
		// policy (ws/cache turned into a link to ~/.config): following it
		// would hand this command what the last one chose.
		for _, given := range append([]string{p.Workspace}, p.WritableRoots...) {
			if _, err := resolveOutside(given, r.writableRoots); err != nil {
				return nil, &Error{Code: CodeInvalidPolicy, Reason: fmt.Sprintf("writable root %q", given), Err: err}
			}
		}
	}

	for _, s := range p.ReadOnlySubpaths {
		if err := checkNUL("read-only subpath", s); err != nil {
			return nil, err
		}
		if filepath.IsAbs(s) {
			if filepath.Clean(s) != s {
				return nil, invalidf("read-only subpath %q is not clean", s)
			}
		} else if s == "" || filepath.Clean(s) != s || s == "." || s == ".." || strings.HasPrefix(s, "../") {
			return nil, invalidf("relative read-only subpath %q must be clean and stay under its root", s)
		}
		r.extraRO = append(r.extraRO, s)
	}
	if r.toolConfigs, err = protectedConfigs(p.WritableConfigs); err != nil {
		return nil, err
	}
	for _, a := range p.AllowRead {
		if err := absPath("allow-read path", a); err != nil {
			return nil, err
		}
	}
	var deny pathList
	var denyDirs []string // the denied paths that are directories
	dirs := dirCache{}
	defaults := defaultDenied(p.AllowRead, append([]string{ws}, r.writableRoots...))
	for i, d := range append(defaults, p.DenyRead...) {
		if err := absPath("deny-read path", d); err != nil {
			return nil, err
		}
		// The launchers open every path without following a symlink (a
		// race could swap one in): a directory above d that is a symlink
		// (~/.config kept in a dotfiles repository) is resolved here, and
		// the final name kept, a link denied as itself.
		d = dirs.resolveDirs(d)
		deny.add(d)
		if i >= len(defaults) {
			r.userDeny = append(r.userDeny, d)
		}
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			// A link is denied as what it points to as well: rules
			// attach to what a path resolves to.
			if real, err := filepath.EvalSymlinks(d); err == nil {
				deny.add(real)
			}
		case fi.IsDir():
			denyDirs = append(denyDirs, d)
		}
	}
	deniedLinkTargets(&deny, denyDirs, append([]string{ws}, r.writableRoots...))
	r.denyRead = deny.list

	var sockets pathList
	for _, u := range p.AllowUnixSockets {
		sock, err := unixSocket(u, r.writableRoots)
		if err != nil {
			return nil, err
		}
		if deny.has(u) || deny.has(sock) {
			return nil, invalidf("UNIX socket %q is also a deny-read path", u)
		}
		sockets.add(sock)
	}
	r.unixSockets = sockets.list

	env := req.Env
	if env == nil {
		env = os.Environ()
	}
	r.env, r.withheldEnv = buildEnv(env, p.Env, socketAllowed(p.AllowUnixSockets, r.unixSockets))
	if r.caches, err = planCaches(p, ws, env); err != nil {
		return nil, err
	}

	r.dir = ws
	if req.Dir != "" {
		d, err := existingDir("working directory", req.Dir)
		if err != nil {
			return nil, err
		}
		r.dir = d
	}
	return r, nil
}

func checkNUL(what, p string) error {
	if strings.IndexByte(p, 0) >= 0 {
		return invalidf("%s contains a NUL byte", what)
	}
	return nil
}

func absPath(what, p string) error {
	if err := checkNUL(what, p); err != nil {
		return err
	}
	if p == "" {
		return invalidf("%s is empty", what)
	}
	if !filepath.IsAbs(p) {
		return invalidf("%s %q is not absolute", what, p)
	}
	if filepath.Clean(p) != p {
		return invalidf("%s %q is not clean", what, p)
	}
	return nil
}

// existingDir validates an absolute path naming an existing directory and
// returns it with symlinks resolved.
func existingDir(what, p string) (string, error) {
	if err := absPath(what, p); err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", &Error{Code: CodeInvalidPolicy, Reason: fmt.Sprintf("%s %q does not exist", what, p), Err: err}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", &Error{Code: CodeInvalidPolicy, Reason: fmt.Sprintf("%s %q", what, p), Err: err}
	}
	if !fi.IsDir() {
		return "", invalidf("%s %q is not a directory", what, p)
	}
	return real, nil
}

// unixSocket validates an allowed UNIX socket path: absolute and clean; if
// something is there, it must be a socket. Symlinks on the way are
// resolved (a rule attaches to what a path resolves to, and the launchers
// follow none), except inside a writable root: an earlier command could
// have planted one there to point the next wrap's allow-list at Docker's
// socket, so one there is INVALID_POLICY. A path with nothing there yet is
// returned with its existing directories resolved.
func unixSocket(p string, writable []string) (string, error) {
	if err := absPath("UNIX socket", p); err != nil {
		return "", err
	}
	real, err := resolveOutside(p, writable)
	if err != nil {
		return "", &Error{Code: CodeInvalidPolicy, Reason: fmt.Sprintf("UNIX socket %q", p), Err: err}
	}
	fi, err := os.Lstat(real)
	if errors.Is(err, fs.ErrNotExist) {
		return real, nil
	}
	if err != nil {
		return "", &Error{Code: CodeInvalidPolicy, Reason: fmt.Sprintf("UNIX socket %q", p), Err: err}
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return "", invalidf("UNIX socket %q is not a socket", p)
	}
	return real, nil
}

// resolveOutside resolves the symlinks on p one component at a time,
// refusing any that lies inside one of roots (the command may have made
// it), in the links' own targets too: a link outside the roots that points
// through one inside them is refused as well. Where a component is
// missing, the rest is kept as it is (the launchers follow no symlink, so
// a dangling one leaves the path unreachable).
func resolveOutside(p string, roots []string) (string, error) {
	if filepath.Separator != '/' {
		// Windows: the walk below speaks '/'-separated paths only, so a
		// planted junction or symlink is still followed there (SECURITY.md,
		// Known limitations); resolve as the user meant.
		real, err := filepath.EvalSymlinks(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		return real, err
	}
	hops := 0
	return resolveFrom("/", p, func(link string) error {
		for _, r := range roots {
			if nativepath.Within(link, r) {
				return fmt.Errorf("%s is a symlink inside the writable root %s, which a command could have planted: give the real path", link, r)
			}
		}
		return nil
	}, &hops)
}

// maxLinkHops bounds how many symlinks resolveOutside follows (the
// kernel's own limit is 40).
const maxLinkHops = 40

// resolveFrom resolves p from the directory cur, one component at a time;
// every symlink met is first shown to planted, whose error stops the walk.
func resolveFrom(cur, p string, planted func(link string) error, hops *int) (string, error) {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if filepath.IsAbs(p) {
		cur = "/"
	}
	for i, name := range parts {
		if name == "" || name == "." {
			continue
		}
		next := filepath.Join(cur, name)
		if name == ".." {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if err := planted(next); err != nil {
			return "", err
		}
		if *hops++; *hops > maxLinkHops {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		rest := filepath.Join(append([]string{target}, parts[i+1:]...)...)
		if filepath.IsAbs(target) {
			rest = "/" + strings.TrimPrefix(rest, "/")
		}
		return resolveFrom(cur, rest, planted, hops)
	}
	return cur, nil
}

// saneWritable refuses writable roots that would void the sandbox: the root
// directory, the home directory or one of its ancestors (dotfiles, SSH keys
// and shell start-up files live there), and the kernel's pseudo filesystems.
func saneWritable(what, d string) error {
	if d == "/" {
		return invalidf("%s %q is the root directory", what, d)
	}
	for _, k := range []string{"/proc", "/sys", "/dev"} {
		if nativepath.Within(d, k) {
			return invalidf("%s %q is inside %s", what, d, k)
		}
	}
	if home, ok := realHome(); ok {
		if nativepath.Within(home, d) {
			return invalidf("%s %q is the home directory %q or contains it", what, d, home)
		}
	}
	return nil
}

// realHome is the caller's home directory, symlinks resolved where it
// exists; ok is false when there is no absolute one.
func realHome() (string, bool) {
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	return home, true
}

// pathList is an ordered list of distinct paths; adding is constant time,
// so a policy of many thousands of paths validates in linear time.
// Links inside a denied directory: ~/.kube/config -> ~/clusters/prod.yaml
// (one file per cluster) or a dotfiles manager's links are read through
// under landlock (its rules sit on the object the link reaches, outside
// the denied directory), and their targets are readable by their own
// names under both runners. So the targets of the links found
// in each denied directory are denied too. The walk is bounded: at most
// maxLinkWalkDepth levels and maxLinkWalkEntries entries below each denied
// directory (docs/policy.md). Each directory has a budget of its own: a
// large one (a cloud tool's logs) must not use up another's.
const (
	maxLinkWalkDepth   = 3
	maxLinkWalkEntries = 1024
)

// deniedLinkTargets adds to deny the real path of every symlink found in
// the denied directories (denyDirs) that points outside them, into the home
// directory (where a user keeps what the link stands for; a link into
// /usr or /etc reaches what every user may read, and denying that would
// break the tools), but not at the home directory itself, nor at a
// writable root or anything holding one (the caller works there).
func deniedLinkTargets(deny *pathList, denyDirs, writable []string) {
	home, ok := realHome()
	if !ok {
		return
	}
	var budget int
	roots := slices.Clone(deny.list)
	target := func(real string) bool {
		if real == home || !nativepath.Within(real, home) || underAny(real, roots) {
			return false
		}
		for _, w := range writable {
			if nativepath.Within(w, real) {
				return false
			}
		}
		return true
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		ents, err := osFS{}.ReadDirN(dir, budget)
		if err != nil {
			return
		}
		budget -= len(ents)
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				if real, err := filepath.EvalSymlinks(p); err == nil && target(real) {
					deny.add(real)
				}
			case e.IsDir() && depth < maxLinkWalkDepth && budget > 0:
				walk(p, depth+1)
			}
		}
	}
	for _, d := range denyDirs {
		budget = maxLinkWalkEntries
		walk(d, 1)
	}
}

type pathList struct {
	list []string
	seen map[string]bool
}

func (l *pathList) add(p string) {
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	if !l.seen[p] {
		l.seen[p] = true
		l.list = append(l.list, p)
	}
}

func (l *pathList) has(p string) bool { return l.seen[p] }
