// Package winacl is the Windows runner of sandbox-local: a write-restricted
// token, NTFS ACEs that say where its restricting SIDs may write, private
// temp dirs, and the winacl-run launcher that starts the command with that
// token in a kill-on-close job object.
//
// Everything that decides (paths, SIDs, the ACE plan, sessions, recovery,
// the launcher's sequence) is plain Go over two small interfaces, System
// (ACL, files, processes, 8.3 names) and Win32 (token, job, process), and is
// tested on any GOOS with fakes. NewSystem, NewWin32 and Run are the thin
// Windows layers (golang.org/x/sys/windows).
//
// # The provider
//
//	m, err := winacl.NewManager(winacl.Config{System: winacl.NewSystem()})
//	rec, err := m.Recover() // once, at provider start: dead sessions' dirs and ACEs go
//
//	// per Wrap (errors.Is(err, winacl.ErrInvalidPolicy) -> INVALID_POLICY)
//	s, err := m.Prepare(winacl.Request{
//		WriteRoots:       []string{workspace, extraRoot}, // empty in read-only mode
//		ReadOnlySubpaths: protected,                      // concrete paths, globs expanded
//		DenyRead:         denyRead,                       // reported as a gap only
//		AllowNetwork:     allow,                          // deny is reported as a gap
//	})
//	// launcher argv: s.WriteRoots[i].Path, s.Dir; environment: TMP, TEMP and TMPDIR at s.Dir
//	// plus s.OfflineEnv() (network denied: proxies at a dead port, no ssh)
//	// report: Enforcement partial, Gaps s.Gaps
//	// classify: exit 125 is a runner failure only if the status file s.StatusFile() records one
//	// after the run: s.CheckProtected() (what the command changed in the
//	// protected paths, restored where safe; deletes are not confined)
//	defer s.Cleanup() // removes the dir and with it the session ACE; standing ACEs stay
//
// # The launcher
//
//	spec, err := winacl.NewLaunchSpec(writeRoots, sessionDir, argv, dir, os.Environ())
//	code, err := winacl.Run(spec, os.Stderr)
//	// err (a *LaunchError): print the fatal line with err.Error(), exit vocab.FatalExit
//	// otherwise os.Exit(code): the command's own exit code, or 127/126
//
// # How writes are confined
//
// The command's token is CreateRestrictedToken(own token,
// DISABLE_MAX_PRIVILEGE|LUA_TOKEN|WRITE_RESTRICTED, restricting SIDs). For
// every write, Windows checks the ACL twice: once against the user's normal
// SIDs, once against the restricting SIDs only; both must grant. The
// restricting SIDs are RestrictingSIDs: one write SID per write root, the
// session SID, Everyone and the logon SID. The user's own SID is never among
// them, so what the user may write is writable only where an ACE grants one
// of those SIDs: a write root (standing ACE), the session's private temp dir
// (session ACE), or an object granting Everyone or the logon SID. Reads are
// not restricted at all (that is what WRITE_RESTRICTED means). The token's
// default DACL grants the user, SYSTEM and the session SID, so the pipes,
// processes and threads the command creates are usable by it.
//
// # SIDs
//
// WriteSID: S-1-5-21-A-B-C-D, A..D the first 128 bits of SHA-256 over a
// versioned domain prefix and the case-folded canonical path (see
// Canonicalize): deterministic per directory, whatever the spelling (case,
// `/` or `\`, `\\?\` and `\\?\UNC\` forms, \\localhost\C$, 8.3 names,
// trailing separators, `.` and `..`), distinct across directories.
// SessionSID: the same over another prefix and the session dir, whose name
// carries 128 random bits, so it is random per session and recomputable by
// the launcher from the dir alone.
//
// # Standing ACEs, session ACEs
//
// Each write root gets one standing, inheritable ACE for its write SID
// (AccessModify: the Windows "Modify" right, without FILE_DELETE_CHILD,
// WRITE_DAC or WRITE_OWNER; lacking FILE_DELETE_CHILD does not stop
// deletes, see Protected subpaths). Prepare reads each object's DACL once and adds
// the ACE only when it is absent; it is never re-applied and never revoked,
// so the slow propagation over a large tree happens once per workspace, ever,
// and a second run costs one DACL read per object.
//
// Each Prepare creates a session: `<temp root>\sandbox-local\<id>`, created
// with a protected DACL (the user and SYSTEM), plus a revocable inheritable
// ACE for the session SID. Beside it, in the same private directory, the
// marker `<id>.session` (written before the dir: owner pid and process start
// time) and, on a launcher failure, `<id>.status`. The confined command can
// write neither. Cleanup removes the dir (the session ACE goes with it; it
// is revoked from the leftovers only when the removal fails), then the
// status and the marker; Recover removes exactly the sessions whose owner is
// not running with the marker's start time.
//
// A write root equal to or containing the platform temp root fails with
// ErrContainsTempRoot before any ACL is read or changed (its inheritable ACE
// would reach every private temp dir); so do one inside the session root
// (ErrInsideSessionRoot), a drive or share root (ErrVolumeRoot), a root
// inside a protected path (ErrRootProtected) and more than MaxWriteRoots
// distinct roots (ErrTooManyWriteRoots). All match ErrInvalidPolicy.
//
// # Protected subpaths
//
// A protected path under a write root gets a standing inheritable deny ACE
// for that root's write SID (AccessDenyWrite), and every directory between
// the root and it a deny of DELETE. The deny stops writes of the data,
// attributes, EAs and streams through the restricted token; it binds only
// that token: the user's own git is unaffected. The ACL belongs to the
// object, so every name of it is covered: any case, 8.3 names, \\?\ forms
// and alternate data streams (config:evil, config::$DATA share the file's
// descriptor). Protector applies the same rules to names. A
// protected path that does not exist cannot carry an ACE: it is reported as
// a gap.
//
// Deletes are not confined (a gap, see Gaps). A write-restricted token's
// second access check, over the restricting SIDs, covers write rights only;
// DELETE on an object and FILE_DELETE_CHILD on its parent are decided by
// the user's own SIDs, and a user normally holds full control (with
// FILE_DELETE_CHILD) on everything under the profile. So the command can
// delete, or rename away, files outside the write roots, and can delete a
// protected file (.git\config) and create a new one through the parent's
// inherited grant; the deny of DELETE and the root grant's lack of
// FILE_DELETE_CHILD do not stop that (openai/codex issue 32915 reproduced
// it on Windows). Until a design that stops it is in place (see
// docs/runners/winacl.md), Prepare records each protected file's identity
// and content and Session.Cleanup checks them, restores what it safely can
// and reports the rest (ErrProtectedChanged).
//
// # Failure contract
//
// A Windows exit code is any 32-bit value, so no status can be reserved: the
// command can exit 125 too. The contract's rule still holds (exit 125 and the
// launcher's fatal line), but on Windows the per-wrap token in the fatal line
// is not secret: the launcher stays the command's parent, and a
// write-restricted child may read its parent's command line and memory
// (reads are not restricted). So the launcher also records every failure in
// the session's status file, which only the unrestricted user can write;
// Session.LauncherFailure reads it, and a provider treats exit 125 as a
// runner failure only when it is there.
//
// # UI
//
// The command's job carries every JOBOBJECT_BASIC_UI_RESTRICTIONS limit
// (UILimits: USER handles of processes outside the job, both clipboards,
// system parameters, display settings, the global atom table and with it
// DDE, desktops, ExitWindows), and the command runs on a private desktop
// of its session (DesktopName) whose DACL grants the user, SYSTEM, the
// session SID and the logon SID: its windows are not on the user's
// desktop, and it cannot message, hook or read the user's windows there.
// A token without a logon SID (SSH, service logons) runs without it among
// the restricting SIDs; the desktop's grant of the session SID stands in.
// A batch file (npm.cmd) runs through %SystemRoot%\System32\cmd.exe with
// cmd's quoting (composeBatchCommandLine), not the C runtime's.
//
// # Limits
//
// Enforcement is always partial; Gaps lists what is not confined (objects
// granting Everyone write, deletes and renames, hard links, SMB shares, FAT
// volumes, network, reading other processes). Callers resolve symlinks and
// junctions and expand ReadOnlySubpaths globs before Prepare; subst drives
// and UNC aliases other than \\localhost\X$ are not mapped back to their
// volume (the private dirs' protected DACLs keep inherited ACEs out of them
// regardless). MaxWriteRoots bounds the token's restricting SIDs.
package winacl
