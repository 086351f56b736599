//go:build linux && !amd64

package integration

// compatSocket: only x86_64 kernels have other syscall tables to try.
func compatSocket(string) string { return "error: no other syscall table on this architecture" }
