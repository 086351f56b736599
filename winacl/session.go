package winacl

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
)

// File name suffixes beside a session dir `<SessionRoot>\<id>`.
const (
	markerSuffix  = ".session"   // owner marker: who created the session
	statusSuffix  = ".status"    // launcher status: written on a launcher failure
	sshStubSuffix = ".nossh.cmd" // the failing ssh of the soft offline environment
)

// sessionIDLen is the length of a session id in hex characters (128 bits).
const sessionIDLen = 32

const (
	markerMagic   = "sandbox-local winacl session "
	markerVersion = markerMagic + "v1"
	statusMagic   = "sandbox-local winacl-run status v1"
	statusFatal   = "fatal: "
)

// Config configures a Manager.
type Config struct {
	// System is the OS layer; NewSystem() on Windows, a fake in tests.
	System System
	// TempRoot overrides the platform temp root (System.TempRoot()).
	TempRoot string
	// Rand is the source of session ids; crypto/rand when nil.
	Rand io.Reader
}

// Manager plans and applies the ACLs of wraps and owns their sessions. The
// provider keeps one for its lifetime: Recover once at start, Prepare per
// Wrap, Session.Cleanup per Wrap. Its methods are safe for concurrent use.
type Manager struct {
	sys      System
	tempRoot string
	rand     io.Reader
	self     ProcessID
	mu       sync.Mutex // serialises the standing-ACE check-then-add of this process
}

// NewManager returns a Manager on cfg.System. It reads the temp root and the
// identity of the current process; it changes nothing.
func NewManager(cfg Config) (*Manager, error) {
	if cfg.System == nil {
		return nil, errors.New("winacl: Config.System is nil")
	}
	tr := cfg.TempRoot
	if tr == "" {
		var err error
		if tr, err = cfg.System.TempRoot(); err != nil {
			return nil, fmt.Errorf("winacl: temp root: %w", err)
		}
	}
	ctr, err := Canonicalize(tr, cfg.System)
	if err != nil {
		return nil, fmt.Errorf("winacl: temp root: %w", err)
	}
	self, err := cfg.System.Self()
	if err != nil {
		return nil, fmt.Errorf("winacl: identify current process: %w", err)
	}
	m := &Manager{sys: cfg.System, tempRoot: ctr, rand: cfg.Rand, self: self}
	if m.rand == nil {
		m.rand = rand.Reader
	}
	return m, nil
}

// Plan validates req and returns its plan without reading or changing any
// ACL (see NewPlan).
func (m *Manager) Plan(req Request) (*Plan, error) { return NewPlan(req, m.tempRoot, m.sys) }

// Prepare readies one wrap: it validates req (every policy error before any
// read or change of an ACL), makes sure each standing ACE of the plan is
// present, reading each object's DACL once and adding only what is absent
// (a second run of the same policy reads and never writes), then creates the
// session: a private temp dir under the temp root with its own random SID
// and a revocable ACE for it. The caller must call Session.Cleanup.
func (m *Manager) Prepare(req Request) (*Session, error) {
	pl, err := m.Plan(req)
	if err != nil {
		return nil, err
	}
	missing, err := m.ensureStanding(pl)
	if err != nil {
		return nil, err
	}
	snap, err := m.takeSnapshot(pl)
	if err != nil {
		return nil, err
	}
	s, err := m.newSession(pl)
	if err != nil {
		return nil, err
	}
	s.snap = snap
	s.Gaps = append(Gaps(), pl.Gaps...)
	for _, p := range missing {
		s.Gaps = append(s.Gaps, missingProtectedGap(p))
	}
	return s, nil
}

// ensureStanding reads the DACL of every object of the plan once, fails on a
// missing write root before changing anything, then adds the absent ACEs.
// It returns the protected paths that do not exist.
func (m *Manager) ensureStanding(pl *Plan) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	absent := make([]bool, len(pl.Standing))
	var missing []string
	for i, pa := range pl.Standing {
		has, err := m.sys.HasACE(pa.Path, pa.ACE)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !pa.ACE.Deny:
			return nil, fmt.Errorf("%w: %s", ErrMissingRoot, pa.Path)
		case errors.Is(err, fs.ErrNotExist):
			if pa.protects {
				missing = append(missing, pa.Path)
			}
		case err != nil:
			return nil, fmt.Errorf("winacl: read DACL of %s: %w", pa.Path, err)
		default:
			absent[i] = !has
		}
	}
	for i, pa := range pl.Standing {
		if !absent[i] {
			continue
		}
		if err := m.sys.AddACE(pa.Path, pa.ACE); err != nil {
			return nil, fmt.Errorf("winacl: add ACE (%s) on %s to %s: %w", pa.ACE, pa.Path, pa.Purpose, err)
		}
	}
	return missing, nil
}

// Session is one wrap's private temp dir, its SID and ACE, and the write
// SIDs the launcher's token carries.
type Session struct {
	// ID is the random session id (32 hex characters), the dir's name.
	ID string
	// Dir is the canonical private temp dir: SessionRoot\ID.
	Dir string
	// SID is the session SID, granted AccessModify on Dir (inheritable).
	SID SID
	// WriteRoots are the plan's write roots with their SIDs.
	WriteRoots []WriteRoot
	// Gaps are every gap of this wrap: Gaps() plus the policy's own.
	Gaps []vocab.Gap

	m       *Manager
	mu      sync.Mutex
	cleaned bool
	offline bool              // network denied: the ssh stub exists
	snap    *snapshot         // the protected paths as Prepare found them
	checked bool              // CheckProtected ran
	changes []ProtectedChange // what it found
}

// CheckProtected compares the protected paths with what Prepare recorded,
// restores what is safe to restore and returns every change (see
// ProtectedChange). Call it once the command exited; it runs once per
// session (later calls, and Cleanup, return the first result). Deletes are
// not confined on Windows, so this is how a deleted and recreated
// .git\config is found and put back.
func (s *Session) CheckProtected() []ProtectedChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.checkLocked()
}

func (s *Session) checkLocked() []ProtectedChange {
	if !s.checked {
		s.checked = true
		s.changes = s.m.check(s.snap)
	}
	return append([]ProtectedChange(nil), s.changes...)
}

// newSession creates the marker first, then the dir, then the ACE, so that a
// dir never exists without the marker that tells recovery whose it is.
func (m *Manager) newSession(pl *Plan) (*Session, error) {
	var raw [sessionIDLen / 2]byte
	if _, err := io.ReadFull(m.rand, raw[:]); err != nil {
		return nil, fmt.Errorf("winacl: session id: %w", err)
	}
	id := hex.EncodeToString(raw[:])
	if err := m.sys.MkdirPrivate(pl.SessionRoot); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("winacl: create %s: %w", pl.SessionRoot, err)
	}
	dir := pl.SessionRoot + `\` + id
	s := &Session{ID: id, Dir: dir, SID: deriveSID(sessionSIDDomain, dir), WriteRoots: pl.WriteRoots, m: m}
	if err := m.sys.WriteFile(dir+markerSuffix, m.marker(pl)); err != nil {
		return nil, fmt.Errorf("winacl: write session marker %s: %w", dir+markerSuffix, err)
	}
	if err := m.sys.MkdirPrivate(dir); err != nil {
		return nil, errors.Join(fmt.Errorf("winacl: create private temp dir %s: %w", dir, err), m.removeSession(dir, nil))
	}
	if err := m.sys.AddACE(dir, ACE{SID: s.SID, Access: AccessModify, Inherit: true}); err != nil {
		return nil, errors.Join(fmt.Errorf("winacl: grant session SID on %s: %w", dir, err), m.removeSession(dir, nil))
	}
	if !pl.AllowNetwork {
		// Beside the dir, in the private session root: the command can run
		// the stub but not rewrite it.
		if err := m.sys.WriteFile(dir+sshStubSuffix, []byte(sshStub)); err != nil {
			return nil, errors.Join(fmt.Errorf("winacl: write %s: %w", dir+sshStubSuffix, err), m.removeSession(dir, nil))
		}
		s.offline = true
	}
	return s, nil
}

// offlineProxy is a proxy nothing listens on: the discard port of the
// loopback address, which Windows does not serve.
const offlineProxy = "http://127.0.0.1:9"

// sshStub is the batch file GIT_SSH_COMMAND names: it fails every ssh.
const sshStub = "@echo sandbox-local: network access is disabled for this command (ssh refused) 1>&2\r\n@exit /b 255\r\n"

// OfflineEnv returns the soft offline environment of a session whose
// policy denies network, nil otherwise: every proxy variable (both cases,
// npm's too) at a local port nothing listens on, NO_PROXY emptied so no
// host bypasses it, and GIT_SSH_COMMAND at a stub that fails. Clients that
// honour them fail fast instead of reaching the network; anything that
// ignores them (raw sockets, a client with its own settings) is not
// stopped: the network stays a gap.
func (s *Session) OfflineEnv() []string {
	if !s.offline {
		return nil
	}
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY", "http_proxy", "https_proxy", "all_proxy", "ftp_proxy",
		"npm_config_proxy", "npm_config_https_proxy"} {
		env = append(env, k+"="+offlineProxy)
	}
	env = append(env, "NO_PROXY=", "no_proxy=")
	// Git runs GIT_SSH_COMMAND through its shell: a quoted path with
	// forward slashes survives spaces in the temp root.
	return append(env, `GIT_SSH_COMMAND="`+strings.ReplaceAll(s.SSHStub(), `\`, "/")+`"`)
}

// SSHStub returns the failing ssh stub of an offline session ("" when the
// network is allowed).
func (s *Session) SSHStub() string {
	if !s.offline {
		return ""
	}
	return s.Dir + sshStubSuffix
}

func (m *Manager) marker(pl *Plan) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\npid %d\nstart %d\n", markerVersion, m.self.PID, m.self.Start)
	for _, r := range pl.WriteRoots {
		fmt.Fprintf(&b, "root %s\n", r.Path)
	}
	return b.Bytes()
}

// WriteSIDs returns the write SIDs of the session's write roots, in order.
func (s *Session) writeSIDs() []SID {
	out := make([]SID, len(s.WriteRoots))
	for i, r := range s.WriteRoots {
		out[i] = r.SID
	}
	return out
}

// StatusFile returns where the launcher records a failure of this session's
// command (see RunWith); the command cannot write there.
func (s *Session) StatusFile() string { return statusFile(s.Dir) }

func statusFile(dir string) string { return dir + statusSuffix }

// TempEnv returns env with TMP, TEMP and TMPDIR, in any case (names are
// case-insensitive on Windows), pointing at dir only.
func TempEnv(env []string, dir string) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "TMP", "TEMP", "TMPDIR":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "TMP="+dir, "TEMP="+dir, "TMPDIR="+dir)
}

// LaunchSpec returns the spec the launcher runs argv with in dir (see
// NewLaunchSpec). env should come from Env.
func (s *Session) LaunchSpec(argv []string, dir string, env []string) (LaunchSpec, error) {
	roots := make([]string, len(s.WriteRoots))
	for i, r := range s.WriteRoots {
		roots[i] = r.Path
	}
	return NewLaunchSpec(roots, s.Dir, argv, dir, env)
}

// LauncherFailure reports whether the launcher recorded that it failed
// before or while running the command, and why. The command cannot write
// the status file, so unlike its stderr this cannot be forged; a provider
// classifies exit 125 as a runner failure only when this says so. Call it
// before Cleanup, which removes the file.
func (s *Session) launcherFailure() (reason string, failed bool, err error) {
	b, err := s.m.sys.ReadFile(s.StatusFile())
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("winacl: read launcher status: %w", err)
	}
	reason, failed = parseStatus(b)
	return reason, failed, nil
}

// Cleanup checks the protected paths (CheckProtected, if not called yet;
// changes are returned as an error matching ErrProtectedChanged until a
// Cleanup succeeds),
// then removes the session's private temp dir (and with it the session
// ACE; it is revoked explicitly only if the removal fails), status file and
// marker. The standing ACEs stay: they are what makes the next run
// fast. If the dir cannot be removed the marker is kept, so a later
// Manager.Recover retries once this process is gone. Call it after the
// command exited (the launcher's job kills what it left running). Calling
// Cleanup again after it succeeded does nothing.
func (s *Session) Cleanup() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cleaned {
		return nil
	}
	changed := changesError(s.checkLocked())
	if err := s.m.removeSession(s.Dir, nil); err != nil {
		return errors.Join(changed, err)
	}
	s.cleaned = true
	return changed
}

// removeSession removes dir, then its status file, the leftovers named
// extra and, last, its marker. The session ACE goes with the directory, so
// it is revoked only when the removal fails (a file still open, a file the
// user cannot delete): rewriting the DACL of every leftover object is what
// costs tens of seconds per command on a large temp dir, and a removal that
// succeeds needs none of it. After a failed removal the ACE is revoked from
// what is left, so the leftovers no longer grant the session SID anything
// (it is random per session, so no later token holds it either).
func (m *Manager) removeSession(dir string, extra []string) error {
	if err := m.sys.RemoveAll(dir); err != nil {
		errs := []error{fmt.Errorf("winacl: remove private temp dir %s: %w", dir, err)}
		sid := deriveSID(sessionSIDDomain, dir)
		if rerr := m.sys.RevokeACE(dir, sid); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("winacl: revoke session ACE on %s: %w", dir, rerr))
		}
		return errors.Join(errs...)
	}
	var errs []error
	for _, f := range append(append([]string{statusFile(dir), dir + sshStubSuffix}, extra...), dir+markerSuffix) {
		if err := m.sys.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("winacl: remove %s: %w", f, err))
		}
	}
	return errors.Join(errs...)
}

// Recovery reports what Manager.Recover did.
type Recovery struct {
	// Removed are the ids of dead sessions whose dirs and ACEs were removed.
	Removed []string
	// Live are the ids of sessions whose owner is alive (or cannot be
	// proven dead), left alone.
	Live []string
}

// Recover removes the private temp dirs, session ACEs, markers and status
// files left by sessions whose owner process died (a crash before Cleanup),
// and leaves every other session alone. A session is alive while its
// marker's pid runs with the marker's start time (pid reuse changes the
// start time); a marker of another format version, or an owner whose state
// cannot be read, counts as alive. A dir without a marker is dead (the
// marker is written before the dir and removed after it). The provider calls
// Recover once at start; other processes' sessions are safe meanwhile.
func (m *Manager) Recover() (Recovery, error) {
	var rec Recovery
	root := winPath{}
	if wp, err := parsePath(m.tempRoot, rejectStreams); err == nil {
		root = winPath{root: wp.root, comps: append(wp.comps, SessionDirName)}
	}
	sessRoot := root.String()
	names, err := m.sys.ReadDir(sessRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, fmt.Errorf("winacl: list %s: %w", sessRoot, err)
	}
	type entries struct {
		dir, marker, status bool
		other               []string
	}
	groups := map[string]*entries{}
	var order []string
	for _, name := range names {
		if len(name) < sessionIDLen || !isSessionID(name[:sessionIDLen]) {
			continue
		}
		id, rest := name[:sessionIDLen], name[sessionIDLen:]
		g := groups[id]
		if g == nil {
			g = &entries{}
			groups[id] = g
			order = append(order, id)
		}
		switch rest {
		case "":
			g.dir = true
		case markerSuffix:
			g.marker = true
		case statusSuffix:
			g.status = true
		default:
			g.other = append(g.other, sessRoot+`\`+name)
		}
	}
	var errs []error
	for _, id := range order {
		g := groups[id]
		dir := sessRoot + `\` + id
		if !g.marker && !g.dir && !g.status {
			continue // only a marker being written right now, or its leftover
		}
		alive, err := m.ownerAlive(dir + markerSuffix)
		if err != nil {
			errs = append(errs, err)
		}
		if alive {
			rec.Live = append(rec.Live, id)
			continue
		}
		if err := m.removeSession(dir, g.other); err != nil {
			errs = append(errs, err)
			continue
		}
		rec.Removed = append(rec.Removed, id)
	}
	return rec, errors.Join(errs...)
}

// ownerAlive reads a session marker and asks whether its owner runs.
func (m *Manager) ownerAlive(marker string) (bool, error) {
	b, err := m.sys.ReadFile(marker)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("winacl: read session marker %s: %w", marker, err)
	}
	owner, known, ok := parseMarker(b)
	if !known {
		return true, nil // another version's marker: not ours to judge
	}
	if !ok {
		return false, nil
	}
	if owner == m.self {
		return true, nil
	}
	start, err := m.sys.StartTime(owner.PID)
	if errors.Is(err, ErrProcessGone) {
		return false, nil
	}
	if err != nil {
		return true, nil // cannot tell: leave it
	}
	return start == owner.Start, nil
}

// parseMarker parses a session marker. known is false for a marker of
// another version; ok is false for a v1 marker that does not parse.
func parseMarker(b []byte) (owner ProcessID, known, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	if !sc.Scan() {
		return owner, true, false
	}
	first := sc.Text()
	if first != markerVersion {
		return owner, !strings.HasPrefix(first, markerMagic), false
	}
	var havePID, haveStart bool
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "pid":
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return owner, true, false
			}
			owner.PID, havePID = uint32(n), true
		case "start":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return owner, true, false
			}
			owner.Start, haveStart = n, true
		}
	}
	return owner, true, havePID && haveStart
}

func isSessionID(s string) bool {
	if len(s) != sessionIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// formatStatus is the content of a launcher status file.
func formatStatus(reason string) []byte {
	return []byte(statusMagic + "\n" + statusFatal + vocab.OneLine(reason) + "\n")
}

func parseStatus(b []byte) (reason string, failed bool) {
	first, rest, _ := strings.Cut(string(b), "\n")
	if first != statusMagic {
		return "", false
	}
	line, _, _ := strings.Cut(rest, "\n")
	if !strings.HasPrefix(line, statusFatal) {
		return "", false
	}
	return strings.TrimPrefix(line, statusFatal), true
}

// ReadStatusFile reports whether the launcher status file at path (the
// StatusFile of a LaunchSpec, which a provider's runner-failure rule names)
// records a launcher failure, and its reason. It reads the host's file
// system, for a consumer that holds only the path and classifies a finished
// run; a Session reads its own with LauncherFailure. A missing or
// unreadable file, or any other content, records nothing.
func ReadStatusFile(path string) (reason string, failed bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return parseStatus(b)
}
