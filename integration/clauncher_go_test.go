//go:build linux && !cgo

package integration

// landlockInC: this build's landlock-run is the Go chain
// (launcher/landlock_chain_linux.go), which runs the consumer's main up to
// launcher.Init.
const landlockInC = false
