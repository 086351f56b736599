//go:build linux && cgo

package integration

// landlockInC: this build's landlock-run is C from its constructor to the
// exec (launcher/landlock_run_linux.c); no Go of the consumer runs in it.
const landlockInC = true
