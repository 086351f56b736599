//go:build cgo

package main

// withCgo: this benchcmp has ns-run and the C landlock start; built with
// CGO_ENABLED=0 it measures the landlock runner's Go chain, and no
// namespaces or static-CLI variant.
const withCgo = true
