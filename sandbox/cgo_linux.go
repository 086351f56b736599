//go:build cgo

package sandbox

// cgoLaunchers says whether ns-run's C stages, started from a
// constructor, are in this binary: they are (nocgo_linux.go is the other
// side). The landlock launcher works either way.
func cgoLaunchers() error { return nil }
