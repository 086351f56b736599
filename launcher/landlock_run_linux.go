package launcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/bo-agent/sandbox-local/internal/hostinfo"
	"github.com/bo-agent/sandbox-local/internal/seccompfilter"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// landlockRun is the landlock-run launcher in Go: decode, check, confine
// this thread (Landlock, then seccomp), and exec the command in place.
// Every failure before exec is fatal: one signed line, exit 125. A cgo
// build runs landlock_run_linux.c instead, the same steps in C, and never
// starts the Go runtime; this one is the launcher of the Go chain
// (landlock_chain_linux.go: a build without cgo).
func landlockRun(args []string) {
	const name = vocab.LandlockRun
	// Everything from here to exec happens on one OS thread: the Landlock
	// domain and the seccomp filter are per thread and pass to the program
	// through execve from this thread.
	runtime.LockOSThread()
	token := takeToken()
	undoStartEnv()
	spec, err := vocab.Decode(args)
	if err != nil {
		fatal(name, token, "%v", err)
	}
	spec.Token = token
	if !supervised() {
		// Started some other way than as "landlock-run" by a glibc
		// binary (its C constructor forks the supervisor): nothing would
		// end what the command leaves behind.
		fatal(name, token, "started without its supervisor (the binary must be spawned with argv[0] %q, and built against glibc)", name)
	}
	abi := hostinfo.LandlockABI()
	if abi < 1 {
		fatal(name, token, "the kernel has no Landlock")
	}
	if spec.LandlockABI != abi {
		fatal(name, token, "%v", errABIMismatch(spec.LandlockABI, abi))
	}
	if spec.RequireFull {
		if gaps := vocab.LandlockGaps(abi, spec); len(gaps) > 0 {
			fatal(name, token, "full enforcement required, but: %s", vocab.JoinGaps(gaps))
		}
	}
	if spec.TempSize > 0 {
		fatal(name, token, "-tmpsize: landlock-run cannot bound the temp dir (it mounts nothing)")
	}
	if spec.Overlay != "" {
		fatal(name, token, "-overlay: landlock-run cannot show an overlay (it mounts nothing)")
	}
	for _, dir := range spec.Cgroups {
		if err := joinCgroup(dir); err != nil {
			fatal(name, token, "%v", err)
		}
	}
	if spec.Dir != "" {
		if err := enterDir(spec.Dir); err != nil {
			fatal(name, token, "%v", err)
		}
	}
	if err := leaveTerminal(); err != nil {
		fatal(name, token, "%v", err)
	}
	if err := confineLandlock(spec, abi); err != nil {
		fatal(name, token, "%v", err)
	}
	if spec.Probe {
		answerProbe(name, token, spec)
	}
	if spec.Notice != "" {
		fmt.Fprintln(os.Stderr, vocab.NoticePrefix(name)+spec.Notice)
	}
	// The loader's and the runtime's variables the provider held back
	// from this launcher's start (vocab.HoldEnv) are the command's again.
	env := vocab.ReleaseEnv(os.Environ())
	if err := setLimits(spec); err != nil {
		fatal(name, token, "%v", err)
	}
	os.Exit(execCommand(name, spec.Argv, env))
}

// joinCgroup moves this process into the cgroup directory dir, before the
// command exists: the command and all it starts count against the limits
// the provider set there (the C launchers' sbx_join_cgroup).
func joinCgroup(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY|unix.O_NOFOLLOW, 0)
	if err == nil {
		_, err = f.WriteString("0\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("join the cgroup %s (the limits set there would not hold): %w", dir, err)
	}
	return nil
}

// setLimits sets the command's resource limits (-nproc, -as), soft and
// hard, just before the exec (the C launchers' sbx_set_limits).
func setLimits(spec vocab.Spec) error {
	if spec.MaxProcesses > 0 {
		n := uint64(spec.MaxProcesses)
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("set the process limit (RLIMIT_NPROC %d): %w", n, err)
		}
	}
	if spec.MaxAddressSpace > 0 {
		n := uint64(spec.MaxAddressSpace)
		if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("set the memory limit (RLIMIT_AS %d): %w", n, err)
		}
	}
	return nil
}

// errABIMismatch is the refusal of a launcher whose kernel reports another
// Landlock ABI than the provider planned for (-abi): its notice, and the
// report the consumer holds, would be of another kernel.
func errABIMismatch(planned, kernel int) error {
	if planned == 0 {
		return errors.New("no Landlock ABI in the arguments (-abi)")
	}
	return fmt.Errorf("the provider planned for Landlock ABI %d, the kernel reports %d", planned, kernel)
}

// confineLandlock applies the whole confinement to the calling thread:
// Landlock, then (sealThread) capabilities, descriptors and seccomp. The
// seccomp program is the one the provider picked for this spec from
// package seccompfilter's generated programs (-seccomp).
func confineLandlock(spec vocab.Spec, abi int) error {
	if spec.Seccomp == "" {
		return errors.New("no seccomp program in the arguments (-seccomp)")
	}
	fd, err := landlockRuleset(spec, abi)
	if err != nil {
		return err
	}
	err = restrictThread(fd)
	unix.Close(fd)
	if err != nil {
		return err
	}
	return sealThread(spec.Seccomp)
}

// sealThread is the last step before exec: no capability left, no
// descriptor beyond stdio carried into the command, and the seccomp
// program loaded (with no_new_privs).
func sealThread(program string) error {
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := closeExtraFDs(); err != nil {
		return err
	}
	return installSupervised(program)
}

// installSupervised loads the seccomp program with a listener and hands the
// listener to the supervisor, which performs the calls the program passes
// to it (the metadata calls: Notified in internal/seccompfilter/gen)
// beneath a writable root and refuses them elsewhere.
func installSupervised(program string) error {
	sock := supervisorSocket()
	if sock < 0 {
		return errors.New("no supervisor to hand the seccomp listener to")
	}
	defer unix.Close(sock)
	fd, err := seccompfilter.InstallListener(program)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Sendmsg(sock, []byte{1}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("hand the seccomp listener to the supervisor: %w", err)
	}
	return nil
}

// dropCapabilities leaves the command no capability across exec, so a
// command started by root (or by a caller holding capabilities) gets no
// device nodes, mounts, raw sockets or host settings: the ambient set is
// cleared, the bounding set emptied where the caller may (CAP_SETPCAP),
// and the permitted, effective and inheritable sets emptied. With
// no_new_privs, exec never grants more than the permitted set held before
// it, whatever the bounding set, file capabilities or uid 0.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EPERM) {
			break // no CAP_SETPCAP: emptying the permitted set below is what counts
		}
		if err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// closeExtraFDs marks every descriptor above stderr close-on-exec, so
// nothing the consumer or the launcher had open reaches the command.
func closeExtraFDs() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list open descriptors: %w", err)
	}
	for _, e := range ents {
		var fd int
		if _, err := fmt.Sscan(e.Name(), &fd); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}

// answerProbe is the end of a launcher in probe mode, once confined: prove
// the confinement, say so on stdout, exit 0; or the fatal line.
func answerProbe(name, token string, spec vocab.Spec) {
	if err := probeWrites(spec); err != nil {
		fatal(name, token, "probe: %v", err)
	}
	fmt.Println(vocab.ProbeOKLine(name, token))
	os.Exit(0)
}

// probeWrites proves the confinement from inside: a write and a chmod in
// the granted directory work; a write to a read-only subpath of it (when
// the spec has one) or beside it is refused with EACCES or EROFS and
// leaves nothing.
func probeWrites(spec vocab.Spec) error {
	if len(spec.Writable) != 1 {
		return errors.New("probe needs exactly one writable root")
	}
	allowed := filepath.Join(spec.Writable[0], "probe-allowed")
	if err := os.WriteFile(allowed, []byte("ok\n"), 0o600); err != nil {
		return fmt.Errorf("allowed write failed: %w", err)
	}
	// A metadata change goes through the supervisor (seccomp's user
	// notification, the command's memory read by the supervisor): where
	// that path is broken, git init and venvs fail, and the runner must
	// not pass its probe.
	if err := os.Chmod(allowed, 0o640); err != nil {
		return fmt.Errorf("chmod in the granted directory failed (the metadata supervisor): %w", err)
	}
	if fi, err := os.Stat(allowed); err != nil || fi.Mode().Perm() != 0o640 {
		return fmt.Errorf("chmod in the granted directory did not take: %v %v", fi, err)
	}
	denied := filepath.Join(filepath.Dir(spec.Writable[0]), "probe-denied")
	if len(spec.ReadOnly) > 0 {
		denied = filepath.Join(spec.ReadOnly[0], "probe-denied")
	}
	err := os.WriteFile(denied, []byte("escaped\n"), 0o600)
	if err == nil {
		return fmt.Errorf("write to %s was not denied", denied)
	}
	if !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EROFS) {
		return fmt.Errorf("write to %s failed with %v, want EACCES or EROFS", denied, err)
	}
	return nil
}
