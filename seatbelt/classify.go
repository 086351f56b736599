package seatbelt

import (
	"strings"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// RunnerFailurePrefix starts every message sandbox-exec writes about its
// own failure: a profile it could not compile, a sandbox it could not apply
// (sandbox_apply: Operation not permitted, when already inside a sandbox),
// the seatbelt-run step it could not execute ("execvp() of"). sandbox-exec
// reserves no exit status, so the rule is signature-only: the command's
// exit status stays ordinary, whatever it is.
const RunnerFailurePrefix = "sandbox-exec:"

// StepFailurePrefix starts the one line the seatbelt-run step prints when
// it fails before it reports the sandbox applied (launcher.Init). Its
// report that the command could not be executed ("seatbelt-run: execvp()
// of ...", exit 127 or 126) is the command's outcome, like env(1)'s.
const StepFailurePrefix = vocab.SeatbeltRun + ": fatal: "

// DenialSignatures returns the stderr fragments that mean the sandbox
// likely refused the command something, for spec. Seatbelt refuses with
// EPERM, so the fragments are EPERM's messages as the common tools print
// them; with the network closed, also the name-resolution failures that
// follow from mDNSResponder being unreachable. Each call returns a new slice.
func DenialSignatures(spec Spec) []string {
	sigs := []string{
		"Operation not permitted", // strerror(EPERM): C tools, git, python's [Errno 1]
		"operation not permitted", // node: "EPERM: operation not permitted, open ..."
		"deny(1)",                 // the kernel's report, "Sandbox: git(1234) deny(1) file-write-create ..."
	}
	if !spec.AllowNetwork {
		sigs = append(sigs,
			"Could not resolve host",         // curl, git over https
			"nodename nor servname provided", // getaddrinfo's EAI_NONAME on macOS: python, ssh
			"getaddrinfo ENOTFOUND",          // node
		)
	}
	return sigs
}

// Gaps returns what this profile cannot hold beyond Gaps of its spec: the
// protected spellings that do not exist yet and that its case-insensitive
// rule cannot write (Unguarded). Each call returns a new slice.
func (p Profile) Gaps() []vocab.Gap {
	if len(p.Unguarded) == 0 {
		return nil
	}
	return []vocab.Gap{{Area: vocab.AreaFS, Reason: "these protected paths do not exist yet and are matched only as spelled, since a name they lack holds " +
		"a character other than A-Z, a-z, 0-9, '.', '_' and '-': on a case-insensitive volume (the macOS default) the command " +
		"can create them under another letter case that git and other readers still find: " + strings.Join(p.Unguarded, ", ")}}
}

// Gaps returns what the profile built from spec cannot hold. Some gaps are
// always present (Seatbelt has no answer to them), so enforcement under
// this runner is always partial. Each call returns a new slice.
func Gaps(spec Spec) []vocab.Gap {
	writable := len(spec.WritableRoots) > 0 || spec.TempDir != ""
	protected := len(spec.ReadOnlySubpaths) > 0 || len(spec.DenyRead) > 0
	var gaps []vocab.Gap
	if protected {
		gaps = append(gaps, vocab.Gap{Area: vocab.AreaFS, Reason: "Seatbelt rules match names, not files: the profile denies hard-linking a protected path, " +
			"but a hard link that already exists outside the protected paths (made before the command ran) " +
			"is a second name the rules do not cover"})
	}
	if len(spec.WritableRoots) > 0 && len(spec.ReadOnlySubpaths) > 0 {
		gaps = append(gaps, vocab.Gap{Area: vocab.AreaFS, Reason: "read-only subpaths are fixed when the profile is built: " +
			"a git submodule or worktree the command creates later has writable hooks and config"})
	}
	if writable {
		gaps = append(gaps, vocab.Gap{Area: vocab.AreaFS, Reason: "the profile does not filter the kind of node created: " +
			"a command running as root (through passwordless sudo, say) can create a device node " +
			"under a writable path and reach a disk through it"})
	}
	if !spec.AllowNetwork && len(spec.LoopbackPorts) > 0 && spec.TrustServices {
		gaps = append(gaps, vocab.Gap{Area: vocab.AreaNet, Reason: "the system's certificate trust services (trustd) are reachable, for TLS through the domain proxy: " +
			"trustd may fetch intermediate certificates and revocation data from addresses a certificate names, outside the sandbox"})
	}
	gaps = append(gaps,
		vocab.Gap{Area: vocab.AreaProc, Reason: "the kern.proc.pid sysctl is open (runtimes read their own entry through it): " +
			"the command can read the name, owner and parent of any process, though not its arguments or environment"},
		vocab.Gap{Area: vocab.AreaIPC, Reason: "POSIX semaphores and python's and OpenMP's shared-memory names are global: " +
			"the command can open such an object of a host process if it knows the name"},
		vocab.Gap{Area: vocab.AreaIPC, Reason: "notify(3) is reachable (libc needs it): the command can post Darwin notifications that host processes observe"},
		vocab.Gap{Area: vocab.AreaClassify, Reason: "a spawner that does not pass the report pipe named by SANDBOX_LOCAL_APPLIED_FD (Wrapped.Command does) " +
			"cannot tell sandbox-exec's own failure from a command whose first stderr line starts with \"sandbox-exec:\""},
	)
	return gaps
}
