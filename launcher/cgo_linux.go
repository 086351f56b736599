//go:build cgo

package launcher

// withCgo: ns-run's C stages, started from a constructor, are in this
// binary (nocgo_linux.go is the other side). The landlock launcher works
// either way: without cgo it is the Go chain (landlock_chain_linux.go).
const withCgo = true
