//go:build !unix

package sandbox

// reachableByOwnerBits is the unix check only (see caches_reach_unix.go).
func reachableByOwnerBits(string) error { return nil }
