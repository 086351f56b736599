//go:build !linux

package sandbox

// isRoot: only the Linux runners' process limit depends on it.
func isRoot() bool { return false }

// newCgroups: cgroups are Linux's; no runner elsewhere asks for one.
func newCgroups(_, _ int64) cgroups { return cgroups{why: "cgroups are Linux's"} }
