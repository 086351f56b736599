//go:build !linux

package hostinfo

// LandlockABI is 0 outside Linux.
func LandlockABI() int { return 0 }

// Kernel is not read outside Linux.
func Kernel() string { return "" }

// Seccomp is Linux's.
func Seccomp() bool { return false }

// UserNamespaces are Linux's.
func UserNamespaces() (bool, string) { return false, "" }
