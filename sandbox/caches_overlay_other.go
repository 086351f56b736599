//go:build !linux

package sandbox

// overlayUpperFS: only the Linux namespaces runner mounts overlays.
func overlayUpperFS(string) bool { return false }
