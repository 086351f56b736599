// Package llrights is the one definition of the Landlock rights the
// landlock runner handles and grants, and of the device files it leaves
// usable: the Go launcher (package launcher's plan) and the C launcher
// (launcher/landlock_run_linux.c, through the generated
// launcher/landlock_rights_linux.h) both read them from here.
package llrights

import (
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// The Landlock rights, built from named pieces. go-landlock's RWDirs is not
// used on purpose: it grants make_char and make_block, and a root caller
// could then create a node for the host's disk inside the workspace.
const (
	ReadFile  = ll.AccessFSExecute | ll.AccessFSReadFile
	ReadDir   = ll.AccessFSReadDir
	ReadAll   = ReadFile | ReadDir
	WriteFile = ll.AccessFSWriteFile | ll.AccessFSTruncate
	WriteDir  = ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir |
		ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeSym | ll.AccessFSRefer
	// WritableTree is what a writable root (and the temp dir) gets.
	WritableTree = ReadAll | WriteFile | WriteDir
	// DeviceRW is what the /dev/null-like devices and ttys get.
	DeviceRW = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	// HandledFS is every right the ruleset handles, so everything not
	// granted is denied; make_char and make_block are handled and never
	// granted.
	HandledFS = ReadAll | WriteFile | WriteDir | ll.AccessFSMakeChar | ll.AccessFSMakeBlock | ll.AccessFSIoctlDev
	// FileRights are the rights that apply to a file itself; the others
	// only to directories (and the kernel refuses them on a file).
	FileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate |
		ll.AccessFSIoctlDev | ll.AccessFSResolveUnix
	// ResolveUnix is the one right that lets a connect or sendmsg reach a
	// pathname UNIX socket (handled under network deny with allowed
	// sockets).
	ResolveUnix = ll.AccessFSResolveUnix
	// NetTCP is the network rights handled under network deny; ConnectTCP
	// is granted on the allowed ports.
	NetTCP     = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	ConnectTCP = ll.AccessNetConnectTCP
	// ScopeSignal is always scoped; ScopeAbstractUnix under network deny.
	ScopeSignal       = ll.ScopeSignal
	ScopeAbstractUnix = ll.ScopeAbstractUnixSocket
)

// Devices are the device files every landlock launcher leaves usable,
// read-write. The rest of /dev (disks, /dev/shm, which the host shares,
// and the user's other terminals under /dev/pts) is neither readable nor
// writable: of /dev/pts only the terminals the command was given are
// granted. A pty the command opens itself through /dev/ptmx is reached
// with TIOCGPTPEER on its master, not by path.
var Devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// FSRightsOf returns the filesystem rights a kernel of Landlock ABI abi
// knows: the handled set go-landlock's best effort keeps, so a rule never
// asks for a right the ruleset does not handle. It is read from
// go-landlock's own table (its V1... configurations), the one that decides
// what a ruleset handles; vocab's levels are checked against it (package
// launcher's TestLandlockLevelsMatchGoLandlock).
func FSRightsOf(abi int) uint64 {
	if abi < 1 {
		return 0
	}
	return uint64(Versions[min(abi, len(Versions))-1].HandledAccessFS)
}

// Versions are go-landlock's configurations for ABI 1, 2...: each handles
// every right its ABI knows.
var Versions = []landlock.Config{
	landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11,
}
