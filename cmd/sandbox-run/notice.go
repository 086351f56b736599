package main

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/sandbox"
)

// notices are the lines the CLI prints on stderr before the command runs,
// so a person or an agent reading it knows how complete the confinement
// is: that the wrap is partial, and why; that --runner auto did not get the
// platform's preferred runner. None when the confinement is full and
// preferred.
func notices(w *sandbox.Wrapped, runnerFlag string) []string {
	var out []string
	if prefs := sandbox.Runners(); runnerFlag == "auto" && len(prefs) > 0 && w.Runner != prefs[0] {
		out = append(out, fmt.Sprintf("sandbox-run: notice: runner %s: the preferred runner, %s, is unavailable here (sandbox-run doctor says why)", w.Runner, prefs[0]))
	}
	if w.Enforcement == sandbox.Partial {
		out = append(out, partialNotice(w.Runner, w.Gaps))
	}
	return out
}

// partialNotice is the one line that says the confinement is partial: the
// runner, how many gaps in which areas, and where each is named (the
// report of this run, doctor for the default policy). The gaps themselves
// run to a kilobyte, and a line before every command is read by an agent
// every time; --require-full is the way to refuse them.
func partialNotice(runner string, gaps []sandbox.Gap) string {
	var areas []string
	for _, g := range gaps {
		if a := string(g.Area); !slices.Contains(areas, a) {
			areas = append(areas, a)
		}
	}
	n := "1 gap"
	if len(gaps) != 1 {
		n = fmt.Sprintf("%d gaps", len(gaps))
	}
	return fmt.Sprintf("sandbox-run: notice: partial enforcement (%s): %s (%s); --json-report lists them, sandbox-run doctor says why",
		vocab.OneLine(runner), n, vocab.OneLine(strings.Join(areas, ", ")))
}

// versionLine is what --version prints: the module's version (or the
// commit it was built from) and the launcher contract it speaks.
func versionLine() string {
	v := "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && (v == "" || v == "(devel)") {
				v = "commit " + s.Value
			}
		}
	}
	return "sandbox-run " + v + " (launcher contract " + vocab.Version + ")"
}

// denialNote is the line the CLI prints after a command failed with a
// denial signature in its output: what the sandbox allowed, so the agent
// or person reading it can tell a refusal from the command's own error,
// and which flags grant more.
func denialNote(w *sandbox.Wrapped, pol sandbox.Policy, o sandbox.Outcome) string {
	writable := []string{"$TMPDIR"}
	grants := []string{"--mode workspace-write"}
	if pol.Mode == sandbox.WorkspaceWrite {
		writable = append(append([]string{pol.Workspace}, pol.WritableRoots...), writable...)
		grants = []string{"--allow-write DIR", "--writable-config NAME"}
	}
	limits := []string{"write only in " + strings.Join(writable, ", ")}
	if pol.Network != sandbox.NetworkAllow {
		limits = append(limits, "reach no network")
		grants = append(grants, "--network allow")
	}
	limits = append(limits, "not read the credential stores")
	grants = append(grants, "--allow-read PATH")
	return fmt.Sprintf("sandbox-run: note: the command failed (exit %d) after printing %q: the sandbox (runner %s) may have refused it. It may %s; %s grant more (sandbox-run --help)",
		o.ExitCode, o.Reason, w.Runner, strings.Join(limits, ", "), strings.Join(grants, ", "))
}

// refusalNotes are the lines the CLI prints after a run in which the
// sandbox refused something: one per distinct refusal, naming what, why,
// and the flag that allows it; one matched from the command's output says
// so, since the command chose what it printed. The proxy's refusals have their own line
// (blockedNote); past maxNoted the rest are counted (the report has them),
// and so are those the outcome does not list (unlisted, at least).
func refusalNotes(refusals []sandbox.Refusal, unlisted int) []string {
	const maxNoted = 10
	var out []string
	n := 0
	for _, r := range refusals {
		if r.Seen == "sandbox" && r.Kind == sandbox.RefusedNetwork {
			continue
		}
		if n++; n > maxNoted {
			continue
		}
		line := "sandbox-run: refused " + vocab.OneLine(r.String())
		if r.Seen == "output" {
			// What the line names came from the command's own output:
			// a command can print any path, host or name there.
			line += " [as the command's output reports it]"
		}
		out = append(out, line)
	}
	if n > maxNoted {
		out = append(out, fmt.Sprintf("sandbox-run: refused %d more (--json-report lists them)", n-maxNoted))
	}
	if unlisted > 0 {
		out = append(out, fmt.Sprintf("sandbox-run: refused at least %d more, not listed (past the bound of what is recorded)", unlisted))
	}
	return out
}

// explanation is what explain prints for one path.
func explanation(a sandbox.Access) string {
	line := func(what string, ok bool, rule, allow string) string {
		verdict := "yes"
		if !ok {
			verdict = "no"
		}
		s := fmt.Sprintf("  %-5s %s: %s", what, verdict, rule)
		if allow != "" {
			s += "; " + allow + " allows it"
		}
		return vocab.OneLine(s) + "\n"
	}
	return vocab.OneLine(a.Path) + "\n" + line("read", a.Read, a.ReadRule, a.AllowRead) + line("write", a.Write, a.WriteRule, a.AllowWrite)
}

// ownExitNote is the last line after a command that ran confined and
// exited 125 itself: sandbox-run's own failures ("sandbox-run: CODE:
// reason", exit 125) happen before any command starts, so anything above
// that looks like one came from the command.
// runnerFailureNote follows a launcher's fatal line in the CLI's own
// words. The fatal line keeps the launcher's name (ns-run, landlock-run):
// it is the signed line consumers match (docs/contract.md), not a message
// for people.
func runnerFailureNote(runner string) string {
	return "sandbox-run: the " + runner + " runner could not confine the command, so it did not run " +
		"(the fatal line above says why; sandbox-run doctor says which runners work here)"
}

const ownExitNote = "sandbox-run: note: the command ran inside the sandbox and exited 125 itself; " +
	"sandbox-run's own failures end a run before any command starts, so any sandbox-run failure line above came from the command"

// blockedNote is the line the CLI prints after a run in which the domain
// proxy refused something: each destination, how often, and why, so that
// an agent can ask for exactly that name. The names are the command's
// choice: each is quoted (non-ASCII escaped, so no character can pass for
// the sandbox's own words), and past maxNoted the rest are counted only
// (the report has them all).
func blockedNote(blocked []sandbox.BlockedRequest) string {
	const maxNoted = 10
	var parts []string
	for i, b := range blocked {
		if i == maxNoted {
			parts = append(parts, fmt.Sprintf("and %d more (the report lists them)", len(blocked)-maxNoted))
			break
		}
		times := "once"
		if b.Count > 1 {
			times = fmt.Sprintf("%d times", b.Count)
		}
		parts = append(parts, fmt.Sprintf("%s port %d (%s: %s)", strconv.QuoteToASCII(b.Host), b.Port, times, b.Reason))
	}
	return "sandbox-run: note: the domain proxy refused " + vocab.OneLine(strings.Join(parts, "; ")) + "; --allow-domain NAME allows a name"
}
