package sandbox

import "github.com/bo-agent/sandbox-local/internal/hostinfo"

// platformRunners are Linux's candidates, in order of preference:
// namespaces (the strongest: .git stays read-only, deny-read paths vanish,
// a private network) and landlock, which needs no namespaces (containers,
// hardened hosts).
func platformRunners() []runner {
	return []runner{namespacesRunner{abi: hostinfo.LandlockABI}, landlockRunner{abi: hostinfo.LandlockABI}}
}
