package sandbox

import "github.com/bo-agent/sandbox-local/winacl"

// platformRunners: Windows has the sole candidate winacl, over the real
// system (winacl.NewSystem) and this executable as the winacl-run launcher.
// New calls this once per provider: it makes the runner's winacl.Manager,
// which only reads the temp root and this process's identity. Recover (the
// removal of crashed sessions' temp dirs and ACEs) runs once per provider,
// on the runner's first ready or prepare, that is at runner selection
// on the first Wrap (or Runner, or Diagnose); see winaclRunner.
func platformRunners() []runner {
	return []runner{newWinACLRunner(winacl.NewSystem(), launcherPath)}
}
