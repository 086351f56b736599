// Command sandbox-run runs one command under a sandbox policy.
//
//	sandbox-run [--mode read-only|workspace-write] [--workspace DIR] [--allow-write DIR]...
//	            [--read-only PATH]... [--writable-config NAME]... [--deny-read PATH]... [--allow-read PATH]...
//	            [--network deny|allow|proxied] [--allow-domain NAME]... [--deny-domain NAME]...
//	            [--allow-private-destinations] [--allow-local-port PORT]...
//	            [--allow-unix-socket PATH]... [--runner auto|RUNNER] [--require-full]
//	            [--max-processes N] [--max-memory SIZE] [--max-temp-size SIZE]
//	            [--json-report FILE] [--report-launch] [--quiet] [--kill-after DURATION]
//	            [--policy FILE] [--print-policy]
//	            [--clearenv | --minimal-env] [--keep-env NAME]... [--unsetenv NAME]... [--setenv NAME=VALUE]...
//	            [--allow-registry go|npm|pip|cargo]... [--no-caches | --cache-dir DIR] [--no-cache TOOL]... [--no-cache-warm]
//	            -- CMD [ARG...]
//	sandbox-run explain [flags] PATH...
//	sandbox-run doctor [--json]
//	sandbox-run cache list [--json] | cache prune [--unused DURATION] [--all]
//	sandbox-run --version
//
// explain says, for each PATH, what the policy the flags make allows there
// (read, write), which rule decided it, and the flag that would allow what
// is refused; it runs nothing.
//
// --runner names one of the platform's runners (--help lists them, the
// preferred first); auto takes the first that works here, selected and
// cached by package sandbox as for any consumer (Config.VerdictCache).
//
// --help lists every flag with its default. Before the command runs,
// sandbox-run prints a notice on stderr when the confinement is partial
// (one line counting the gaps by area; --json-report and doctor name them)
// or when --runner auto got another runner than the platform's preferred
// one. A mistake on the command line is one line; --help prints the whole
// help on stdout. After a command that failed having printed a
// denial signature ("Permission denied", "Read-only file system"), it
// prints a note naming the sandbox, the runner and what the policy allows,
// unless stderr is a terminal (the command's output is then not passed
// through sandbox-run, so the terminal stays the command's own); --quiet
// prints none of these. With stdout and stderr one file (2>&1), both go
// through one pipe, so their order is kept.
//
// The command runs in the current directory, or in the workspace when
// --workspace names one the current directory is not inside.
//
// --allow-domain NAME (a name, *.suffix, or an IP literal, each with an
// optional :port) selects the proxied network: sandbox-run runs a proxy
// for the run (HTTP, CONNECT and SOCKS5 on one loopback port), points the
// command's clients at it (http_proxy, HTTPS_PROXY, ALL_PROXY, npm, pip,
// cargo, the JVM), and the sandbox lets the command reach nothing else.
// The proxy refuses what is not allowed with a 403 naming the policy, and
// after the run a note on stderr (and the report's outcome.blocked) names
// each refused destination. --allow-local-port PORT lets the command reach
// a server on the host's loopback at 127.0.0.1:PORT.
//
// The toolchains' caches (Go, pip, uv, npm, pnpm, yarn, cargo, ccache,
// XDG_CACHE_HOME) are the workspace's own, below
// <user cache dir>/sandbox-local/caches, warmed from the user's Go caches
// read-only (docs/policy.md, "Caches"); --no-caches, --cache-dir,
// --no-cache and --no-cache-warm change that, and `sandbox-run cache`
// lists and prunes them. --allow-registry NAME allows the names a
// toolchain's registry needs, as --allow-domain.
//
// The command gets this process's environment without the variables that
// look like credentials (GITHUB_TOKEN, AWS_*, *_API_KEY, ...; the rule is
// in docs/policy.md); the report's withheld_env names them. --keep-env
// passes one on (a name or a pattern such as 'AWS_*'), --unsetenv removes
// one, --setenv NAME=VALUE sets one; --clearenv starts from no variable,
// --minimal-env from PATH, HOME, USER, SHELL, TERM, LANG, LC_*, TZ and the
// like.
//
// The exit status is the command's. When the sandbox cannot confine the
// command, or the policy is invalid, sandbox-run prints one line
// "sandbox-run: CODE: reason" and exits 125 without running it.
//
// The launcher runs as a child of sandbox-run, which waits for it, removes
// the wrap's temp dir, writes the report when --json-report asks for one
// (the wrap and the classified outcome, after the command exited, so the
// command never sees the report's fatal-line token), and exits with the
// command's status. A command killed by signal N makes sandbox-run die of
// N too (without a core dump), so a shell sees what it would see with the
// command run bare. Killed itself, even by SIGKILL, sandbox-run takes the
// launcher, and so the command, with it.
//
// Signals sent to sandbox-run are passed on to the command: SIGTERM,
// SIGUSR1 and SIGUSR2 always; SIGINT, SIGQUIT and SIGHUP unless one of
// sandbox-run's stdin, stdout and stderr is a terminal whose foreground
// process group is sandbox-run's own (then the terminal sent the signal,
// and the command, in that same group, got it already: passing it on
// would deliver it twice), or, for SIGHUP, a terminal that hung up. A
// command still running --kill-after (10 s) after the first SIGTERM was
// passed on is killed, with everything it started, and sandbox-run dies of
// SIGTERM (exit status 143), as the command would have (docker stop waits
// as long, then kills). A signal that comes before the command started
// ends sandbox-run by that signal, and the command never runs.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bo-agent/sandbox-local/internal/nativepath"
	"github.com/bo-agent/sandbox-local/internal/procsig"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/launcher"
	"github.com/bo-agent/sandbox-local/sandbox"
)

// staleSweepMax bounds the stale temp dirs one run removes: a run removes
// its own dir, so only runs that were killed (SIGKILL, a crash) leave one,
// and a few per run keep the count down without a long pause after many.
const staleSweepMax = 16

func main() {
	if launcher.Init() {
		return
	}
	code, sig := run(os.Args[1:], os.Stdout, os.Stderr)
	if sig != 0 {
		procsig.DieOf(sig)
	}
	os.Exit(code)
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// portsFlag is a repeatable TCP port flag.
type portsFlag []int

func (p *portsFlag) String() string { return fmt.Sprint([]int(*p)) }
func (p *portsFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q is not a TCP port (1 to 65535)", v)
	}
	*p = append(*p, n)
	return nil
}

// sizeFlag is a byte count: a number with an optional K, M, G or T
// suffix (powers of 1024); 0 means none.
type sizeFlag int64

func (b *sizeFlag) String() string { return strconv.FormatInt(int64(*b), 10) }
func (b *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*b = sizeFlag(n)
	return nil
}

// parseSize parses a byte count: digits with an optional K, M, G or T
// (KiB, MiB, GiB, TiB).
func parseSize(v string) (int64, error) {
	num, shift := v, 0
	if v != "" {
		switch v[len(v)-1] {
		case 'K', 'k':
			shift = 10
		case 'M', 'm':
			shift = 20
		case 'G', 'g':
			shift = 30
		case 'T', 't':
			shift = 40
		}
		if shift > 0 {
			num = v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with K, M, G or T)", v)
	}
	return n << shift, nil
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `usage: sandbox-run [flags] -- CMD [ARG...]
       sandbox-run explain [flags] PATH...
       sandbox-run doctor [--json]
       sandbox-run --version

Runs CMD confined: it may write only the workspace (and --allow-write
directories, minus git's hooks and config, the editor, agent and tool
configs that run code later (.vscode, .claude, .envrc, .npmrc, ...:
docs/policy.md; --writable-config releases one) and --read-only paths), reads
everything but the credential stores under the home directory (~/.ssh,
~/.aws, ~/.npmrc, ...: docs/policy.md; --allow-read releases them) and
--deny-read paths, and reaches no network unless --network allow, or only the names
--allow-domain lists, through a proxy sandbox-run runs (refused ones are
named after the run). The command runs in the current directory, or in the
workspace when --workspace names one the current directory is not inside.
The exit status is the command's; a failure of the sandbox itself is one
line "sandbox-run: CODE: reason" and exit 125, and the command never ran
(a command that exits 125 itself is followed by a note saying so, as the
last line on stderr when that is not a terminal).
A notice on stderr says when the confinement is partial or the preferred
runner was unavailable; when the command fails after printing a denial
("Permission denied", "Read-only file system"), a note says that the
sandbox may have refused it and what it allows (not when stderr is a
terminal, which the command keeps for itself); --quiet: neither. Writes
outside the writable roots fail under every runner, /tmp included: the
scratch place is $TMPDIR, made for each run.

Environment: the command gets sandbox-run's own without the variables that
look like credentials (GITHUB_TOKEN, AWS_*, *_API_KEY, *SECRET*,
*PASSWORD*, ...; the rule is in docs/policy.md); --json-report's
withheld_env names them. With --clearenv name the command by its path.

Flags:
`)
	printFlags(w, fs)
}

// synopsis is what sandbox-run prints when it is given no arguments.
const synopsis = `usage: sandbox-run [flags] -- CMD [ARG...]
       sandbox-run explain [flags] PATH...
       sandbox-run doctor [--json]
       sandbox-run --version
sandbox-run --help lists the flags.
`

// printFlags lists fs's flags as the usage line writes them (--name), each
// with its value's kind and its default, as flag.PrintDefaults would.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		kind, text := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		line += "\n    \t" + strings.ReplaceAll(text, "\n", "\n    \t")
		if def := f.DefValue; def != "" && def != "false" && def != "[]" {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isString := g.Get().(string); isString {
					def = strconv.Quote(def)
				}
			}
			line += " (default " + def + ")"
		}
		fmt.Fprintln(w, line)
	})
}

// run runs sandbox-run with args and returns its exit status, or the
// signal the command died of (then the status is 128+N).
func run(args []string, stdout, stderr io.Writer) (int, syscall.Signal) {
	if len(args) > 0 && args[0] == "doctor" {
		return doctor(args[1:], stdout, stderr), 0
	}
	if len(args) > 0 && args[0] == "cache" {
		return cacheCmd(args[1:], stdout, stderr), 0
	}
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		fmt.Fprintln(stdout, versionLine())
		return 0, 0
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, synopsis)
		return vocab.FatalExit, 0
	}
	explaining := args[0] == "explain"
	if explaining {
		args = args[1:]
	}
	c := newFlags()
	fs, p := c.fs, &c.policy
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs)
			return 0, 0
		}
		fmt.Fprintf(stderr, "sandbox-run: %s: %s (sandbox-run --help lists the flags)\n", sandbox.CodeInvalidPolicy, flagError(err))
		return vocab.FatalExit, 0
	}
	if c.killAfter < 0 {
		fmt.Fprintf(stderr, "sandbox-run: %s: --kill-after %v is negative\n", sandbox.CodeInvalidPolicy, c.killAfter)
		return vocab.FatalExit, 0
	}
	for _, name := range c.registries {
		d, ok := sandbox.RegistryDomains(name)
		if !ok {
			fmt.Fprintf(stderr, "sandbox-run: %s: --allow-registry %q: want one of %s\n", sandbox.CodeInvalidPolicy, name, strings.Join(sandbox.Registries(), ", "))
			return vocab.FatalExit, 0
		}
		p.AllowDomains = append(p.AllowDomains, d...)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["network"] && len(p.AllowDomains) > 0 {
		p.Network = sandbox.NetworkProxied
	}
	argv := fs.Args()
	var paths []string
	if explaining {
		paths, argv = argv, []string{"true"}
		if len(paths) == 0 {
			fmt.Fprintln(stderr, "sandbox-run: INVALID_POLICY: explain: no path given (sandbox-run explain [flags] PATH...)")
			return vocab.FatalExit, 0
		}
	}
	if len(argv) == 0 && !c.printPolicy {
		fmt.Fprintln(stderr, "sandbox-run: INVALID_POLICY: no command given (put it after --)")
		return vocab.FatalExit, 0
	}
	workspaceGiven := p.Workspace != ""
	if !workspaceGiven {
		wd, err := os.Getwd()
		if err != nil {
			fmt.Fprintf(stderr, "sandbox-run: INVALID_POLICY: current directory: %v\n", err)
			return vocab.FatalExit, 0
		}
		p.Workspace = wd
	}
	p.Workspace, p.Caches.Dir = absolute(p.Workspace), absolute(p.Caches.Dir)
	for _, list := range [][]string{p.WritableRoots, p.DenyRead, p.AllowRead, p.AllowUnixSockets} {
		for i := range list {
			list[i] = absolute(list[i])
		}
	}
	var err error
	if p.Env, err = envFlags(c.clearEnv, c.minimalEnv, c.keepEnv, c.unsetEnv, c.setEnv); err != nil {
		fmt.Fprintf(stderr, "sandbox-run: %s: %v\n", sandbox.CodeInvalidPolicy, err)
		return vocab.FatalExit, 0
	}
	// auto: the library's verdict cache spares each run the preferred
	// runner's probe (a whole sandbox launch).
	cfg := sandbox.Config{VerdictCache: true}
	if c.runner != "auto" {
		cfg = sandbox.Config{Runners: []string{c.runner}}
	}
	req := sandbox.Request{Argv: argv, Dir: commandDir(workspaceGiven, p.Workspace), Policy: *p}
	if c.policyFile != "" {
		fields, err := applyPolicyFile(&req.Policy, absolute(c.policyFile), c.overridden(given))
		if err != nil {
			fmt.Fprintf(stderr, "sandbox-run: %s: %s\n", sandbox.CodeInvalidPolicy, vocab.OneLine(err.Error()))
			return vocab.FatalExit, 0
		}
		if slices.Contains(fields, "workspace") && !given["workspace"] {
			req.Dir = commandDir(true, req.Policy.Workspace)
		}
		if root := holder(absolute(c.policyFile), commandRoots(req.Policy)); root != "" {
			fmt.Fprintf(stderr, "sandbox-run: %s: --policy %s lies in %s, which the command may write: a command could have written the policy it runs under; keep it outside the writable roots\n",
				sandbox.CodeInvalidPolicy, vocab.OneLine(c.policyFile), vocab.OneLine(root))
			return vocab.FatalExit, 0
		}
	}
	if c.printPolicy {
		check := req
		check.Argv = []string{"true"} // the policy is what is checked, not a command
		if err := check.Validate(); err != nil {
			printError(stderr, err)
			return vocab.FatalExit, 0
		}
		b, _ := json.MarshalIndent(req.Policy, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return 0, 0
	}
	var sigs *caught
	if !explaining {
		sigs = catchSignals()
	}
	// The temp dirs of runs that were killed before their Cleanup: a
	// provider's background sweep would often not be done when this
	// short run ends.
	sandbox.SweepStale(staleSweepMax)
	w, err := sandbox.New(cfg).Wrap(context.Background(), req)
	if err != nil {
		printError(stderr, err)
		return vocab.FatalExit, 0
	}
	defer w.Cleanup()
	if explaining {
		for _, p := range paths {
			fmt.Fprint(stdout, explanation(w.Explain(p)))
		}
		return 0, 0
	}
	if !c.quiet {
		for _, n := range notices(w, c.runner) {
			fmt.Fprintln(stderr, n)
		}
	}
	var rep *reportFile
	if c.report != "" {
		p := absolute(c.report)
		f, err := openReport(p, commandRoots(req.Policy, w.TempDir, w.CacheDir))
		if err != nil {
			fmt.Fprintf(stderr, "sandbox-run: %s: %s\n", sandbox.CodeInvalidPolicy, vocab.OneLine(err.Error()))
			return vocab.FatalExit, 0
		}
		defer f.Close()
		rep = &reportFile{f: f, path: p, policy: req.Policy, launch: c.reportLaunch}
	}
	return runChild(w, req.Policy, rep, sigs, c.killAfter, c.quiet, stderr)
}

// cliFlags are sandbox-run's flags. Those of the policy are bound to its
// fields (policy) and registered with the fields they set (fields), which
// both the parsing and the policy file's merge read: a new field of the
// policy is its flag's registration here, nothing in policyfile.go.
type cliFlags struct {
	fs     *flag.FlagSet
	policy sandbox.Policy
	// fields names, for each flag of the policy, the fields of a policy
	// file (JSON names) it sets: a field of the file stands unless one of
	// its flags is given, which then replaces it whole.
	fields map[string][]string

	// What the flags give to be made into the policy after parsing
	// (--allow-registry's names, the environment's flags).
	registries                       listFlag
	keepEnv, unsetEnv, setEnv        listFlag
	clearEnv, minimalEnv             bool
	runner, report, policyFile       string
	reportLaunch, printPolicy, quiet bool
	killAfter                        time.Duration
}

// newFlags registers sandbox-run's flags on a new flag set.
func newFlags() *cliFlags {
	c := &cliFlags{fs: flag.NewFlagSet("sandbox-run", flag.ContinueOnError), fields: map[string][]string{}}
	fs, p := c.fs, &c.policy
	// The flag package's own messages and usage are replaced in run: one
	// line for a mistake, the whole help only when asked for.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	policyVar(c, fs.StringVar, "mode", "`MODE`: read-only or workspace-write", (*string)(&p.Mode), string(sandbox.WorkspaceWrite))
	policyVar(c, fs.StringVar, "workspace", "workspace directory `DIR` (default: the current directory; the command starts in it unless the current directory is inside it)", &p.Workspace, "")
	c.policyList("allow-write", "extra writable directory `DIR` (repeatable)", &p.WritableRoots)
	c.policyList("read-only", "`PATH` kept read-only inside the writable directories, on top of git's hooks and config: absolute, or relative to each writable directory (repeatable)", &p.ReadOnlySubpaths)
	c.policyList("deny-read", "`PATH` the command may not read, on top of the credential stores under the home directory it never reads by default (repeatable)", &p.DenyRead)
	c.policyList("writable-config", "keep this default tool config writable, by its `NAME` (.vscode, .cargo/config.toml; the list is in docs/policy.md) (repeatable)", &p.WritableConfigs)
	c.policyList("allow-read", "release the default deny-read paths at or beneath `PATH` (~/.ssh; the home directory releases them all) (repeatable)", &p.AllowRead)
	c.policyList("allow-unix-socket", "UNIX socket `PATH` the command may connect to under network deny (repeatable)", &p.AllowUnixSockets)
	policyVar(c, fs.StringVar, "network", "`MODE`: deny, allow, or proxied (only --allow-domain names, through a proxy sandbox-run runs)", (*string)(&p.Network), string(sandbox.NetworkDeny))
	// --allow-domain and --allow-registry alone select proxied: they set
	// the network too.
	c.policyList("allow-domain", "under --network proxied, a `NAME` the command may reach (registry.npmjs.org, *.github.com, name:port); selects proxied when --network is not given (repeatable)", &p.AllowDomains, &p.Network)
	c.policyList("deny-domain", "a `NAME` refused even where --allow-domain allows it (repeatable)", &p.DenyDomains)
	c.policyValue(&c.registries, "allow-registry", "the names a toolchain's registry (`NAME`) needs, as --allow-domain: one of "+strings.Join(sandbox.Registries(), ", ")+" (repeatable)", &p.AllowDomains, &p.Network)
	policyVar(c, fs.BoolVar, "no-caches", "leave the tools' cache variables as they are (their caches are the user's own, read-only): no caches of the sandbox's own", &p.Caches.Off, false)
	policyVar(c, fs.StringVar, "cache-dir", "keep the tools' caches in `DIR` (created, made writable) instead of the workspace's own under the user cache dir", &p.Caches.Dir, "")
	c.policyList("no-cache", "leave this `TOOL`'s cache variables as they are: one of "+strings.Join(cacheToolNames(), ", ")+" (repeatable)", &p.Caches.Skip)
	policyVar(c, fs.BoolVar, "no-cache-warm", "read none of the user's caches (Go's module downloads and build cache) to warm the sandbox's", &p.Caches.NoWarm, false)
	policyVar(c, fs.BoolVar, "allow-private-destinations", "let allowed names resolve to loopback, private or link-local addresses (off: DNS rebinding is refused)", &p.AllowPrivateDestinations, false)
	c.policyValue((*portsFlag)(&p.AllowLocalPorts), "allow-local-port", "a TCP `PORT` on the host's loopback the command may connect to at 127.0.0.1, under deny or proxied (repeatable)", &p.AllowLocalPorts)
	policyVar(c, fs.BoolVar, "require-full", "refuse partial enforcement", &p.RequireFull, false)
	policyVar(c, fs.IntVar, "max-processes", fmt.Sprintf("the most processes and threads (`N`) the command runs at once (0: the default, %d)", sandbox.DefaultMaxProcesses), &p.Limits.MaxProcesses, 0)
	c.policyValue((*sizeFlag)(&p.Limits.MaxMemory), "max-memory", "the command's memory limit, a `SIZE` in bytes or with K, M, G (0: none)", &p.Limits.MaxMemory)
	c.policyValue((*sizeFlag)(&p.Limits.MaxTempSize), "max-temp-size", "the size limit of the command's $TMPDIR, a `SIZE` in bytes or with K, M, G (0: none)", &p.Limits.MaxTempSize)
	c.policyValue(&c.keepEnv, "keep-env", "variable `NAME` (or pattern) passed on although it looks like a credential (repeatable)", &p.Env)
	c.policyValue(&c.unsetEnv, "unsetenv", "variable `NAME` (or pattern) removed (repeatable)", &p.Env)
	c.policyValue(&c.setEnv, "setenv", "`NAME=VALUE` the command gets (repeatable)", &p.Env)
	policyVar(c, fs.BoolVar, "clearenv", "start from an empty environment", &c.clearEnv, false, &p.Env)
	policyVar(c, fs.BoolVar, "minimal-env", "start from PATH, HOME, USER, SHELL, TERM, LANG, LC_*, TZ and the like", &c.minimalEnv, false, &p.Env)
	fs.StringVar(&c.runner, "runner", "auto", "`RUNNER`: auto (the first that works here) or one of: "+strings.Join(sandbox.Runners(), ", "))
	fs.StringVar(&c.report, "json-report", "", "write a JSON report to `FILE` after the command exits: runner, enforcement, gaps, limits, outcome and refusals, withheld variables, the policy")
	fs.BoolVar(&c.reportLaunch, "report-launch", false, "put the launch in the --json-report as well (the launcher's path, arguments and environment rule)")
	fs.DurationVar(&c.killAfter, "kill-after", defaultKillAfter, "how long after passing SIGTERM on the command may still run (a `DURATION`) before it and everything it started are killed (0: at once)")
	fs.StringVar(&c.policyFile, "policy", "", "read the policy from `FILE` (JSON, the field names --print-policy writes); a flag given as well replaces its field")
	fs.BoolVar(&c.printPolicy, "print-policy", false, "print the effective policy as JSON and run nothing")
	fs.BoolVar(&c.quiet, "quiet", false, "print no notice of partial enforcement or of a fallback runner, and no note after a likely denial")
	return c
}

// policyVar registers a flag of the policy with one of the flag set's
// typed methods (fs.String, fs.Bool, ...), bound to *at: a field of the
// policy, or a value made into one after parsing; sets are the fields it
// sets besides at.
func policyVar[T any](c *cliFlags, define func(*T, string, T, string), name, usage string, at *T, def T, sets ...any) {
	define(at, name, def, usage)
	c.record(name, append([]any{at}, sets...))
}

// policyValue registers a flag of the policy that v parses; sets are the
// fields of the policy it sets (pointers into c.policy).
func (c *cliFlags) policyValue(v flag.Value, name, usage string, sets ...any) {
	c.fs.Var(v, name, usage)
	c.record(name, sets)
}

// policyList registers a repeatable flag of the policy that appends to
// the list *at; sets are the further fields it sets.
func (c *cliFlags) policyList(name, usage string, at *[]string, sets ...any) {
	c.policyValue((*listFlag)(at), name, usage, append([]any{at}, sets...)...)
}

// record notes the fields of the policy that ptrs point into as set by
// the flag name; a pointer outside the policy (a value made into a field
// after parsing) names none.
func (c *cliFlags) record(name string, ptrs []any) {
	pv := reflect.ValueOf(&c.policy).Elem()
	base := pv.Addr().Pointer()
	for _, ptr := range ptrs {
		at := reflect.ValueOf(ptr).Pointer()
		for i := 0; i < pv.NumField(); i++ {
			f := pv.Type().Field(i)
			if start := base + f.Offset; at >= start && at < start+f.Type.Size() {
				if field := jsonName(f); !slices.Contains(c.fields[name], field) {
					c.fields[name] = append(c.fields[name], field)
				}
			}
		}
	}
}

// overridden are the fields of the policy that the given flags set.
func (c *cliFlags) overridden(given map[string]bool) map[string]bool {
	out := map[string]bool{}
	for name := range given {
		for _, field := range c.fields[name] {
			out[field] = true
		}
	}
	return out
}

// caught are the signals sandbox-run passes on (procsig.Forwarded), caught
// from ready on.
type caught struct {
	c     chan os.Signal
	ready chan struct{}
}

// catchSignals starts catching the signals sandbox-run passes on, in the
// background: the first signal.Notify of a process starts the runtime's
// signal loop, which costs about a millisecond, and it is done meanwhile
// Wrap runs. They stay caught until sandbox-run exits (no signal.Stop:
// the process ends right after).
func catchSignals() *caught {
	s := &caught{c: make(chan os.Signal, 8), ready: make(chan struct{})}
	go func() {
		signal.Notify(s.c, procsig.Forwarded...)
		close(s.ready)
	}()
	return s
}

// beforeStart waits until the signals are caught, and returns one caught
// before the command started: sandbox-run dies of that one without
// starting the command, as it would have had it not caught it yet. A
// terminal's Ctrl-C during Wrap is so not lost: passed on after the start
// it would be taken for one the command, in the terminal's foreground
// group, got already.
func (s *caught) beforeStart() (syscall.Signal, bool) {
	<-s.ready
	select {
	case sig := <-s.c:
		n, ok := sig.(syscall.Signal)
		return n, ok
	default:
		return 0, false
	}
}

// commandRoots are the directories a command under pol, or an earlier one
// under the same policy, could write, symlinks resolved: the workspace
// (also in read-only mode, which an earlier run may have had writable),
// the writable roots, and the wrap's own (more: its temp dir, its caches'
// dir), those that are not "". Nothing a command could have planted in
// them is trusted: no symlink on the way to the report, no policy file.
func commandRoots(pol sandbox.Policy, more ...string) []string {
	var roots []string
	for _, d := range append(append([]string{pol.Workspace}, pol.WritableRoots...), more...) {
		if d == "" {
			continue
		}
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		roots = append(roots, d)
	}
	return roots
}

// flagError words a parse error of the flag package as the usage line
// writes flags (--name).
func flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag --" + name
	}
	if rest, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "flag --" + rest + " needs a value"
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		return "invalid value " + strings.Replace(rest, " for flag -", " for flag --", 1)
	}
	if rest, ok := strings.CutPrefix(msg, "invalid boolean value "); ok {
		return "invalid boolean value " + strings.Replace(rest, " for -", " for --", 1)
	}
	return msg
}

// envFlags makes the environment policy of the command line; the library
// validates the names.
func envFlags(clear, minimal bool, keep, unset, set []string) (sandbox.EnvPolicy, error) {
	p := sandbox.EnvPolicy{Keep: keep, Unset: unset}
	switch {
	case clear && minimal:
		return p, errors.New("--clearenv and --minimal-env exclude each other")
	case clear:
		p.Start = sandbox.EnvEmpty
	case minimal:
		p.Start = sandbox.EnvMinimal
	}
	for _, kv := range set {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return p, fmt.Errorf("--setenv %q: want NAME=VALUE", kv)
		}
		if p.Set == nil {
			p.Set = map[string]string{}
		}
		p.Set[name] = value
	}
	return p, nil
}

// commandDir is the command's working directory: the current directory,
// unless --workspace named a workspace it is not inside; then "" (the
// workspace, Request's default).
func commandDir(workspaceGiven bool, ws string) string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if workspaceGiven && !inside(wd, ws) {
		return ""
	}
	return wd
}

// inside reports whether dir is root or below it, symlinks resolved.
func inside(dir, root string) bool {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return nativepath.Within(dir, root)
}

// absolute makes a command-line path absolute against the current
// directory; the library itself only takes absolute paths.
func absolute(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

func printError(stderr io.Writer, err error) {
	var se *sandbox.Error
	if errors.As(err, &se) {
		msg := se.Reason
		if se.Runner != "" {
			msg = se.Runner + ": " + msg
		}
		if se.Err != nil {
			msg += ": " + se.Err.Error()
		}
		fmt.Fprintf(stderr, "sandbox-run: %s: %s\n", se.Code, vocab.OneLine(msg))
		return
	}
	fmt.Fprintf(stderr, "sandbox-run: %s: %s\n", sandbox.CodeUnavailable, vocab.OneLine(err.Error()))
}

// stderrKeep is how much of the start of the command's output is kept for
// Classify (the launcher's own lines come first), and stderrTail how much
// of its end (where a tool's last error usually is).
const (
	stderrKeep = 64 << 10
	stderrTail = 16 << 10
)

// capture keeps the start and the end of what passes through it, and
// copies everything on to dst.
type capture struct {
	dst        io.Writer
	head, tail []byte // tail holds at least the last stderrTail bytes
}

func (c *capture) Write(p []byte) (int, error) {
	n, err := c.dst.Write(p)
	if err != nil {
		// The CLI's own output went away: keep classifying what the
		// command writes, and let it write on.
		n, err = len(p), nil
	}
	if room := stderrKeep - len(c.head); room > 0 {
		take := min(room, len(p))
		c.head = append(c.head, p[:take]...)
		p = p[take:]
	}
	if len(p) > 0 {
		c.tail = append(c.tail, p...)
		// Trimmed only once it holds twice what is kept: a command writing
		// a byte at a time costs a copy per stderrTail bytes, not per write.
		if len(c.tail) > 2*stderrTail {
			c.tail = append(c.tail[:0], c.tail[len(c.tail)-stderrTail:]...)
		}
	}
	return n, err
}

// kept is what Classify reads: the start, and the end on its own lines.
func (c *capture) kept() []byte {
	if len(c.tail) == 0 {
		return c.head
	}
	b := append(append([]byte{}, c.head...), '\n')
	return append(b, c.tail[max(0, len(c.tail)-stderrTail):]...)
}

// reportFile is the --json-report file, opened before the command ran.
// runReport is what --json-report writes: first what a reader wants to
// know (the runner, how complete the confinement was and why not, the
// resource limits in force, what
// happened and what was refused, what was withheld, the toolchains'
// caches, the policy), then the
// launch itself (the launcher's path and arguments, the environment rule)
// only with --report-launch, since its arguments run to kilobytes.
type runReport struct {
	Runner      string              `json:"runner"`
	Enforcement sandbox.Enforcement `json:"enforcement"`
	Gaps        []sandbox.Gap       `json:"gaps,omitempty"`
	Limits      []sandbox.Limit     `json:"limits,omitempty"`
	Outcome     sandbox.Outcome     `json:"outcome"`
	WithheldEnv []string            `json:"withheld_env,omitempty"`
	CacheDir    string              `json:"cache_dir,omitempty"`
	Caches      []sandbox.CacheUse  `json:"caches,omitempty"`
	CacheNote   string              `json:"cache_note,omitempty"`
	Policy      sandbox.Policy      `json:"policy"`
	Wrap        *sandbox.Wrapped    `json:"wrap,omitempty"`
}

type reportFile struct {
	f      *os.File
	path   string
	policy sandbox.Policy // the effective policy, as --print-policy writes it
	launch bool           // --report-launch: the wrap as well
}

// launched is the launcher spawn started.
type launched interface {
	Signal(os.Signal) error
	Kill() error
	// Wait waits for the launcher to exit, and for what it wrote through
	// a pipe (cmd.WaitDelay bounds that), and returns its exit status, or
	// the signal it died of (then the status is 128+N).
	Wait() (int, syscall.Signal)
}

// defaultKillAfter is --kill-after's default: docker stop's grace.
const defaultKillAfter = 10 * time.Second

// runChild runs the wrap's launcher as a child with this process's stdio,
// passes on the signals a process sent the CLI (procsig.PassOn), kills the
// launcher, and so the whole sandbox, killAfter after the first SIGTERM
// passed on if it still runs, waits, writes the report if one was asked
// for, says on stderr when a failure looks like the sandbox's refusal
// (unless quiet), and returns the command's exit status, or the signal it
// died of (SIGTERM when it was killed after one).
func runChild(w *sandbox.Wrapped, pol sandbox.Policy, rep *reportFile, sigs *caught, killAfter time.Duration, quiet bool, stderr io.Writer) (int, syscall.Signal) {
	cmd := w.Command(context.Background())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	var out *capture
	if rep != nil || !isTerminal(os.Stderr) {
		// The report, the note on a likely denial, and the note that
		// tells the command's own exit 125 from a launcher failure (also
		// with --quiet) need what the command wrote. A terminal is left
		// to the command itself (a pipe in between would change what it
		// sees), so a person at a terminal gets no note: they see the
		// error, and --json-report classifies it. Stdout and stderr that are one file (2>&1) get
		// one pipe, so their order is kept.
		out = &capture{dst: os.Stderr}
		cmd.Stderr = out
		if sameOpenFile(os.Stdout, os.Stderr) {
			cmd.Stdout = out
		}
		// A process the command left holding stderr cannot keep the CLI
		// waiting for end of file once the command has exited.
		cmd.WaitDelay = stderrDrain
	}
	if sig, ok := sigs.beforeStart(); ok {
		return 128 + int(sig), sig
	}
	child, err := spawn(cmd)
	if err != nil {
		fmt.Fprintf(stderr, "sandbox-run: SANDBOX_UNAVAILABLE: start launcher: %v\n", err)
		return vocab.FatalExit, 0
	}
	done := make(chan struct{})
	defer close(done)
	var killed atomic.Bool
	go func() {
		var kill <-chan time.Time
		for {
			select {
			case s := <-sigs.c:
				if procsig.PassOn(s) {
					child.Signal(s)
					if s == syscall.SIGTERM && kill == nil {
						kill = time.After(killAfter)
					}
				}
			case <-kill:
				killed.Store(true)
				child.Kill()
			case <-done:
				return
			}
		}
	}()
	code, sig := child.Wait()
	if sig == syscall.SIGKILL && killed.Load() {
		code, sig = 128+int(syscall.SIGTERM), syscall.SIGTERM
		if !quiet {
			fmt.Fprintf(stderr, "sandbox-run: the command still ran %v after SIGTERM: killed it and everything it started\n", killAfter)
		}
	}
	if b := w.Blocked(); len(b) > 0 && !quiet {
		fmt.Fprintln(stderr, blockedNote(b))
	}
	if out != nil {
		outcome := w.Classify(code, out.kept())
		if rep != nil {
			writeReport(w, rep, outcome, stderr)
		}
		if notes := refusalNotes(outcome.Refusals, outcome.RefusalsUnlisted); len(notes) > 0 && !quiet {
			for _, n := range notes {
				fmt.Fprintln(stderr, n)
			}
		} else if outcome.Kind == sandbox.OutcomeDenied && !quiet {
			fmt.Fprintln(stderr, denialNote(w, pol, outcome))
		}
		if outcome.Kind == sandbox.OutcomeRunnerFailure && !quiet {
			fmt.Fprintln(stderr, runnerFailureNote(w.Runner))
		}
		if code == vocab.FatalExit && outcome.Kind != sandbox.OutcomeRunnerFailure {
			// Even with --quiet: the command may have printed a line in
			// sandbox-run's own failure form to pass for "the sandbox is
			// unavailable" and get itself run unconfined.
			fmt.Fprintln(stderr, ownExitNote)
		}
	}
	return code, sig
}

// isTerminal reports whether f is a character device (a terminal, or
// /dev/null, which nobody reads either).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// sameOpenFile reports whether a and b are the same file (2>&1).
func sameOpenFile(a, b *os.File) bool {
	fa, err := a.Stat()
	if err != nil {
		return false
	}
	fb, err := b.Stat()
	return err == nil && os.SameFile(fa, fb)
}

// stderrDrain is how long the CLI keeps copying the command's stderr (for
// the report) after the command exited.
const stderrDrain = 2 * time.Second

// writeReport writes the wrap and its outcome to the report file.
func writeReport(w *sandbox.Wrapped, rep *reportFile, outcome sandbox.Outcome, stderr io.Writer) {
	out := runReport{Runner: w.Runner, Enforcement: w.Enforcement, Gaps: w.Gaps, Limits: w.Limits, Outcome: outcome,
		WithheldEnv: w.WithheldEnv, CacheDir: w.CacheDir, Caches: w.Caches, CacheNote: w.CacheNote, Policy: rep.policy}
	if rep.launch {
		out.Wrap = w
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	// Through the descriptor opened before the command ran, never by name:
	// the command may have replaced the name with a link meanwhile.
	werr := rep.f.Truncate(0)
	if werr == nil {
		_, werr = rep.f.WriteAt(append(b, '\n'), 0)
	}
	if werr != nil {
		fmt.Fprintf(stderr, "sandbox-run: cannot write the report: %v\n", werr)
	} else if !sameFile(rep.f, rep.path) {
		fmt.Fprintf(stderr, "sandbox-run: the report file %s was replaced or removed during the run; the report went to the file opened before it, not to what is there now\n", rep.path)
	}
}
