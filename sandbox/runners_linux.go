package sandbox

import "github.com/bo-agent/sandbox-local/internal/hostinfo"

// platformRunners are Linux's candidates, in order of preference. The
// namespaces runner goes first once it exists.
func platformRunners() []runner {
	return []runner{landlockRunner{abi: hostinfo.LandlockABI}}
}
