package winacl

import "errors"

// ErrInvalidPolicy is matched (errors.Is) by every error that rejects the
// caller's input rather than reporting a failure of the machine: a bad path,
// a write root that contains the temp root, too many write roots. The
// provider maps it to INVALID_POLICY. Each such error also matches its own
// sentinel below.
var ErrInvalidPolicy = errors.New("winacl: invalid policy")

// policyError is a sentinel that also matches ErrInvalidPolicy.
type policyError struct{ msg string }

func (e *policyError) Error() string { return e.msg }

// Is makes every policy sentinel match ErrInvalidPolicy too.
func (e *policyError) Is(target error) bool { return target == ErrInvalidPolicy }

var (
	// ErrBadPath: a path is empty, relative, drive-relative, holds a NUL or a
	// character NTFS forbids, uses stream syntax where a directory is meant,
	// or names a device rather than a file system object.
	ErrBadPath error = &policyError{"winacl: bad path"}

	// ErrContainsTempRoot: a write root is the platform temp root or contains
	// it. Its standing inheritable ACE would reach every private temp dir, so
	// it is refused before any ACL is read or changed.
	ErrContainsTempRoot error = &policyError{"winacl: write root is or contains the temp root"}

	// ErrInsideSessionRoot: a write root lies inside the directory that holds
	// the private temp dirs. Recovery would delete it, and its ACE would sit
	// inside another session's tree.
	ErrInsideSessionRoot error = &policyError{"winacl: write root is inside the private temp dirs"}

	// ErrVolumeRoot: a write root is a drive root or a share root. Its
	// inheritable ACE would propagate over the whole volume and is never
	// revoked.
	ErrVolumeRoot error = &policyError{"winacl: write root is a volume or share root"}

	// ErrTooManyWriteRoots: more than MaxWriteRoots distinct write roots
	// after nested ones are folded into the roots that contain them.
	ErrTooManyWriteRoots error = &policyError{"winacl: too many write roots"}

	// ErrRootProtected: a write root is a protected path or lies beneath
	// one; granting it would undo the protection.
	ErrRootProtected error = &policyError{"winacl: write root is inside a protected path"}

	// ErrMissingRoot: a write root does not exist (an ACE needs an object).
	ErrMissingRoot error = &policyError{"winacl: write root does not exist"}
)

// ErrProcessGone is returned (wrapped) by Processes.StartTime when no
// process with that id is running.
var ErrProcessGone = errors.New("winacl: no such process")

// errNotExecutable is wrapped by Win32.StartSuspended when the program
// exists but is not an executable image (exit 126, like env(1)).
var errNotExecutable = errors.New("not an executable image")
