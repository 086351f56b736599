package launcher

/*
const char *sbx_landlock_token(void);
*/
import "C"

import (
	"os"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// startupToken returns the wrap token when landlock_start_linux.c moved it
// out of the environment to start the runtime with GOMAXPROCS=1, and then
// removes GOMAXPROCS, which was set for the launcher alone, so the command
// gets the environment the caller gave. ok is false when nothing was moved
// (the token, if any, is still in the environment).
func startupToken() (token string, ok bool) {
	p := C.sbx_landlock_token()
	if p == nil {
		return "", false
	}
	os.Unsetenv("GOMAXPROCS")
	t := C.GoString(p)
	if !vocab.ValidToken(t) {
		return "", true
	}
	return t, true
}
