//go:build cgo

// This file is the one definition of the launchers' seccomp filters. The
// generator (main_linux.go) compiles it with libseccomp, for every Key and
// architecture, into the programs package seccompfilter embeds; the
// provider picks one per wrap and hands it to the launcher in its argv
// (vocab's -seccomp): the namespaces launcher's stage 2 is C and loads it
// with seccomp(2), and the landlock launcher loads it with
// InstallListener, so nothing compiles a filter at run time.
package main

import (
	"fmt"
	"slices"

	"github.com/bo-agent/sandbox-local/internal/metarules"
	"github.com/bo-agent/sandbox-local/internal/seccompfilter/key"
	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// The definition's names for package key's.
type (
	programKey = key.Key
	Profile    = key.Profile
)

const (
	Landlock   = key.Landlock
	Namespaces = key.Namespaces
)

// allowedFamilies are the socket families socket(2) may create under
// network deny:
//
//   - namespaces: IP and netlink, which the sandbox's own network namespace
//     holds in (it has only its own loopback). Every other family is
//     refused: UNIX sockets reach the host's daemons through the file
//     system, vsock and the like are not namespaced at all.
//   - landlock: none, or IP when the spec names loopback ports the command
//     may connect to (the domain proxy's, allowed local ports): then only
//     TCP stream sockets (addTCPOnlyRules), whose connects Landlock limits
//     to those ports.
//   - both: UNIX when the spec allows some UNIX sockets by path; the
//     launcher then confines their lookups with Landlock where the kernel
//     can (vocab.UnixSocketGaps says where it cannot).
func allowedFamilies(k programKey) map[int]bool {
	allowed := map[int]bool{}
	if k.Profile == Namespaces {
		allowed[unix.AF_INET], allowed[unix.AF_INET6], allowed[unix.AF_NETLINK] = true, true, true
	}
	if k.TCPPorts {
		allowed[unix.AF_INET], allowed[unix.AF_INET6] = true, true
	}
	if k.UnixSockets {
		allowed[unix.AF_UNIX] = true
	}
	return allowed
}

// addTCPOnlyRules narrows the IP sockets the landlock profile allows for
// its TCP ports to what Landlock confines, TCP connect: every other socket
// type (UDP, so DNS to an outside resolver too; raw; ICMP) and every
// protocol but TCP (MPTCP, SCTP) is refused; listen is refused (an unbound
// socket would autobind a port on every interface, which no Landlock rule
// covers); and so is a send with MSG_FASTOPEN, which connects without
// connect(2). The type is compared on its low four bits (SOCK_TYPE_MASK);
// the kernel ignores the flags above them.
func addTCPOnlyRules(add func(string, seccomp.ScmpAction, ...seccomp.ScmpCondition) error,
	cond func(uint, seccomp.ScmpCompareOp, ...uint64) seccomp.ScmpCondition) error {
	for _, fam := range []uint64{unix.AF_INET, unix.AF_INET6} {
		isFam := cond(0, seccomp.CompareEqual, fam)
		for t := uint64(0); t < 16; t++ {
			if t == unix.SOCK_STREAM {
				continue
			}
			if err := add("socket", eacces, isFam, cond(1, seccomp.CompareMaskedEqual, 0xf, t)); err != nil {
				return err
			}
		}
		// Protocol 0 (the default, TCP) and IPPROTO_TCP only.
		if err := add("socket", eacces, isFam, cond(2, seccomp.CompareGreater, unix.IPPROTO_TCP)); err != nil {
			return err
		}
		for proto := uint64(1); proto < unix.IPPROTO_TCP; proto++ {
			if err := add("socket", eacces, isFam, cond(2, seccomp.CompareEqual, proto)); err != nil {
				return err
			}
		}
	}
	if err := add("listen", eacces); err != nil {
		return err
	}
	for _, m := range []struct {
		name string
		arg  uint
	}{{"sendto", 3}, {"sendmsg", 2}, {"sendmmsg", 3}} {
		if err := add(m.name, eacces, cond(m.arg, seccomp.CompareMaskedEqual, unix.MSG_FASTOPEN, unix.MSG_FASTOPEN)); err != nil {
			return err
		}
	}
	return nil
}

// denySocketFamilies refuses socket(2) for every family but allowed: one
// rule per family below AF_MAX, and one for AF_MAX and above (which also
// catches a family with high bits set, that the kernel would truncate).
func denySocketFamilies(f *seccomp.ScmpFilter, act seccomp.ScmpAction, allowed map[int]bool) error {
	sc, err := seccomp.GetSyscallFromName("socket")
	if err != nil {
		return fmt.Errorf("seccomp: socket: %w", err)
	}
	rule := func(op seccomp.ScmpCompareOp, v uint64) error {
		c, err := seccomp.MakeCondition(0, op, v)
		if err == nil {
			err = f.AddRuleConditional(sc, act, []seccomp.ScmpCondition{c})
		}
		if err != nil {
			return fmt.Errorf("seccomp: socket family rule: %w", err)
		}
		return nil
	}
	for fam := 0; fam < unix.AF_MAX; fam++ {
		if !allowed[fam] {
			if err := rule(seccomp.CompareEqual, uint64(fam)); err != nil {
				return err
			}
		}
	}
	return rule(seccomp.CompareGreaterEqual, unix.AF_MAX)
}

// namespaceDenied are refused (EPERM) under both runners: what only
// matters with capabilities (which the command does not have, but the
// kernel's own checks are not the only line), kernel keyrings (Kerberos
// caches, cached passphrases), BPF and perf, and file handles.
var namespaceDenied = []string{
	"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
	"move_mount", "open_tree", "mount_setattr", "setns", "keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "init_module", "finit_module", "delete_module", "kexec_load",
	"kexec_file_load", "open_by_handle_at", "name_to_handle_at", "swapon", "swapoff", "reboot",
	"syslog", "acct", "quotactl", "userfaultfd", "iopl", "ioperm",
}

// hostIPC are refused (EACCES) under the landlock profile: POSIX message
// queues and System V IPC live in the IPC namespace, which the landlock
// runner shares with the host (the namespaces runner has one of its own).
// An object the command made would outlive it (a System V segment holds
// its memory with no process attached), and with the others the command
// would reach the user's own objects outside the sandbox: attach to
// another program's shared memory, read or send on its queues, remove
// them. So every call that names an object is refused, not only creating
// one; shmdt, which only detaches a mapping, is left.
var hostIPC = []string{
	"mq_open", "mq_unlink",
	"shmget", "shmat", "shmctl",
	"semget", "semop", "semtimedop", "semctl",
	"msgget", "msgsnd", "msgrcv", "msgctl",
}

// build builds the launcher's filter: everything is allowed except
//
//   - in every mode: ioctl TIOCSTI and TIOCLINUX (pushing keystrokes into
//     the controlling terminal, which runs them after the sandbox exits);
//   - under network deny: socket(2) of every family, UNIX included unless
//     the spec allows UNIX sockets by path (a UNIX socket reaches host
//     daemons: D-Bus and systemd --user can start processes outside the
//     sandbox, ssh-agent signs with the user's keys, Docker's socket is
//     root), and io_uring, whose socket and connect operations never pass
//     through the socket syscalls. socketpair(2) stays allowed: it
//     connects nothing outside the process tree.
//
// Both also refuse (namespaceDenied) mounts, new user namespaces (where
// capabilities come back), entering other namespaces, kernel keyrings,
// BPF, perf, module and kexec loading, and file handles
// (open_by_handle_at walks past any mount). Under network deny the
// namespaces profile allows IP and netlink sockets, which its network
// namespace holds in; the landlock profile allows no socket at all. The
// landlock profile refuses the host's IPC objects (hostIPC).
//
// Only the target architecture is allowed (arch, which need not be the
// host's: libseccomp translates each rule's system call by name): a
// syscall through another table (int 0x80, x32 on amd64, AArch32 on
// arm64) kills the process, so the 32-bit socketcall(2) cannot be used to
// go around the rules. The rules on system calls libseccomp does not know
// are byNumber's, checked ahead of this filter's program.
func build(k programKey, arch seccomp.ScmpArch) (*seccomp.ScmpFilter, error) {
	f, err := seccomp.NewFilter(seccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("seccomp: new filter: %w", err)
	}
	if err := targetArch(f, arch); err != nil {
		f.Release()
		return nil, err
	}
	if err := addRules(f, k); err != nil {
		f.Release()
		return nil, err
	}
	return f, nil
}

var (
	eperm  = seccomp.ActErrno.SetReturnCode(int16(unix.EPERM))
	eacces = seccomp.ActErrno.SetReturnCode(int16(unix.EACCES))
	enosys = seccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS))
	ebusy  = seccomp.ActErrno.SetReturnCode(int16(unix.EBUSY))
)

// targetArch makes arch the filter's only architecture.
func targetArch(f *seccomp.ScmpFilter, arch seccomp.ScmpArch) error {
	native, err := seccomp.GetNativeArch()
	if err != nil {
		return fmt.Errorf("seccomp: native architecture: %w", err)
	}
	if arch == native {
		return nil
	}
	if err := f.AddArch(arch); err != nil {
		return fmt.Errorf("seccomp: add architecture %v: %w", arch, err)
	}
	if err := f.RemoveArch(native); err != nil {
		return fmt.Errorf("seccomp: remove architecture %v: %w", native, err)
	}
	return nil
}

// addRules fills f; see build for what and why. k is all it reads: one
// program is generated per key (and architecture).
func addRules(f *seccomp.ScmpFilter, k programKey) error {
	if err := f.SetBadArchAction(seccomp.ActKillProcess); err != nil {
		return fmt.Errorf("seccomp: bad-arch action: %w", err)
	}
	if err := f.SetNoNewPrivsBit(true); err != nil {
		return fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	add := func(name string, act seccomp.ScmpAction, conds ...seccomp.ScmpCondition) error {
		sc, err := seccomp.GetSyscallFromName(name)
		if err != nil {
			return fmt.Errorf("seccomp: %s: %w", name, err)
		}
		if len(conds) == 0 {
			err = f.AddRule(sc, act)
		} else {
			err = f.AddRuleConditional(sc, act, conds)
		}
		if err != nil {
			return fmt.Errorf("seccomp: %s rule: %w", name, err)
		}
		return nil
	}
	cond := func(arg uint, op seccomp.ScmpCompareOp, values ...uint64) seccomp.ScmpCondition {
		c, err := seccomp.MakeCondition(arg, op, values...)
		if err != nil {
			// Only reachable with an invalid operator, which the calls below
			// never pass; the rule then fails to add and says so.
			return seccomp.ScmpCondition{}
		}
		return c
	}
	for _, req := range []uint64{unix.TIOCSTI, unix.TIOCLINUX} {
		// The request is compared on its low 32 bits: the kernel reads it as
		// an unsigned int, so high bits set by a caller must not hide it.
		if err := add("ioctl", eperm, cond(1, seccomp.CompareMaskedEqual, 0xffffffff, req)); err != nil {
			return err
		}
	}
	// io_uring in every mode: its operations (sockets, connect, openat
	// with a mode, setxattr) never pass through the system calls this
	// filter inspects.
	for _, name := range []string{"io_uring_setup", "io_uring_enter", "io_uring_register"} {
		if err := add(name, eacces); err != nil {
			return err
		}
	}
	if k.Guard {
		if err := addGuardRules(add, cond); err != nil {
			return err
		}
	}
	if err := addModeRules(f, k.Profile, add, cond); err != nil {
		return err
	}
	if k.TCPPorts {
		if err := addTCPOnlyRules(add, cond); err != nil {
			return err
		}
	}
	if !k.AllowNetwork {
		if allowed := allowedFamilies(k); len(allowed) > 0 {
			if err := denySocketFamilies(f, eacces, allowed); err != nil {
				return err
			}
		} else if err := add("socket", eacces); err != nil {
			return err
		}
	}
	for _, name := range namespaceDenied {
		if err := add(name, eperm); err != nil {
			return err
		}
	}
	if k.Profile == Landlock {
		for _, name := range hostIPC {
			if err := add(name, eacces); err != nil {
				return err
			}
		}
	}
	// Calls that act on another process by pid, which Landlock does not
	// scope: resource limits (prlimit64 can give the user's editor a
	// one-byte file-size limit), priorities, CPU affinity, scheduling, I/O
	// priority. Each is allowed only on the caller itself (pid or who 0,
	// and for setpriority and ioprio_set only the single-process form).
	for _, r := range []struct {
		name string
		arg  uint
	}{
		{"prlimit64", 0}, {"sched_setaffinity", 0}, {"sched_setscheduler", 0},
		{"sched_setparam", 0}, {"sched_setattr", 0}, {"setpriority", 1}, {"ioprio_set", 1},
	} {
		if err := add(r.name, eperm, cond(r.arg, seccomp.CompareNotEqual, 0)); err != nil {
			return err
		}
	}
	const prioProcess, ioprioWhoProcess = 0, 1
	if err := add("setpriority", eperm, cond(0, seccomp.CompareNotEqual, prioProcess)); err != nil {
		return err
	}
	if err := add("ioprio_set", eperm, cond(0, seccomp.CompareNotEqual, ioprioWhoProcess)); err != nil {
		return err
	}
	// New user namespaces (where capabilities come back) through unshare
	// and clone; clone3 hides its flags in memory, so it answers ENOSYS and
	// the C library falls back to clone.
	newuser := cond(0, seccomp.CompareMaskedEqual, unix.CLONE_NEWUSER, unix.CLONE_NEWUSER)
	for _, name := range []string{"unshare", "clone"} {
		if err := add(name, eperm, newuser); err != nil {
			return err
		}
	}
	return add("clone3", enosys)
}

// Notified are the calls the landlock profile hands to the launcher's
// supervisor (SECCOMP_RET_USER_NOTIF), besides fchmodat2: the ones that
// change a file's metadata, which Landlock cannot confine. The supervisor
// makes them itself beneath a writable root and refuses them elsewhere
// (launcher/landlock_metadata_linux.c), as it does the inode-flag ioctls
// (notifiedIoctls). setxattrat and removexattrat, which pass their
// arguments in a struct, answer ENOSYS (the C library falls back).
var Notified = []string{
	"chmod", "fchmod", "fchmodat",
	"chown", "fchown", "lchown", "fchownat",
	"utime", "utimes", "futimesat", "utimensat",
	"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
}

// notifiedIoctls are the ioctl requests that change an inode's flags
// (chattr), which the landlock profile hands to the supervisor too: the
// native FS_IOC_SETFLAGS, its 32-bit number (the same call), and
// FS_IOC_FSSETXATTR. refusedIoctls make a file the user owns permanently
// read-only or encrypted (fs-verity, an encryption policy on an empty
// directory), outside the writable roots as well: refused under landlock.
var (
	notifiedIoctls = []uint64{metarules.IocSetflags, metarules.Ioc32Setflags, metarules.IocFssetxattr}
	refusedIoctls  = []uint64{0x40806685, 0x800c6613}
)

// sysSetxattrat and sysRemovexattrat are Linux 6.13's, sysOpenTreeAttr
// 6.15's and sysFileSetattr 6.17's, the same numbers on amd64 and arm64;
// libseccomp (2.5.4) does not know their names, so it can place a rule on
// them for the host's architecture only: they are byNumber's.
const (
	sysSetxattrat, sysRemovexattrat = 463, 466
	sysOpenTreeAttr                 = 467
	sysFileSetattr                  = 469
)

// numberRule is an unconditional rule on a system call by its number on
// the target architecture: ret is the filter's answer (SECCOMP_RET_*).
type numberRule struct {
	nr  uint32
	ret uint32
}

// byNumber are the rules on system calls libseccomp does not know by
// name. libseccomp adds a rule by number for the host's architecture only
// (for another it translates the number through the name), so these are
// checked by a few instructions ahead of libseccomp's program, for the
// target architecture only; every other call goes on to that program
// unchanged. On either profile nothing else in the filter matches these
// calls.
func byNumber(k programKey) []numberRule {
	enosys := uint32(unix.SECCOMP_RET_ERRNO | unix.ENOSYS&unix.SECCOMP_RET_DATA)
	eperm := uint32(unix.SECCOMP_RET_ERRNO | unix.EPERM&unix.SECCOMP_RET_DATA)
	// open_tree_attr is open_tree with mount attributes: refused with the
	// other mount calls (namespaceDenied).
	rules := []numberRule{{sysOpenTreeAttr, eperm}}
	if k.Profile != Landlock {
		return rules
	}
	// setxattrat and removexattrat pass their arguments in a struct the
	// supervisor does not read: ENOSYS (the C library falls back to the
	// notified setxattr family). So does file_setattr, which sets the
	// inode flags FS_IOC_FSSETXATTR sets (chattr uses the ioctl, which
	// the supervisor confines): it changed flags of files outside the
	// writable roots.
	return append(rules, numberRule{sysSetxattrat, enosys}, numberRule{sysRemovexattrat, enosys}, numberRule{sysFileSetattr, enosys})
}

// modeArgs are the system calls that set a file's mode, with the index of
// their mode argument: the ones that change it, and the ones that create a
// file with it (mknod makes regular files too). mkdir is not among them: a
// setgid directory only passes its group on, and setuid means nothing on a
// directory.
var modeArgs = []struct {
	name string
	arg  uint
}{
	{"chmod", 1}, {"fchmod", 1}, {"fchmodat", 2}, {"creat", 1},
	{"mknod", 1}, {"mknodat", 2},
}

// openModeArgs are the opens, with the index of their flags and mode
// arguments: the mode counts only with O_CREAT or O_TMPFILE, and the
// kernel ignores it otherwise (a caller may pass anything there).
var openModeArgs = []struct {
	name        string
	flags, mode uint
}{
	{"open", 1, 2}, {"openat", 2, 3},
}

// oTmpfileBit is O_TMPFILE without O_DIRECTORY (__O_TMPFILE), the bit that
// makes an open create.
const oTmpfileBit = unix.O_TMPFILE &^ unix.O_DIRECTORY

// sysFchmodat2 is fchmodat2(2) (Linux 6.6), the same number on every
// architecture (it is newer than the unified table). Upstream libseccomp
// 2.5.4 does not know its name, Debian bookworm's 2.5.4-1+deb12u1 does:
// the generator needs the name for the architecture it does not run on
// (libseccomp translates the number through it).
const sysFchmodat2 = 452

// addModeRules refuses (EPERM) every mode with S_ISUID or S_ISGID: a
// command must leave no setuid or setgid file behind, which a person (or,
// for a root caller's files, anyone) would later run with the owner's
// rights. The bits are tested with masked compares on the argument as
// given, so high bits a caller sets (the kernel reads a umode_t) cannot
// hide them. openat2 carries its mode in a struct the filter cannot read:
// it answers ENOSYS, and the C library and Go fall back to openat.
// File capabilities need CAP_SETFCAP, which the command does not have
// (every capability set is emptied, with no_new_privs).
func addModeRules(f *seccomp.ScmpFilter, profile Profile, add func(string, seccomp.ScmpAction, ...seccomp.ScmpCondition) error,
	cond func(uint, seccomp.ScmpCompareOp, ...uint64) seccomp.ScmpCondition) error {
	if profile == Landlock {
		// Landlock governs no metadata: the launcher's supervisor makes
		// these calls itself, beneath a writable root only, and refuses
		// the setuid and setgid bits there (launcher/landlock_metadata_linux.c).
		// An unconditional rule would override the mode rules below.
		for _, name := range Notified {
			if err := add(name, seccomp.ActNotify); err != nil {
				return err
			}
		}
		if err := f.AddRule(seccomp.ScmpSyscall(sysFchmodat2), seccomp.ActNotify); err != nil {
			return fmt.Errorf("seccomp: fchmodat2 rule: %w", err)
		}
		// setxattrat and removexattrat: byNumber.
		for _, req := range notifiedIoctls {
			if err := add("ioctl", seccomp.ActNotify, cond(1, seccomp.CompareMaskedEqual, 0xffffffff, req)); err != nil {
				return err
			}
		}
		for _, req := range refusedIoctls {
			if err := add("ioctl", eperm, cond(1, seccomp.CompareMaskedEqual, 0xffffffff, req)); err != nil {
				return err
			}
		}
	}
	for _, bit := range []uint64{unix.S_ISUID, unix.S_ISGID} {
		for _, m := range modeArgs {
			if profile == Landlock && slices.Contains(Notified, m.name) {
				continue
			}
			if err := add(m.name, eperm, cond(m.arg, seccomp.CompareMaskedEqual, bit, bit)); err != nil {
				return err
			}
		}
		for _, m := range openModeArgs {
			for _, creating := range []uint64{unix.O_CREAT, oTmpfileBit} {
				if err := add(m.name, eperm, cond(m.flags, seccomp.CompareMaskedEqual, creating, creating),
					cond(m.mode, seccomp.CompareMaskedEqual, bit, bit)); err != nil {
					return err
				}
			}
		}
		if profile == Landlock {
			continue
		}
		if err := f.AddRuleConditional(seccomp.ScmpSyscall(sysFchmodat2), eperm,
			[]seccomp.ScmpCondition{cond(2, seccomp.CompareMaskedEqual, bit, bit)}); err != nil {
			return fmt.Errorf("seccomp: fchmodat2 rule: %w", err)
		}
	}
	return add("openat2", enosys)
}

// Creating are the calls that create a name, besides the opens with
// O_CREAT (openCreating): under the namespaces profile with guarded names
// (vocab.Spec.Guarded), each is handed to the launcher's guard
// (launcher/ns_guard_linux.c), which makes it itself and refuses creating
// a guarded name. An open with O_TMPFILE creates no name; linking it in
// afterwards is a linkat, handed over too.
var Creating = []string{"creat", "mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat",
	"link", "linkat", "rename", "renameat", "renameat2"}

// openCreating are the opens with the index of their flags argument: only
// those that can create or write (openWriting) are handed to the guard.
var openCreating = []struct {
	name  string
	flags uint
}{{"open", 1}, {"openat", 2}}

// openWriting are the open flags that hand an open to the guard, each
// alone: O_CREAT creates a name; O_WRONLY, O_RDWR and O_TRUNC write to
// one, which the guard refuses on a read-only or deny-read path whose
// bind a host process's rename detached. An open for reading alone goes
// straight to the kernel.
var openWriting = []uint64{unix.O_CREAT, unix.O_WRONLY, unix.O_RDWR, unix.O_TRUNC}

// Writing are the calls besides the opens that write to an existing name
// through its path: handed to the guard like the creating calls.
var Writing = []string{"truncate"}

// seccompFilterOp is SECCOMP_SET_MODE_FILTER, the seccomp(2) operation
// that loads a filter.
const seccompFilterOp = 1

// addGuardRules hands every call that can create a name, or write to one
// (Writing, openWriting), to the guard
// (SECCOMP_RET_USER_NOTIF). The kernel runs every filter of the chain and
// keeps the strongest action; between two that hand the call to user
// space, the newest filter's listener gets it. So a command that could
// load its own filter with a listener could answer CONTINUE to its own
// creates: seccomp(2) loading a filter with
// SECCOMP_FILTER_FLAG_NEW_LISTENER is refused (EBUSY, what the kernel
// answers itself only while the guard's listener is open). These rules
// are added before the setuid-mode rules on the same calls
// (addModeRules): added after, libseccomp refuses them (EEXIST); added
// before, they absorb those (its PFC export shows NOTIFY alone for creat,
// mknod* and the opens with O_CREAT), so the guard refuses the setuid and
// setgid modes at creation itself, with the same EPERM.
func addGuardRules(add func(string, seccomp.ScmpAction, ...seccomp.ScmpCondition) error,
	cond func(uint, seccomp.ScmpCompareOp, ...uint64) seccomp.ScmpCondition) error {
	for _, name := range append(slices.Clone(Creating), Writing...) {
		if err := add(name, seccomp.ActNotify); err != nil {
			return err
		}
	}
	for _, o := range openCreating {
		for _, flag := range openWriting {
			if err := add(o.name, seccomp.ActNotify, cond(o.flags, seccomp.CompareMaskedEqual, flag, flag)); err != nil {
				return err
			}
		}
	}
	return add("seccomp", ebusy, cond(0, seccomp.CompareEqual, seccompFilterOp),
		cond(1, seccomp.CompareMaskedEqual, seccompFlagNewListener, seccompFlagNewListener))
}

// seccompFlagNewListener is SECCOMP_FILTER_FLAG_NEW_LISTENER.
const seccompFlagNewListener = 1 << 3
