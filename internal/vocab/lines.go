package vocab

import (
	"strings"
	"unicode"
)

// FatalExit is the exit status a launcher uses, and only uses, when it
// failed before running the command (winacl-run: or while running it, see
// winacl.LaunchError). sandbox-run exits with it too when it failed before
// starting the command. The one definition: every launcher, the CLI and
// the provider's runner-failure rules use it, and ns-run gets it from
// shared_contract_linux.h (SBX_FATAL_EXIT).
const FatalExit = 125

// NoCgoReason is why the namespaces runner does not work in a binary
// built with CGO_ENABLED=0: the provider's reason (SANDBOX_UNAVAILABLE)
// and ns-run's fatal line. The landlock runner works there (its launcher
// is then Go alone).
const NoCgoReason = "this binary was built with CGO_ENABLED=0; the namespaces runner needs cgo " +
	"(its launcher is C that starts from a constructor before the Go runtime; see README, Builds and runners)"

// The exit statuses of a command that could not be started, as env(1)
// and the shells give them: not found, and found but not executable. They
// are not launcher failures: the confinement was in place and the command
// was looked up in it. Every launcher uses these (ns-run through
// shared_contract_linux.h).
const (
	ExitNotFound      = 127
	ExitNotExecutable = 126
)

// FatalPrefix is the start of the one stderr line a launcher named name
// prints when it fails before exec, signed with the wrap's token:
//
//	landlock-run: fatal: [TOKEN] reason
//
// The command never learns the token (it is in the launcher's argv only,
// which exec replaces), so it cannot forge the line.
func FatalPrefix(name, token string) string {
	return name + ": fatal: [" + token + "] "
}

// UnsignedFatalPrefix starts a fatal line whose token could not be read
// from the arguments. Classify never treats it as a runner failure: a
// provider always passes a valid token, so such a line comes from a launcher
// someone else started.
func UnsignedFatalPrefix(name string) string {
	return name + ": fatal: "
}

// FatalLine formats the fatal line (without the newline). Control
// characters in reason are replaced so it stays one line.
func FatalLine(name, token, reason string) string {
	if !ValidToken(token) {
		return UnsignedFatalPrefix(name) + OneLine(reason)
	}
	return FatalPrefix(name, token) + OneLine(reason)
}

// NoticePrefix starts the partial-enforcement notice a launcher prints on
// stderr before exec when the kernel could confine only part of the policy.
func NoticePrefix(name string) string {
	return name + ": notice: partial enforcement: "
}

// NoticeText is what follows NoticePrefix in the notice line for these
// gaps (one line), or "" when there are none. The provider makes it and
// hands it to the landlock launcher (-notice), which prints it as it is,
// so the provider can exclude exactly that line when classifying.
func NoticeText(gaps []Gap) string { return OneLine(JoinGaps(gaps)) }

// ProbeOKLine is what a launcher in probe mode prints on stdout when it
// confined itself and proved the confinement.
func ProbeOKLine(name, token string) string {
	return name + ": probe ok [" + token + "]"
}

// OneLine replaces control characters in s with spaces, so a reason that
// holds a path (which may hold a newline or an escape) stays one line.
func OneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f && r < 0xa0 || unicode.In(r, unicode.Zl, unicode.Zp, unicode.Cf) {
			// C0 and C1 controls: no escape sequence reaches a terminal;
			// line and paragraph separators and format characters (the
			// bidi overrides): no line reads as two, or backwards.
			return ' '
		}
		return r
	}, s)
}
