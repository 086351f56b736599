package sandbox

import (
	"bytes"
	"slices"
	"strings"

	"github.com/bo-agent/sandbox-local/winacl"
)

// OutcomeKind says what a finished wrapped command's result means.
type OutcomeKind string

const (
	// OutcomeChild: the command ran; its exit status is the result.
	OutcomeChild OutcomeKind = "child"
	// OutcomeDenied: the command ran and failed, and its stderr shows a
	// denial signature: the sandbox likely refused something it needed.
	OutcomeDenied OutcomeKind = "likely-denied"
	// OutcomeRunnerFailure: the launcher failed before the command ran.
	// The command did not run; do not retry it unconfined.
	OutcomeRunnerFailure OutcomeKind = "runner-failure"
)

// linuxDenialSignatures are the strerror texts of the errors Landlock and
// seccomp return (EACCES, EPERM) and of a write to a read-only mount (EROFS).
var linuxDenialSignatures = []string{"Permission denied", "Operation not permitted", "Read-only file system"}

// Outcome is the classification of one finished wrapped command.
type Outcome struct {
	Kind     OutcomeKind `json:"kind"`
	ExitCode int         `json:"exit_code"`
	// Reason is the launcher's fatal reason, or the denial signature seen.
	Reason string `json:"reason,omitempty"`
	// Blocked are the destinations the domain proxy refused during the
	// run (NetworkProxied): host, port, how often, why.
	Blocked []BlockedRequest `json:"blocked,omitempty"`
	// ProtectedChanged are the changes to read-only subpaths found after
	// the run where the runner cannot prevent them (winacl: deletes are not
	// confined on Windows, so a protected file can be deleted and created
	// again), and whether each was restored.
	ProtectedChanged []ProtectedChange `json:"protected_changed,omitempty"`
	// Refusals are what the sandbox refused during the run, each with the
	// change that would allow it (at most 20: those the sandbox recorded
	// itself first, then those matched from the output, each first seen).
	Refusals []Refusal `json:"refusals,omitempty"`
	// RefusalsUnlisted is how many refusals Refusals does not list, at
	// least: the distinct ones past its bound, and every one past the
	// bound of what the guard or supervisor records that repeats none it
	// recorded (it counts them, repeats among them included; a guard
	// stopped with the sandbox may not have written its last count).
	RefusalsUnlisted int `json:"refusals_unlisted,omitempty"`
}

// ProtectedChange is one change to a read-only subpath found after a run.
type ProtectedChange struct {
	// Path is the object that changed.
	Path string `json:"path"`
	// Change is "deleted", "replaced", "modified" or "added".
	Change string `json:"change"`
	// Restored reports that the recorded state was put back.
	Restored bool `json:"restored"`
	// Note says why it was not restored.
	Note string `json:"note,omitempty"`
}

// Rule kinds of a RunnerFailureRule.
const (
	// RuleExitAndLine: a runner failure is exactly ExitCode together with a
	// stderr line starting with FatalPrefix (which carries the per-wrap
	// token). IgnoreLines are never taken for anything but themselves.
	RuleExitAndLine = "exit-and-fatal-line"
	// RuleSignature: the launcher reserves no exit status; a runner failure
	// is a first stderr line (after IgnoreLines) starting with one of
	// Signatures and none of ExceptPrefixes, whatever the exit status.
	RuleSignature = "signature-only"
)

// RunnerFailureRule is the structured rule telling a broken sandbox from a
// command that failed, for consumers that classify results themselves (in
// any language). Classify implements it.
type RunnerFailureRule struct {
	Kind        string   `json:"kind"`
	ExitCode    int      `json:"exit_code,omitempty"`
	FatalPrefix string   `json:"fatal_prefix,omitempty"`
	IgnoreLines []string `json:"ignore_lines,omitempty"`
	Signatures  []string `json:"signatures,omitempty"`
	// ExceptPrefixes are lines that start like a signature but are the
	// command's outcome (sandbox-exec's "execvp() of ... failed").
	ExceptPrefixes []string `json:"except_prefixes,omitempty"`
	// StatusFile, when set, means a runner failure also requires this file
	// to record one (the format winacl writes: the line "sandbox-local
	// winacl-run status v1", then "fatal: REASON", which
	// winacl.ReadStatusFile reads); the reason is then the file's. Read it
	// before Cleanup, which removes it.
	StatusFile string `json:"status_file,omitempty"`
	// AppliedEnv, when set, names the variable through which the spawner
	// may hand the launcher the write end of a pipe: set it to the
	// descriptor's number (the child's fd 3 for exec.Cmd.ExtraFiles[0]).
	// The launcher writes AppliedMarker there once the sandbox is applied,
	// before the command runs, and closes it. A runner failure then also
	// requires that the marker was not read: a command that printed a
	// signature line itself ran after the report. Command passes the pipe
	// and Classify reads it; a spawner that passes none gets the rule
	// without this condition.
	AppliedEnv    string `json:"applied_env,omitempty"`
	AppliedMarker string `json:"applied_marker,omitempty"`
}

// Classify tells what a wrapped command's result means. exitCode is the
// launcher's exit status (128+N when it was killed by signal N); stderr is
// what it wrote to standard error (the start is enough: the launcher's own
// lines come before anything the command writes).
//
// A runner failure drops the provider's selection: its next Wrap probes
// the candidates again, and takes another runner if this one no longer
// passes. One of a wrap whose runner came from the verdict cache
// (Config.VerdictCache) drops the cached verdict too: the next provider
// probes again.
func (w *Wrapped) Classify(exitCode int, stderr []byte) Outcome {
	o := classify(w.RunnerFailure, w.DenialSignatures, exitCode, stderr, w.appliedReported())
	if o.Kind == OutcomeRunnerFailure {
		if w.fromCache {
			forgetVerdict()
		}
		if w.sel != nil {
			w.sel.forget(w.selGen)
		}
	}
	o.Blocked = w.Blocked()
	if w.rules != nil && o.Kind != OutcomeRunnerFailure {
		// A launcher that failed ran no command: its fatal line names
		// what the sandbox could not set up, not what it refused.
		o.Refusals, o.RefusalsUnlisted = w.rules.refusals(stderr, o.Blocked, w.refusalRecords())
	}
	if w.checkProtected != nil {
		o.ProtectedChanged = w.checkProtected()
	}
	return o
}

// classify applies rule; applied is whether the launcher reported the
// sandbox applied (AppliedEnv).
func classify(rule RunnerFailureRule, denials []string, exitCode int, stderr []byte, applied bool) Outcome {
	lines := strings.Split(string(bytes.TrimRight(stderr, "\n")), "\n")
	kept := lines[:0:0]
	for _, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if !slices.Contains(rule.IgnoreLines, l) {
			kept = append(kept, l)
		}
	}
	switch rule.Kind {
	case RuleExitAndLine:
		if exitCode == rule.ExitCode && rule.FatalPrefix != "" {
			for _, l := range kept {
				if reason, ok := strings.CutPrefix(l, rule.FatalPrefix); ok {
					if reason, ok = recordedFailure(rule, reason); !ok {
						break
					}
					return Outcome{Kind: OutcomeRunnerFailure, ExitCode: exitCode, Reason: reason}
				}
			}
		}
	case RuleSignature:
		if len(kept) > 0 && hasAnyPrefix(kept[0], rule.Signatures) && !hasAnyPrefix(kept[0], rule.ExceptPrefixes) && !(rule.AppliedMarker != "" && applied) {
			if reason, ok := recordedFailure(rule, kept[0]); ok {
				return Outcome{Kind: OutcomeRunnerFailure, ExitCode: exitCode, Reason: reason}
			}
		}
	}
	if exitCode != 0 {
		for _, l := range kept {
			for _, sig := range denials {
				if strings.Contains(l, sig) {
					return Outcome{Kind: OutcomeDenied, ExitCode: exitCode, Reason: sig}
				}
			}
		}
	}
	return Outcome{Kind: OutcomeChild, ExitCode: exitCode}
}

// recordedFailure confirms a runner failure the stderr shows: without a
// StatusFile as it is, with one only if the file records a failure, whose
// reason it then is.
func recordedFailure(rule RunnerFailureRule, reason string) (string, bool) {
	if rule.StatusFile == "" {
		return reason, true
	}
	return winacl.ReadStatusFile(rule.StatusFile)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
