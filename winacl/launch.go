package winacl

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"unicode"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// LauncherName is the name the re-executed binary dispatches on.
const LauncherName = "winacl-run"

// LaunchSpec is what winacl-run needs to run one command.
type LaunchSpec struct {
	// WriteSIDs are the write SIDs of the write roots (at most
	// MaxWriteRoots); empty in read-only mode.
	WriteSIDs []SID
	// SessionSID is the SID of the private temp dir.
	SessionSID SID
	// StatusFile is where a launcher failure is recorded ("" for none).
	StatusFile string
	// Argv is the command and its arguments.
	Argv []string
	// Dir is the command's absolute working directory.
	Dir string
	// Env is the command's environment, "KEY=value" entries.
	Env []string
}

// NewLaunchSpec builds a spec from the canonical write roots and the session
// dir a provider passed on the launcher's argv: it recomputes their SIDs
// (canonicalisation is idempotent, so they equal the provider's) and the
// status file path, and validates the result.
func NewLaunchSpec(writeRoots []string, sessionDir string, argv []string, dir string, env []string) (LaunchSpec, error) {
	spec := LaunchSpec{Argv: argv, Dir: dir, Env: env}
	for _, r := range writeRoots {
		sid, err := WriteSID(r, nil)
		if err != nil {
			return LaunchSpec{}, fmt.Errorf("winacl: launch spec: write root: %w", err)
		}
		spec.WriteSIDs = append(spec.WriteSIDs, sid)
	}
	sd, err := Canonicalize(sessionDir, nil)
	if err != nil {
		return LaunchSpec{}, fmt.Errorf("winacl: launch spec: session dir: %w", err)
	}
	spec.SessionSID = deriveSID(sessionSIDDomain, sd)
	spec.StatusFile = statusFile(sd)
	if err := spec.Validate(); err != nil {
		return LaunchSpec{}, err
	}
	return spec, nil
}

// Validate checks the spec: well-formed SIDs within the bound, a command, an
// absolute working directory.
func (s LaunchSpec) Validate() error {
	if len(s.WriteSIDs) > MaxWriteRoots {
		return fmt.Errorf("winacl: launch spec: %d write SIDs, at most %d: %w", len(s.WriteSIDs), MaxWriteRoots, ErrTooManyWriteRoots)
	}
	for _, sid := range append(append([]SID(nil), s.WriteSIDs...), s.SessionSID) {
		if _, err := ParseSID(string(sid)); err != nil {
			return fmt.Errorf("winacl: launch spec: %w", err)
		}
	}
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return errors.New("winacl: launch spec: no command")
	}
	if strings.ContainsRune(s.Argv[0], '"') {
		return errors.New("winacl: launch spec: program name contains a double quote")
	}
	for _, a := range s.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return errors.New("winacl: launch spec: argument contains NUL")
		}
	}
	if _, err := parsePath(s.Dir, rejectStreams); err != nil {
		return fmt.Errorf("winacl: launch spec: working directory: %w", err)
	}
	for _, kv := range s.Env {
		if strings.IndexByte(kv, 0) >= 0 || !strings.Contains(kv, "=") {
			return fmt.Errorf("winacl: launch spec: malformed environment entry %q", clip(kv))
		}
	}
	return nil
}

// RestrictingSIDs returns the restricting SIDs of the command's token, in
// order: the write SIDs, the session SID, Everyone, and the logon SID when
// the launcher's token has one (the window station and desktop grant it, so
// process start-up needs it; like Everyone it is granted write on few file
// system objects).
func RestrictingSIDs(s LaunchSpec, logon SID) []SID {
	out := append([]SID(nil), s.WriteSIDs...)
	out = append(out, s.SessionSID, SIDEveryone)
	if logon != "" {
		out = append(out, logon)
	}
	return out
}

// Handle is a Win32 handle as the Win32 interface passes it around.
type Handle uintptr

// ProcessStart is what Win32.StartSuspended starts.
type ProcessStart struct {
	// App is the resolved program path (lpApplicationName).
	App string
	// CommandLine is the composed command line.
	CommandLine string
	// Dir is the working directory.
	Dir string
	// Env is the environment, "KEY=value" entries.
	Env []string
	// Desktop is the STARTUPINFO.lpDesktop, "winstation\desktop": the
	// private desktop the command runs on.
	Desktop string
}

// UI restrictions of the command's job (JOBOBJECT_BASIC_UI_RESTRICTIONS,
// winnt.h JOB_OBJECT_UILIMIT_*).
const (
	UILimitHandles          = 0x01 // no USER handles (windows, hooks) of processes outside the job
	UILimitReadClipboard    = 0x02
	UILimitWriteClipboard   = 0x04
	UILimitSystemParameters = 0x08 // no SystemParametersInfo changes
	UILimitDisplaySettings  = 0x10 // no ChangeDisplaySettings
	UILimitGlobalAtoms      = 0x20 // a private atom table: no DDE with the user's processes
	UILimitDesktop          = 0x40 // no creating or switching desktops
	UILimitExitWindows      = 0x80 // no ExitWindows(Ex): logoff, shutdown

	// UILimits is every one of them: what the command's job gets.
	UILimits = UILimitHandles | UILimitReadClipboard | UILimitWriteClipboard | UILimitSystemParameters |
		UILimitDisplaySettings | UILimitGlobalAtoms | UILimitDesktop | UILimitExitWindows
)

// DesktopName returns the name of the private desktop of the session whose
// SID is sid: one per session, recomputable like the SID.
func DesktopName(sid SID) string {
	return "sandbox-local-" + strings.ReplaceAll(strings.TrimPrefix(string(sid), "S-1-5-21-"), "-", "_")
}

// Win32 is the thin layer of Win32 calls winacl-run makes, one method per
// step, so that RunWith's sequencing is tested on Linux with a fake.
type Win32 interface {
	// ProcessToken opens the launcher's own primary token with the access
	// CreateRestrictedToken and CreateProcessAsUser need.
	ProcessToken() (Handle, error)
	// TokenIdentity returns the token's user SID and its logon SID: the
	// group marked SE_GROUP_LOGON_ID, else TokenLogonSid, else "" (a token
	// of an SSH or service logon may have none).
	TokenIdentity(token Handle) (user, logon SID, err error)
	// RestrictToken returns CreateRestrictedToken(token,
	// DISABLE_MAX_PRIVILEGE|LUA_TOKEN|WRITE_RESTRICTED, restricting).
	RestrictToken(token Handle, restricting []SID) (Handle, error)
	// SetDefaultDACL sets the token's default DACL (what objects the
	// command creates without a parent get: its pipes, processes, threads)
	// to full access for each of sids.
	SetDefaultDACL(token Handle, sids []SID) error
	// CreateJob creates an unnamed job object.
	CreateJob() (Handle, error)
	// SetKillOnClose sets JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE on job: every
	// process in it dies when the last handle to the job closes, that is
	// when the launcher exits, however it exits.
	SetKillOnClose(job Handle) error
	// SetUIRestrictions sets the job's JOBOBJECT_BASIC_UI_RESTRICTIONS.
	SetUIRestrictions(job Handle, limits uint32) error
	// CreateDesktop creates the desktop name in the launcher's window
	// station, with a protected DACL granting full access to sids only, and
	// returns it with its full name ("winstation\name") for lpDesktop.
	CreateDesktop(name string, sids []SID) (desktop Handle, full string, err error)
	// CloseDesktop closes a desktop CreateDesktop returned.
	CloseDesktop(desktop Handle) error
	// InteractiveWindowStation reports whether the launcher's window
	// station is visible (WSF_VISIBLE: WinSta0 of a logged-on user), as
	// opposed to the hidden one of a service or an SSH logon in session 0.
	InteractiveWindowStation() bool
	// IsFile reports whether path is an existing regular file.
	IsFile(path string) bool
	// StartSuspended creates the process with token, suspended, inheriting
	// only the standard handles. A missing program yields an error matching
	// fs.ErrNotExist, an unreadable one fs.ErrPermission, a non-image
	// errNotExecutable.
	StartSuspended(token Handle, p ProcessStart) (process, thread Handle, err error)
	// AssignToJob puts process into job.
	AssignToJob(job, process Handle) error
	// ResumeThread resumes the process's initial thread.
	ResumeThread(thread Handle) error
	// Terminate ends process with code.
	Terminate(process Handle, code uint32) error
	// Wait waits for process to exit and returns its exit code.
	Wait(process Handle) (uint32, error)
	// Close closes h.
	Close(h Handle) error
	// WriteFile replaces path with data.
	WriteFile(path string, data []byte) error
	// RemoveFile removes path (fs.ErrNotExist when missing).
	RemoveFile(path string) error
}

// LaunchError is a failure of the launcher itself: the command did not run,
// or its outcome is unknown. The launcher prints the contract's fatal line
// with Error() and exits vocab.FatalExit.
type LaunchError struct {
	// Step names the step that failed ("create restricted token", ...).
	Step string
	// Err is the failure.
	Err error
	// StatusErr is set when the status file could not be written either.
	StatusErr error
}

// Error is "step: failure", the reason of the fatal line.
func (e *LaunchError) Error() string {
	s := e.Step + ": " + e.Err.Error()
	if e.StatusErr != nil {
		s += " (and recording the failure failed: " + e.StatusErr.Error() + ")"
	}
	return s
}

// Unwrap returns Err.
func (e *LaunchError) Unwrap() error { return e.Err }

// RunWith runs spec's command under a write-restricted token through w and
// returns its exit code. The sequence is: clear the status file, resolve the
// program (exit 127 when missing; a batch file runs through cmd.exe with
// cmd's quoting), open the launcher's token, build the restricted token and
// its default DACL, create the job and set kill-on-close and every UI
// restriction (UILimits), create the session's private desktop, start the
// process suspended on it, assign it to the job, and only then resume it; wait, and return its exit code. Every handle is closed;
// closing the job kills whatever the command left running.
//
// A failure of any step is returned as a *LaunchError with code vocab.FatalExit,
// after the failure was written to spec.StatusFile (the unforgeable record
// a provider checks, see Session.LauncherFailure); a process already
// started is terminated first. A program that is missing or not executable
// is a child outcome: a message on stderr and 127 or 126, no error.
func RunWith(w Win32, spec LaunchSpec, stderr io.Writer) (code int, err error) {
	var toClose []Handle
	var desk Handle // the private desktop, closed last
	defer func() {
		for i := len(toClose) - 1; i >= 0; i-- {
			_ = w.Close(toClose[i])
		}
		if desk != 0 {
			_ = w.CloseDesktop(desk)
		}
	}()
	fail := func(step string, e error) (int, error) {
		le := &LaunchError{Step: step, Err: e}
		if spec.StatusFile != "" {
			le.StatusErr = w.WriteFile(spec.StatusFile, formatStatus(le.Error()))
		}
		return vocab.FatalExit, le
	}

	if err := spec.Validate(); err != nil {
		return fail("check launch spec", err)
	}
	if spec.StatusFile != "" {
		if err := w.RemoveFile(spec.StatusFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail("clear status file", err)
		}
	}
	app, ok := resolveProgram(spec.Argv[0], spec.Dir, spec.Env, w.IsFile)
	if !ok {
		fmt.Fprintf(stderr, "%s: %s: command not found\n", LauncherName, spec.Argv[0])
		return vocab.ExitNotFound, nil
	}
	cmdline := composeCommandLine(spec.Argv)
	if isBatch(app) {
		// CreateProcess runs a batch file through cmd.exe, which parses the
		// line by its own rules, not the C runtime's: say so explicitly.
		shell := commandShell(spec.Env)
		if !w.IsFile(shell) {
			return fail("find cmd.exe for a batch file", fmt.Errorf("%s: %w", shell, fs.ErrNotExist))
		}
		line, err := composeBatchCommandLine(app, spec.Argv[1:])
		if err != nil {
			return fail("compose batch command line", err)
		}
		app, cmdline = shell, line
	}

	tok, err := w.ProcessToken()
	if err != nil {
		return fail("open process token", err)
	}
	toClose = append(toClose, tok)
	user, logon, err := w.TokenIdentity(tok)
	if err != nil {
		return fail("read token identity", err)
	}
	// Without a logon SID (SSH, service logons) the token runs without it:
	// its only use is the window station and desktop, and the private
	// desktop below grants the session SID, a restricting SID, instead.
	rtok, err := w.RestrictToken(tok, RestrictingSIDs(spec, logon))
	if err != nil {
		return fail("create restricted token", err)
	}
	toClose = append(toClose, rtok)
	if err := w.SetDefaultDACL(rtok, []SID{user, SIDSystem, spec.SessionSID}); err != nil {
		return fail("set default DACL", err)
	}
	job, err := w.CreateJob()
	if err != nil {
		return fail("create job object", err)
	}
	toClose = append(toClose, job)
	if err := w.SetKillOnClose(job); err != nil {
		return fail("set job kill-on-close", err)
	}
	if err := w.SetUIRestrictions(job, UILimits); err != nil {
		return fail("set job UI restrictions", err)
	}
	deskSIDs := []SID{user, SIDSystem, spec.SessionSID}
	if logon != "" {
		deskSIDs = append(deskSIDs, logon)
	}
	desk, deskName, err := w.CreateDesktop(DesktopName(spec.SessionSID), deskSIDs)
	switch {
	case err == nil:
	case !w.InteractiveWindowStation():
		// A hidden window station (a service, SSH in session 0) shows no
		// user's desktop to protect, and may refuse new desktops: the
		// command runs on the inherited one, under the job's UI limits.
		desk, deskName = 0, ""
	default:
		return fail("create private desktop", err)
	}

	proc, thread, err := w.StartSuspended(rtok, ProcessStart{App: app, CommandLine: cmdline, Dir: spec.Dir, Env: spec.Env, Desktop: deskName})
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(stderr, "%s: %s: %v\n", LauncherName, spec.Argv[0], err)
		return vocab.ExitNotFound, nil
	case errors.Is(err, fs.ErrPermission), errors.Is(err, errNotExecutable):
		fmt.Fprintf(stderr, "%s: %s: %v\n", LauncherName, spec.Argv[0], err)
		return vocab.ExitNotExecutable, nil
	default:
		return fail("create process", err)
	}
	toClose = append(toClose, proc, thread) // thread closes first
	if err := w.AssignToJob(job, proc); err != nil {
		_ = w.Terminate(proc, vocab.FatalExit)
		return fail("assign process to job", err)
	}
	if err := w.ResumeThread(thread); err != nil {
		_ = w.Terminate(proc, vocab.FatalExit)
		return fail("resume process", err)
	}
	exit, err := w.Wait(proc)
	if err != nil {
		_ = w.Terminate(proc, vocab.FatalExit)
		return fail("wait for process", err)
	}
	return int(exit), nil
}

// resolveProgram finds the program file for argv0 like env(1) would on
// Windows: a name with a separator or drive is taken relative to dir; a bare
// name is searched in the PATH of env only (never the working directory or
// the launcher's directory, which CreateProcess would search first). A name
// without an extension tries each PATHEXT extension (default
// .COM;.EXE;.BAT;.CMD); a name with one is tried as is first.
func resolveProgram(argv0, dir string, env []string, isFile func(string) bool) (string, bool) {
	exts := strings.Split(strings.ToLower(getenv(env, "PATHEXT", ".COM;.EXE;.BAT;.CMD")), ";")
	try := func(p winPath) (string, bool) {
		base := p.String()
		last := ""
		if n := len(p.comps); n > 0 {
			last = p.comps[n-1]
		}
		if strings.Contains(last, ".") && isFile(base) {
			return base, true
		}
		for _, e := range exts {
			if e = strings.TrimSpace(e); e != "" && isFile(base+e) {
				return base + e, true
			}
		}
		return "", false
	}
	if isAbsSpelling(argv0) {
		p, err := parsePath(argv0, rejectStreams)
		if err != nil {
			return "", false
		}
		return try(p)
	}
	if strings.ContainsAny(argv0, `\/:`) {
		p, err := join(dir, argv0, rejectStreams)
		if err != nil {
			return "", false
		}
		return try(p)
	}
	for _, d := range strings.Split(getenv(env, "PATH", ""), ";") {
		d = strings.Trim(strings.TrimSpace(d), `"`)
		if d == "" || !isAbsSpelling(d) {
			continue
		}
		p, err := join(d, argv0, rejectStreams)
		if err != nil {
			continue
		}
		if got, ok := try(p); ok {
			return got, true
		}
	}
	return "", false
}

// getenv looks key up in env case-insensitively, as Windows does.
func getenv(env []string, key, def string) string {
	for i := len(env) - 1; i >= 0; i-- {
		k, v, ok := strings.Cut(env[i], "=")
		if ok && strings.EqualFold(k, key) {
			return v
		}
	}
	return def
}

// composeCommandLine joins argv into a command line that the Microsoft C
// runtime's parser (CommandLineToArgvW) splits back into argv. The program
// name is parsed without backslash escapes, so it is only quoted (Validate
// refuses a quote in it).
func composeCommandLine(argv []string) string {
	var b strings.Builder
	prog := argv[0]
	if prog == "" || strings.ContainsAny(prog, " \t") {
		b.WriteString(`"` + prog + `"`)
	} else {
		b.WriteString(prog)
	}
	for _, a := range argv[1:] {
		b.WriteByte(' ')
		b.WriteString(escapeArg(a))
	}
	return b.String()
}

// escapeArg quotes one argument by the C runtime's rules: backslashes are
// literal unless they precede a quote, where each must be doubled.
func escapeArg(a string) string {
	if a == "" {
		return `""`
	}
	if !strings.ContainsAny(a, " \t\n\v\"") {
		return a
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(a); i++ {
		c := a[i]
		switch c {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, 2*slashes+1))
			slashes = 0
		default:
			b.WriteString(strings.Repeat(`\`, slashes))
			slashes = 0
		}
		if c != '\\' {
			b.WriteByte(c)
		}
	}
	b.WriteString(strings.Repeat(`\`, 2*slashes))
	b.WriteByte('"')
	return b.String()
}

// isBatch reports whether app is a batch file, which CreateProcess runs
// through cmd.exe.
func isBatch(app string) bool {
	l := strings.ToLower(app)
	return strings.HasSuffix(l, ".bat") || strings.HasSuffix(l, ".cmd")
}

// commandShell is %SystemRoot%\System32\cmd.exe of env (never ComSpec,
// which names any program).
func commandShell(env []string) string {
	root := strings.TrimRight(getenv(env, "SystemRoot", `C:\Windows`), `\`)
	return root + `\System32\cmd.exe`
}

// errBatchArg is an argument cmd.exe cannot be given safely.
var errBatchArg = errors.New("argument cannot be passed to a batch file")

// composeBatchCommandLine returns the cmd.exe command line that runs the
// batch file script with args, each arriving as one %N parameter with its
// text intact: `cmd.exe /e:ON /v:OFF /d /c ""script" args"`. /d skips
// AutoRun, /v:OFF keeps ! literal, /e:ON enables the %cd:~,% substring
// used below. cmd.exe knows no backslash escapes: an argument is quoted
// when it is empty, ends in a backslash, or holds anything but letters,
// digits and #$*+-./:?@\_ (so & | < > ^ ( ) , ; = and spaces stay inside
// quotes, where cmd takes them literally); a quote inside is doubled, and
// the backslashes before it doubled too, so the C runtime of a program the
// batch file passes %N to reads the same text; every % becomes %%cd:~,%,
// which cmd expands to a lone % instead of expanding a variable. A
// carriage return or line feed would end the command: such an argument is
// refused, as is a script name with a quote or a trailing backslash.
func composeBatchCommandLine(script string, args []string) (string, error) {
	if strings.ContainsRune(script, '"') || strings.HasSuffix(script, `\`) {
		return "", fmt.Errorf("%w: batch file name %q", errBatchArg, clip(script))
	}
	var b strings.Builder
	b.WriteString(`cmd.exe /e:ON /v:OFF /d /c ""`)
	b.WriteString(script)
	b.WriteByte('"')
	for _, a := range args {
		if strings.ContainsAny(a, "\r\n\x00") {
			return "", fmt.Errorf("%w: %q holds a line break", errBatchArg, clip(a))
		}
		b.WriteByte(' ')
		quote := a == "" || strings.HasSuffix(a, `\`)
		for _, r := range a {
			if r < 0x80 && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(`#$*+-./:?@\_`, r)) ||
				unicode.IsControl(r) {
				quote = true
				break
			}
		}
		if quote {
			b.WriteByte('"')
		}
		slashes := 0
		for _, r := range a {
			switch r {
			case '\\':
				slashes++
				b.WriteRune(r)
				continue
			case '"':
				b.WriteString(strings.Repeat(`\`, slashes))
				b.WriteByte('"')
			case '%':
				b.WriteString(`%%cd:~,`)
			}
			slashes = 0
			b.WriteRune(r)
		}
		if quote {
			b.WriteString(strings.Repeat(`\`, slashes))
			b.WriteByte('"')
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}
