package winacl

// The OS layer the plan runs on, cut into the few operations it needs so
// that every decision above it is plain Go tested on Linux with a fake.
// NewSystem (windows only) returns the real one. All paths passed in are
// canonical.

// ACL is the part of NTFS security the plan reads and changes.
type ACL interface {
	// HasACE reports whether the DACL of path holds an explicit (not
	// inherited) ACE of the same kind (allow or deny), for the same SID,
	// with the same inheritance (for a directory) and at least ace.Access.
	// It reads the DACL once. A missing path yields an error matching
	// fs.ErrNotExist.
	HasACE(path string, ace ACE) (bool, error)

	// AddACE merges ace into the explicit DACL of path, keeping canonical
	// ACE order and the DACL's protection; an inheritable ACE propagates to
	// the existing children (the slow part, done once per object ever).
	AddACE(path string, ace ACE) error

	// RevokeACE removes every explicit allow ACE for sid from the DACL of
	// path. A missing path yields an error matching fs.ErrNotExist.
	RevokeACE(path string, sid SID) error
}

// Files is the part of the file system the session bookkeeping uses.
type Files interface {
	// MkdirPrivate creates the directory path with a protected DACL (nothing
	// inherited from its parent) granting full access to the current user
	// and SYSTEM only. An existing path yields an error matching fs.ErrExist.
	MkdirPrivate(path string) error
	// RemoveAll removes path and everything beneath it; a missing path is
	// not an error.
	RemoveAll(path string) error
	// ReadDir returns the names in directory path. A missing directory
	// yields an error matching fs.ErrNotExist.
	ReadDir(path string) ([]string, error)
	// ReadFile returns the content of path (fs.ErrNotExist when missing).
	ReadFile(path string) ([]byte, error)
	// WriteFile atomically replaces path with data (written under a
	// temporary name in the same directory, then renamed).
	WriteFile(path string, data []byte) error
	// Remove removes the file path (fs.ErrNotExist when missing).
	Remove(path string) error
	// Identify returns the identity of the object at path without
	// following a final reparse point (GetFileInformationByHandle: volume
	// serial and file index, and the attributes). A missing path yields an
	// error matching fs.ErrNotExist.
	Identify(path string) (FileIdentity, error)
}

// FileIdentity tells one file system object from another: a file deleted
// and created again under the same name has another Index.
type FileIdentity struct {
	// Volume is the volume serial number.
	Volume uint32
	// Index is the file index (file ID) on that volume.
	Index uint64
	// Dir reports a directory.
	Dir bool
	// Reparse reports a reparse point (a symlink, a junction).
	Reparse bool
}

// ProcessID identifies a process across pid reuse: its pid and its creation
// time (a FILETIME, 100 ns units since 1601).
type ProcessID struct {
	// PID is the process id.
	PID uint32
	// Start is the process creation time.
	Start uint64
}

// Processes answers whether the owner of a session is still alive.
type Processes interface {
	// Self returns the identity of the current process.
	Self() (ProcessID, error)
	// StartTime returns the creation time of the running process pid, or an
	// error matching ErrProcessGone when no process pid is running.
	StartTime(pid uint32) (uint64, error)
}

// System is everything a Manager needs from the machine.
type System interface {
	PathResolver
	ACL
	Files
	Processes
	// TempRoot returns the platform temp root (os.TempDir: GetTempPath2W /
	// GetTempPathW, i.e. TMP, TEMP, USERPROFILE or the Windows dir).
	TempRoot() (string, error)
}
