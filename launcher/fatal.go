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
