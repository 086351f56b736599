//go:build cgo

package sandbox

// cgoLaunchers says whether the Linux launchers' C parts (ns-run, the
// landlock supervisor, started from constructors) are in this binary: they
// are (nocgo_linux.go is the other side).
func cgoLaunchers() error { return nil }
