//go:build linux && !amd64

package integration

// compatSocket: only x86_64 kernels have other syscall tables to try.
func compatSocket(string) string { return "error: no other syscall table on this architecture" }

// sysCreat: no creat(2) on this architecture (arm64 has only openat); the
// "creat" verb is not among createVerbs here.
const sysCreat = ^uintptr(0)

// createVerbs are the tool's verbs that create a file with a mode.
var createVerbs = []string{"create", "mknod-reg"}
