package launcher

import (
	"os"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

func launchers() map[string]func() {
	m := landlockLaunchers()
	m[vocab.NsRun] = func() { nsRun(os.Args[1:]) }
	return m
}
