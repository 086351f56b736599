package launcher

import (
	"os"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

func launchers() map[string]func() {
	return map[string]func(){
		vocab.LandlockRun: func() { landlockRun(os.Args[1:]) },
		vocab.NsRun:       func() { nsRun(os.Args[1:]) },
	}
}
