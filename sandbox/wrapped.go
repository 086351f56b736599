package sandbox

import (
	"context"
	"os/exec"
	"sync"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// Enforcement says how complete a wrap's confinement is.
type Enforcement string

const (
	// Full: every part of the policy is enforced.
	Full Enforcement = "full"
	// Partial: some part is not; Gaps says which.
	Partial Enforcement = "partial"
)

// Gap names one part of the policy a runner does not enforce.
//
// The launchers' notice lines are made from the same two fields (the
// internal type it converts from has the same layout and JSON names, so
// the provider's report and the launcher's notice cannot drift apart).
type Gap struct {
	// Area is the class of confinement that is incomplete.
	Area Area `json:"area"`
	// Reason says what is not enforced and why.
	Reason string `json:"reason"`
}

// String returns "area: reason".
func (g Gap) String() string { return vocab.Gap(g).String() }

// gapsOf converts the gaps a runner's planner reports.
func gapsOf(gaps []vocab.Gap) []Gap {
	out := make([]Gap, len(gaps))
	for i, g := range gaps {
		out[i] = Gap(g)
	}
	return out
}

// joinGaps is vocab.JoinGaps for the report's gaps: "area: reason; ...".
func joinGaps(gaps []Gap) string {
	v := make([]vocab.Gap, len(gaps))
	for i, g := range gaps {
		v[i] = vocab.Gap(g)
	}
	return vocab.JoinGaps(v)
}

// Area is the class of confinement a Gap is about, a string: "fs", "net",
// "ipc", "proc", "limits" or "classify".
type Area = vocab.Area

// The areas of a Gap.
const (
	AreaFS   = vocab.AreaFS   // "fs": the file system (writes, reads, lookups)
	AreaNet  = vocab.AreaNet  // "net": the network
	AreaIPC  = vocab.AreaIPC  // "ipc": other processes reached by IPC, sockets or signals
	AreaProc = vocab.AreaProc // "proc": other processes seen (their metadata, memory)
	// AreaClassify ("classify"): the report of a result (telling a runner
	// failure from the command's own), rather than the confinement itself.
	AreaClassify = vocab.AreaClassify
	// AreaLimits ("limits"): a resource limit the policy asked for that
	// the runner cannot hold (Wrapped.Limits says which, and why).
	AreaLimits = vocab.AreaLimits
)

// Wrapped is one command, ready to spawn under its sandbox. Spawn Path with
// Args (Args[0] is the launcher name the re-executed binary dispatches on),
// Env and Dir, from any language; or call Command. What is spawned is the
// launcher, which confines itself and then starts the command: it starts in
// Dir, a directory no command can write (the command's own working
// directory travels in Args), and, for the Linux launchers, with the
// variables HeldEnv names held back, so nothing a previous command left in
// a writable root reaches the launcher before it is confined.
type Wrapped struct {
	// Path is the absolute path of the program to spawn.
	Path string `json:"path"`
	// Args is the full argv, Args[0] included.
	Args []string `json:"args"`
	// Env is the environment to spawn with: the caller's, Policy.Env
	// applied (TMPDIR points at TempDir), the variables HeldEnv names held
	// back. It is left out of JSON: it may hold the caller's secrets.
	Env []string `json:"-"`
	// LaunchEnv are the variables of Env the wrap itself sets (TMPDIR, the
	// proxy's variables under NetworkProxied, under seatbelt the compilers'
	// module caches below TempDir unless Env already sets them, winacl's
	// soft offline environment under a network deny, and the wrap's token,
	// which
	// the launcher reads and removes), for a
	// consumer that spawns Path and Args from the JSON with an environment
	// of its own. It holds the token: do not let the command read it.
	LaunchEnv []string `json:"launch_env,omitempty"`
	// HeldEnv, when set (the Linux launchers), is how Env was made from
	// the caller's environment: a consumer that spawns Path and Args from
	// the JSON with an environment of its own applies it too. The launcher
	// gives the command the held variables back, unchanged, once confined.
	HeldEnv *HeldEnv `json:"held_env,omitempty"`
	// WithheldEnv names (never the values) the caller's variables that
	// Policy.Env withheld from the command because they look like
	// credentials; Policy.Env.Keep passes one on.
	WithheldEnv []string `json:"withheld_env,omitempty"`
	// Dir is the working directory to spawn the launcher in: "/" for the
	// Linux launchers, which enter the command's directory (Request.Dir)
	// themselves once confined; the command's directory for the others.
	Dir string `json:"dir"`
	// Runner is the runner that confines the command.
	Runner string `json:"runner"`
	// Enforcement is Full or Partial.
	Enforcement Enforcement `json:"enforcement"`
	// Gaps are the reasons for Partial.
	Gaps []Gap `json:"gaps,omitempty"`
	// DenialSignatures are stderr fragments that mean the sandbox likely
	// denied something.
	DenialSignatures []string `json:"denial_signatures"`
	// RunnerFailure is the rule that tells a launcher failure from a
	// command's own failure.
	RunnerFailure RunnerFailureRule `json:"runner_failure"`
	// TempDir is the wrap's private temp dir, removed by Cleanup.
	TempDir string `json:"temp_dir,omitempty"`
	// Network is the policy's network mode (deny when it named none).
	Network NetworkMode `json:"network"`
	// Proxy is the URL of the domain proxy the command's clients are
	// pointed at (NetworkProxied), as the command reaches it.
	Proxy string `json:"proxy,omitempty"`
	// Limits are the wrap's resource limits (Policy.Limits, and the
	// default process limit), each with the mechanism that holds it here,
	// or none and why.
	Limits []Limit `json:"limits,omitempty"`
	// CacheDir is the directory of the toolchains' caches (Policy.Caches):
	// the workspace's own, kept across runs, or one below TempDir.
	CacheDir string `json:"cache_dir,omitempty"`
	// Caches names each tool's cache variables the wrap set (they are in
	// LaunchEnv too), and the user's caches read to warm them.
	Caches []CacheUse `json:"caches,omitempty"`
	// CacheNote says why the caches are below TempDir although the
	// policy would keep them across runs.
	CacheNote string `json:"cache_note,omitempty"`

	cleanupOnce sync.Once
	cleanupErr  error
	cleanup     func() error
	sel         *selection // the provider's selection, dropped after a runner failure (Classify)
	selGen      uint64     // the verdict of sel this wrap ran on
	// checkProtected, when set (winacl), checks and restores the read-only
	// subpaths once the command exited; Classify reports what it found.
	checkProtected func() []ProtectedChange
	spawnedMu      sync.Mutex
	spawned        []*exec.Cmd // what Command returned: Cleanup kills those still running
	appliedMu      sync.Mutex
	applied        []*appliedPipe // one per Command, when the launcher reports the sandbox applied (seatbelt)
	netVars        []string       // the proxy's variables (NetworkProxied)
	net            *wrapNet       // the proxy and bridge this wrap runs until Cleanup
	fromCache      bool           // the runner was selected from the verdict cache, unprobed
	rules          *pathRules     // what Explain and the refusals judge by
	// recordsRefusals: Command passes the launcher a pipe for the refusals
	// its guard or supervisor makes (vocab.RefusalsEnv); one per Command.
	recordsRefusals bool
	refusalPipes    []*recordPipe
}

// HeldEnv names the variables a launcher must not start with: those that
// make the dynamic loader, libc or the Go runtime load code or read or
// write files at start (LD_LIBRARY_PATH with an empty entry would make the
// loader look in the directory it starts in; LD_PRELOAD, MALLOC_TRACE,
// GCONV_PATH, GODEBUG, ...), while the launcher still runs with the
// caller's rights. Each such NAME=value is passed as Prefix+NAME=value, and
// a variable whose name already starts with Prefix is dropped.
type HeldEnv struct {
	// Prefix is put before each held variable's name.
	Prefix string `json:"prefix"`
	// Names are the variables held by exact name.
	Names []string `json:"names"`
	// NamePrefixes hold every variable whose name starts with one of them.
	NamePrefixes []string `json:"name_prefixes"`
}

// Command returns an *exec.Cmd that spawns the launcher of the wrapped
// command (Path, Args, Env, in Dir); ctx ends it, and with it everything
// the command started (see docs/contract.md, Lifetime).
//
// On Linux the end of ctx sends the launcher SIGTERM, which reaches the
// command, so it can finish its work (cmd.Cancel); if it still runs 10 s
// later (cmd.WaitDelay, which a consumer may change), the launcher is
// killed, and the whole sandbox with it. Elsewhere ctx kills the launcher.
//
// On Linux the launcher dies with its spawner: SysProcAttr.Pdeathsig is
// SIGKILL (the launchers set it again themselves, but only once they run;
// set here, there is no window between the fork and their first
// instruction), and the launcher's death ends the command and everything it
// started. Edit cmd.SysProcAttr rather than replacing it, or set Pdeathsig
// again. The kernel sends that signal when the *thread* that spawned the
// launcher exits, not the process: do not start the command from a
// goroutine locked to its thread (runtime.LockOSThread) that exits, or
// unlocks and lets the runtime end the thread, before the command ends;
// the command would be killed with it.
//
// Under seatbelt the launcher reports on a pipe that the sandbox is
// applied (RunnerFailure.AppliedEnv): Command passes its write end as
// ExtraFiles[0] (fd 3) and Classify reads it, for the last Command. Under
// namespaces and landlock the launcher records on a pipe the refusals its
// guard or supervisor makes (vocab.RefusalsEnv), passed the same way;
// Classify reads the last Command's into Outcome.Refusals. Append to
// ExtraFiles rather than replacing it.
func (w *Wrapped) Command(ctx context.Context) *exec.Cmd {
	cmd := exec.CommandContext(ctx, w.Path)
	cmd.Args = append([]string(nil), w.Args...)
	cmd.Env = append([]string(nil), w.Env...)
	cmd.Dir = w.Dir
	w.passAppliedPipe(cmd)
	w.passRefusalsPipe(cmd)
	dieWithSpawner(cmd)
	stopGracefully(cmd)
	w.spawnedMu.Lock()
	w.spawned = append(w.spawned, cmd)
	w.spawnedMu.Unlock()
	return cmd
}

// Cleanup ends what the wrap started and removes what it created: a
// launcher spawned by Command that still runs is killed (and with it
// everything the command started), then the private temp dir is removed.
// Call it after the command exited, or to stop it. It is safe to call more
// than once.
func (w *Wrapped) Cleanup() error {
	w.cleanupOnce.Do(func() {
		w.spawnedMu.Lock()
		spawned := w.spawned
		w.spawnedMu.Unlock()
		for _, cmd := range spawned {
			if cmd.Process != nil {
				cmd.Process.Kill() // os.ErrProcessDone once waited for
			}
		}
		w.closeAppliedPipes()
		w.closeRefusalsPipes()
		if w.net != nil {
			w.net.close()
		}
		if w.cleanup != nil {
			w.cleanupErr = w.cleanup()
		}
	})
	return w.cleanupErr
}
