//go:build !cgo

package launcher

// withCgo: this binary was built with CGO_ENABLED=0, so ns-run's C stages
// are not in it and ns-run refuses at once; the landlock launcher is the
// Go chain (landlock_chain_linux.go).
const withCgo = false
