package sandbox

import "github.com/bo-agent/sandbox-local/seatbelt"

// platformRunners: macOS has the sole candidate seatbelt.
func platformRunners() []runner {
	return []runner{seatbeltRunner{loc: seatbelt.SystemLocator(), fsys: seatbelt.OSFS(), exe: launcherPath}}
}
