// Package hostinfo reads what this machine supports for sandboxing: the
// Landlock ABI, user namespaces, seccomp. It only reads; nothing is changed.
package hostinfo
