//go:build !cgo

package launcher

// This binary was built with CGO_ENABLED=0: the C constructors that start
// ns-run's stages and landlock's supervisor (landlock_start_linux.c,
// supervise_linux.c) are not in it, and both launchers refuse at once
// (withCgo). The rest stands in for landlock_start_linux.go and is never
// reached.
const withCgo = false

func startupToken() (string, bool) { return "", false }

func supervised() bool { return false }

func supervisorSocket() int { return -1 }
