//go:build !linux

package launcher

import "errors"

// ExecInPlace is not available on this platform: spawn the wrapped command
// instead (sandbox.Wrapped.Command).
func ExecInPlace(path string, args, env []string, dir string) error {
	return errors.New("launcher: exec in place is not supported on this platform")
}
