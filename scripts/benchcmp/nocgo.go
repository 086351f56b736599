//go:build !cgo

package main

// withCgo: see cgo.go.
const withCgo = false
