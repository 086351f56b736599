package launcher

import (
	"fmt"
	"os"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// fatal is the only place a launcher reports a failure before exec: one
// signed line on stderr, exit 125. The command has not run.
func fatal(name, token string, format string, args ...any) {
	fmt.Fprintln(os.Stderr, vocab.FatalLine(name, token, fmt.Sprintf(format, args...)))
	os.Exit(vocab.FatalExit)
}

// takeToken reads the wrap's token from the environment and removes it, so
// the command never inherits it. An invalid or missing token gives "": the
// fatal line is then unsigned, and Classify never takes it for a runner
// failure.
func takeToken() string {
	t := peekToken()
	os.Unsetenv(vocab.TokenEnv)
	return t
}

// peekToken is the wrap token, left in the environment (the landlock Go
// chain's relay and supervisor sign their fatal lines with it and pass it
// on to the launcher, which takes it); "" when missing or invalid.
func peekToken() string {
	if t := os.Getenv(vocab.TokenEnv); vocab.ValidToken(t) {
		return t
	}
	return ""
}
