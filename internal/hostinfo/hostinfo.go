// Package hostinfo reads what this machine supports for sandboxing: the
// Landlock ABI, user namespaces, seccomp. It only reads; nothing is changed.
package hostinfo

// Facts describes the sandboxing features of this machine.
type Facts struct {
	// OS is runtime.GOOS.
	OS string `json:"os"`
	// Kernel is the kernel release, where known.
	Kernel string `json:"kernel,omitempty"`
	// LandlockABI is the Landlock ABI version, 0 when absent.
	LandlockABI int `json:"landlock_abi"`
	// Seccomp reports whether seccomp filters are available.
	Seccomp bool `json:"seccomp"`
	// UserNamespaces says whether unprivileged user namespaces look allowed
	// by the sysctls (the namespaces probe is the real test).
	UserNamespaces bool `json:"user_namespaces"`
	// UserNamespacesNote explains UserNamespaces.
	UserNamespacesNote string `json:"user_namespaces_note,omitempty"`
}
