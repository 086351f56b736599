//go:build !linux

package hostinfo

import "runtime"

// LandlockABI is 0 outside Linux.
func LandlockABI() int { return 0 }

// Read returns the facts of this machine.
func Read() Facts { return Facts{OS: runtime.GOOS} }
