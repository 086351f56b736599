// Package sandbox confines the commands a program runs on a user's behalf
// (above all an AI coding agent's make, npm test, git and scripts): writes
// only where the policy allows, no network unless allowed, no reaching the
// host's processes, daemons and secrets, and an honest report of how
// complete that confinement is.
//
// The flow is Wrap, Run (or spawn and Classify), Cleanup. The consumer's
// own binary is the launcher, so its main must start with launcher.Init:
//
//	func main() {
//		if launcher.Init() {
//			return
//		}
//		w, err := sandbox.Default().Wrap(ctx, sandbox.Request{
//			Argv:   []string{"make", "test"},
//			Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws},
//		})
//		if err != nil {
//			return // SANDBOX_UNAVAILABLE or INVALID_POLICY: never run it unconfined
//		}
//		defer w.Cleanup()
//		outcome, err := w.Run(ctx, os.Stdin, os.Stdout, os.Stderr)
//		// outcome.Kind: child, likely-denied, runner-failure, timeout or
//		// cancelled; outcome.Refusals: what the sandbox refused, and the
//		// change that allows each.
//	}
//
// A consumer that spawns itself uses Command (or Path, Args, Env and Dir,
// from any language) and Classify. examples/quickstart in the repository
// is the whole flow as a program its test runs.
//
// A Provider selects one runner per platform and caches the verdict:
// namespaces, then landlock, on Linux (each proved by a real probe);
// seatbelt on macOS; winacl on Windows; none elsewhere, where every Wrap is
// SANDBOX_UNAVAILABLE. Policy is per call and validated before anything is
// spawned or created: a relative or unclean path, a missing workspace, a
// NUL byte, a writable root that is / or the home directory, or a symlink
// inside a writable root on the way to another writable root or an
// allowed UNIX socket (an earlier command could have planted it) is
// INVALID_POLICY.
//
// The command gets the caller's environment without the variables that
// look like credentials (GITHUB_TOKEN, AWS_*, *_API_KEY, ...);
// Policy.Env changes that (EnvPolicy), and Wrapped.WithheldEnv names what
// was withheld.
//
// Policy.Limits bounds the processes the command runs at once (by default
// DefaultMaxProcesses), its memory and its temp dir's size;
// Wrapped.Limits names each limit and what holds it here (a cgroup, an
// rlimit, a tmpfs), or why nothing does.
//
// Every Wrapped says whether enforcement is Full or Partial and lists the
// Gaps that make it partial; Policy.RequireFull turns a partial wrap into
// SANDBOX_UNAVAILABLE, and the launchers check again at launch. The exit
// and failure contract is in the repository's docs/contract.md, what each
// runner enforces and why in docs/runners/, the known limitations in
// SECURITY.md.
package sandbox
