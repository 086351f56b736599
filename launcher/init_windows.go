package launcher

import (
	"errors"
	"os"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/winacl"
)

func launchers() map[string]func() {
	return map[string]func(){
		vocab.WinACLRun: func() { winaclRun(os.Args[1:]) },
	}
}

// winaclRun is the winacl-run launcher: it decodes the provider's argv,
// builds the launch spec (recomputing the write SIDs and the session SID
// from the paths) and runs the command under a write-restricted token in a
// kill-on-close job (winacl.Run), then exits with the command's code. A
// failure of the launcher is the fatal line and exit 125; from winacl.Run
// on it is also recorded in the session's status file, which the provider's
// Classify requires (the token in the fatal line is readable by the command
// on Windows). A failure before that (arguments that do not decode, a spec
// that does not validate) has no status: Classify takes it for the
// command's exit 125, which is never retried unconfined.
func winaclRun(args []string) {
	const name = vocab.WinACLRun
	token := takeToken()
	spec, err := vocab.Decode(args)
	if err != nil {
		fatal(name, token, "%v", err)
	}
	spec.Token = token
	switch {
	case spec.Probe:
		fatal(name, token, "probe mode is not supported: the winacl runner is selected unprobed")
	case spec.RequireFull:
		fatal(name, token, "full enforcement required, but winacl enforcement is always partial")
	case spec.TempDir == "":
		fatal(name, token, "no private temp dir (-t) given")
	}
	// TMP, TEMP and TMPDIR are forced to the session dir whatever their
	// case: a consumer may have spawned the launcher with a differently
	// cased copy that Windows would find first.
	//
	// The paths come in the vocabulary's slash form (/??/C:/...), which
	// winacl.Canonicalize parses; NewLaunchSpec canonicalises the roots and
	// the session dir itself.
	dir, err := winacl.Canonicalize(spec.Dir, nil)
	if err != nil {
		fatal(name, token, "working directory: %v", err)
	}
	sessionDir, err := winacl.Canonicalize(spec.TempDir, nil)
	if err != nil {
		fatal(name, token, "private temp dir: %v", err)
	}
	ls, err := winacl.NewLaunchSpec(spec.Writable, sessionDir, spec.Argv, dir, winacl.TempEnv(os.Environ(), sessionDir))
	if err != nil {
		fatal(name, token, "%v", err)
	}
	code, err := winacl.Run(ls, os.Stderr)
	var le *winacl.LaunchError
	if errors.As(err, &le) {
		fatal(name, token, "%v", le)
	}
	if err != nil {
		fatal(name, token, "%v", err)
	}
	os.Exit(code)
}
