package hostinfo

import (
	"os"
	"strings"
	"sync"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// LandlockABI returns the kernel's Landlock ABI version, 0 when Landlock is
// missing or disabled at boot. A kernel whose signal scoping has the known
// erratum unfixed is reported one level below vocab.ABIScopes, as
// go-landlock does. The kernel is asked once per process: the answer is
// fixed from boot, and every wrap plans with it several times.
func LandlockABI() int { return landlockABI() }

var landlockABI = sync.OnceValue(func() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	if v >= vocab.ABIScopes {
		if errata, err := ll.LandlockGetErrata(); err != nil || errata&vocab.ErratumSignalScoping == 0 {
			v = vocab.ABIScopes - 1
		}
	}
	return v
})

// Seccomp reports whether the kernel has seccomp (PR_GET_SECCOMP answers
// EINVAL when it does not).
func Seccomp() bool {
	_, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	return err == nil
}

// Kernel returns the kernel release.
func Kernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// UserNamespaces reports whether the sysctls allow this user to create user
// namespaces, and why not. Only a probe can tell for sure (seccomp or an LSM
// may still refuse).
func UserNamespaces() (bool, string) {
	if v, ok := readInt("/proc/sys/user/max_user_namespaces"); ok && v == 0 {
		return false, "user.max_user_namespaces is 0"
	}
	if v, ok := readInt("/proc/sys/kernel/unprivileged_userns_clone"); ok && v == 0 && os.Geteuid() != 0 {
		return false, "kernel.unprivileged_userns_clone is 0"
	}
	if v, ok := readInt("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); ok && v == 1 && os.Geteuid() != 0 {
		return false, "kernel.apparmor_restrict_unprivileged_userns is 1"
	}
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		return false, "the kernel has no user namespaces"
	}
	return true, "allowed by the sysctls"
}

func readInt(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, s != ""
}
