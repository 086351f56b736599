package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/winacl"
)

// winaclRunner confines with a write-restricted token and NTFS ACEs
// (package winacl): the provider side plans and applies the ACEs and makes
// the session (the private temp dir with its own SID) in prepare; the
// re-executed binary acting as winacl-run (package launcher) creates the
// token and the child. Everything here is plain Go over winacl.System and
// the launcher path, both passed in, so it is tested on Linux with fakes;
// runners_windows.go wires the real ones.
//
// Lifetime: one winaclRunner per provider (platformRunners runs in New).
// Its Manager is made at construction, which reads the temp root and this
// process's identity and changes nothing. Manager.Recover, which removes
// the dirs and ACEs of sessions whose process died, runs once per provider,
// on the first call of ready or prepare: runner selection on the first
// Wrap (or Runner, or Diagnose), never in New, which promises to do nothing.
type winaclRunner struct {
	mgr    *winacl.Manager
	mgrErr error                  // why there is no Manager
	exe    func() (string, error) // the launcher binary (launcherPath; tests fake it)
	st     *winaclState
}

// winaclState is shared by the copies of one winaclRunner value.
type winaclState struct {
	recoverOnce sync.Once
	recovered   winacl.Recovery // what Recover removed and left
	recoverErr  error           // not fatal: what it could not remove keeps its marker for the next provider
}

// newWinACLRunner returns the winacl runner over sys; exe locates the
// launcher binary. A Manager that cannot be made (no temp root, no process
// identity) makes ready fail, so every Wrap is SANDBOX_UNAVAILABLE.
func newWinACLRunner(sys winacl.System, exe func() (string, error)) winaclRunner {
	m, err := winacl.NewManager(winacl.Config{System: sys})
	return winaclRunner{mgr: m, mgrErr: err, exe: exe, st: &winaclState{}}
}

func (winaclRunner) name() string { return RunnerWinACL }

// manager returns the Manager, running Recover the first time.
func (r winaclRunner) manager() (*winacl.Manager, error) {
	if r.mgrErr != nil {
		return nil, r.mgrErr
	}
	if r.mgr == nil {
		return nil, errors.New("winacl: no Manager")
	}
	r.st.recoverOnce.Do(func() {
		// Not fatal: a dead session's leftovers do not stop new sessions,
		// and what could not be removed keeps its marker for a later try.
		r.st.recovered, r.st.recoverErr = r.mgr.Recover()
	})
	return r.mgr, nil
}

func (r winaclRunner) ready() error {
	if _, err := r.exe(); err != nil {
		return err
	}
	_, err := r.manager()
	return err
}

// probe: winacl is the sole candidate of its platform, so it is selected
// unprobed; as one of several (a Config naming it twice) it gets the ready
// check only. A launcher that cannot build the token is a runner failure of
// that run (exit 125, fatal line, status file), never an unconfined run.
func (r winaclRunner) probe(context.Context) error { return r.ready() }

// traits: winacl makes its own private temp dir (the session dir, with
// its own SID and revocable ACE), and cannot yet hold a command to
// loopback ports.
func (winaclRunner) traits() traits { return traits{ownTemp: true} }

// prepare validates what winacl-run will be given, then makes the session:
// the standing ACEs of the write roots (added only where absent) and the
// private temp dir with its own SID and revocable ACE; then it spells the
// launcher argv (sessionLaunch). Every policy error comes before any ACL
// is read or changed, and an error after the session was made removes it
// again. RequireFull is refused here, before anything changes: winacl's
// enforcement is always partial.
func (r winaclRunner) prepare(_ context.Context, spec vocab.Spec) (launch, error) {
	m, err := r.manager()
	if err != nil {
		return launch{}, unavailable(r.name(), "cannot set up the Windows ACL runner", err)
	}
	dir, err := winacl.Canonicalize(spec.Dir, nil)
	if err == nil {
		// The checks winacl-run makes on the command, with a stand-in SID:
		// the session's is not known yet.
		err = winacl.LaunchSpec{SessionSID: winacl.SIDEveryone, Argv: spec.Argv, Dir: dir}.Validate()
	}
	if err != nil {
		return launch{}, &Error{Code: CodeInvalidPolicy, Runner: r.name(), Reason: "winacl-run cannot start this command", Err: err}
	}
	req := winacl.Request{
		WriteRoots:       spec.Writable,
		ReadOnlySubpaths: spec.ReadOnly,
		DenyRead:         spec.DenyRead,
		AllowNetwork:     spec.Network == vocab.NetworkAllow,
	}
	if spec.RequireFull {
		pl, err := m.Plan(req)
		if err != nil {
			return launch{}, r.prepareError(err)
		}
		return launch{}, unavailable(r.name(), "full enforcement required, but: "+vocab.JoinGaps(append(winacl.Gaps(), pl.Gaps...)), nil)
	}
	s, err := m.Prepare(req)
	if err != nil {
		return launch{}, r.prepareError(err)
	}
	l, err := r.sessionLaunch(spec, dir, s)
	if err != nil {
		s.Cleanup() // the wrap's error is the one to report
		return launch{}, err
	}
	return l, nil
}

func (r winaclRunner) prepareError(err error) error {
	if errors.Is(err, winacl.ErrInvalidPolicy) {
		return &Error{Code: CodeInvalidPolicy, Runner: r.name(), Reason: "the Windows ACL runner cannot express the policy", Err: err}
	}
	return unavailable(r.name(), "cannot prepare the ACLs and the private temp dir", err)
}

// sessionLaunch is the launch of session s, for the command in dir (its
// canonical form). The launcher argv carries what winacl-run needs and
// nothing more: the write roots (it recomputes their SIDs), the session
// dir (its SID and status file), the working directory and the command.
// Read-only subpaths are enforced by the standing deny ACEs already
// applied, deny-read paths are a gap, so neither goes on the argv (a
// Windows command line is at most 32767 characters).
func (r winaclRunner) sessionLaunch(spec vocab.Spec, dir string, s *winacl.Session) (launch, error) {
	exe, err := r.exe()
	if err != nil {
		return launch{}, unavailable(r.name(), "launcher unusable", err)
	}
	invalid := func(reason string, err error) error {
		return &Error{Code: CodeInvalidPolicy, Runner: r.name(), Reason: reason, Err: err}
	}
	// The spec winacl-run will build from the argv (the environment aside).
	ls, err := s.LaunchSpec(spec.Argv, dir, nil)
	if err != nil {
		return launch{}, invalid("winacl-run cannot start this command", err)
	}
	wire := vocab.Spec{Token: spec.Token, RequireFull: spec.RequireFull, Argv: spec.Argv}
	if spec.Network == vocab.NetworkAllow {
		wire.Network = vocab.NetworkAllow // the proxy is not winacl-run's: no ports on its wire
	}
	for _, root := range s.WriteRoots {
		p, err := winacl.WirePath(root.Path)
		if err != nil {
			return launch{}, invalid("cannot encode a write root", err)
		}
		wire.Writable = append(wire.Writable, p)
	}
	if wire.TempDir, err = winacl.WirePath(s.Dir); err != nil {
		return launch{}, invalid("cannot encode the private temp dir", err)
	}
	if wire.Dir, err = winacl.WirePath(dir); err != nil {
		return launch{}, invalid("cannot encode the working directory", err)
	}
	args, err := vocab.Encode(vocab.WinACLRun, wire)
	if err != nil {
		return launch{}, invalid("cannot encode the launcher arguments", err)
	}
	return launch{
		path: exe, args: args,
		gaps:    gapsOf(s.Gaps),
		denials: append([]string(nil), windowsDenialSignatures...),
		// A Windows exit code is any 32-bit value and the token is
		// readable by the command (it may read its parent's command
		// line), so the fatal line alone could be forged: the launcher's
		// status file, which the command cannot write, must record the
		// failure too.
		rule: RunnerFailureRule{
			Kind:        RuleExitAndLine,
			ExitCode:    vocab.FatalExit,
			FatalPrefix: vocab.FatalPrefix(vocab.WinACLRun, spec.Token),
			StatusFile:  ls.StatusFile,
		},
		tempDir:  s.Dir,
		tempVars: []string{"TMP", "TEMP"},
		// Network deny is a gap on Windows; the soft offline environment
		// makes the clients that honour proxy variables and
		// GIT_SSH_COMMAND fail fast.
		env: s.OfflineEnv(),
		cleanup: func() error {
			if err := s.Cleanup(); err != nil {
				return fmt.Errorf("winacl: cleanup: %w", err)
			}
			return nil
		},
		// Deletes are not confined on Windows: the protected paths are
		// checked (and restored where safe) after the run, by Classify
		// or Cleanup.
		checkProtected: func() []ProtectedChange {
			var out []ProtectedChange
			for _, c := range s.CheckProtected() {
				out = append(out, ProtectedChange{Path: c.Path, Change: c.Change, Restored: c.Restored, Note: c.Note})
			}
			return out
		},
	}, nil
}

// windowsDenialSignatures are the texts Windows programs print for a write
// the token's restricting SIDs refuse (ERROR_ACCESS_DENIED, E_ACCESSDENIED):
// the Win32 message (cmd.exe, Python's "[WinError 5]"), .NET and
// PowerShell's UnauthorizedAccessException ("Access to the path 'x' is
// denied."), the HRESULT, and the POSIX texts of MSYS2 / Git for Windows.
var windowsDenialSignatures = []string{
	"Access is denied",
	"Access to the path",
	"UnauthorizedAccessException",
	"0x80070005",
	"Permission denied",
	"Operation not permitted",
}
