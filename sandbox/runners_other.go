//go:build !linux && !darwin && !windows

package sandbox

// platformRunners: none yet on this platform; every Wrap fails closed with
// SANDBOX_UNAVAILABLE.
func platformRunners() []runner { return nil }
