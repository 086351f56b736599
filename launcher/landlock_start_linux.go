package launcher

/*
const char *sbx_landlock_token(void);
int sbx_landlock_supervised(void);
int sbx_landlock_notify_sock(void);
*/
import "C"

import (
	"os"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// withCgo: the C constructors that start ns-run's stages and landlock's
// supervisor are in this binary (landlock_start_nocgo_linux.go is the
// other side).
const withCgo = true

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

// supervised reports whether this launcher was started by its supervisor
// (supervise_linux.c): only then does the command end with everything it
// started.
func supervised() bool { return C.sbx_landlock_supervised() != 0 }

// supervisorSocket is the launcher's end of the socket on which it hands
// the supervisor its seccomp listener, or -1.
func supervisorSocket() int { return int(C.sbx_landlock_notify_sock()) }
