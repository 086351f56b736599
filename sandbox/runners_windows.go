package sandbox

// platformRunners: the winacl runner is not wired yet; every Wrap fails
// closed with SANDBOX_UNAVAILABLE.
func platformRunners() []runner { return nil }
