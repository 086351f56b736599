package launcher

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockConfig is the ruleset for s: every filesystem right handled (so
// all that is not granted is denied); TCP bind and connect handled with no
// port allowed under network deny; signals always scoped to the sandbox,
// abstract UNIX sockets too under network deny; and under network deny
// with UNIX sockets allowed by path, the resolution of pathname UNIX
// sockets (granted on exactly those paths by planFS). Best effort: on an older
// ABI go-landlock drops what the kernel lacks, and the launcher says so
// with its notice line (vocab.LandlockKernelGaps).
func landlockConfig(s vocab.Spec) landlock.Config {
	c := landlock.Config{
		HandledAccessFS: landlock.AccessFSSet(handledFS),
		Scoped:          landlock.ScopedSet(ll.ScopeSignal),
	}
	if !s.AllowNetwork {
		c.HandledAccessNet = landlock.AccessNetSet(ll.AccessNetBindTCP | ll.AccessNetConnectTCP)
		c.Scoped |= landlock.ScopedSet(ll.ScopeAbstractUnixSocket)
		if len(s.UnixSockets) > 0 {
			// seccomp lets UNIX sockets be created only in this case;
			// Landlock (ABI 9) then limits which ones they reach.
			c.HandledAccessFS |= landlock.AccessFSSet(ll.AccessFSResolveUnix)
		}
	}
	return c.BestEffort()
}

// landlockRuleset builds the ruleset fd for s without enforcing it.
func landlockRuleset(s vocab.Spec) (int, error) {
	plan := planFS(s, osLister{}, stdPTYs())
	rules := make([]landlock.Rule, 0, len(plan))
	for _, g := range plan {
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(g.Access), g.Path).IgnoreIfMissing())
	}
	fd, _, err := landlockConfig(s).NewRulesetFD(rules...)
	if err != nil {
		return -1, fmt.Errorf("landlock ruleset: %w", err)
	}
	if fd < 0 {
		return -1, fmt.Errorf("landlock ruleset: the kernel has no Landlock")
	}
	return fd, nil
}

// stdPTYs returns the /dev/pts terminals behind standard input, output and
// error: the only ones the command may reopen by path.
func stdPTYs() []string {
	var ptys []string
	for fd := 0; fd <= 2; fd++ {
		p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err == nil && strings.HasPrefix(p, "/dev/pts/") && !contains(ptys, p) {
			ptys = append(ptys, p)
		}
	}
	return ptys
}

// restrictThread enforces the ruleset on the calling thread, which must be
// locked (runtime.LockOSThread) and must be the one that execs: a Landlock
// domain and a seccomp filter pass from the execing thread to the new
// program. no_new_privs is set first, as both require.
func restrictThread(rulesetFD int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(rulesetFD, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}
