// Package launcher is what runs inside the re-executed binary. A program
// that uses package sandbox must call Init first in main:
//
//	func main() {
//		if launcher.Init() {
//			return
//		}
//		...
//	}
//
// When the binary was started as a launcher (argv[0] is "landlock-run",
// "ns-run" or "winacl-run", see internal/vocab), Init confines the process
// as its arguments say and execs the command; it does not return. On a
// failure before exec it prints one line "NAME: fatal: [TOKEN] reason" on
// stderr and exits 125. On darwin, argv[1] "seatbelt-run" is the step
// sandbox-exec starts inside the applied sandbox: it reports the sandbox
// applied and execs the command (see seatbeltStep). With argv[1]
// "sandbox-local-gocacheprog" it serves the go command's build cache
// inside the sandbox (package internal/gocacheprog, named by the wrap's
// GOCACHEPROG) and exits. Otherwise Init returns false at once.
//
// ns-run (the namespaces runner) never gets as far as Init: it is C that
// runs from a constructor before the Go runtime starts (ns_stage1_linux.c,
// ns_stage2_linux.c) and execs the command from there.
//
// Without Init, the re-executed binary would run the program's own main
// with launcher arguments: package sandbox detects that and fails closed.
package launcher

import (
	"os"

	"github.com/bo-agent/sandbox-local/internal/gocacheprog"
	"github.com/bo-agent/sandbox-local/internal/selfexe"
	"github.com/moby/sys/reexec"
)

func init() {
	for name, fn := range launchers() {
		reexec.Register(name, fn)
	}
}

// Init runs the launcher if this process was started as one, and reports
// whether it did (it only returns true when a launcher returned, which the
// launchers of this package never do). Call it first in main and in
// TestMain.
func Init() bool {
	selfexe.MarkInit()
	if argvLauncher() {
		return true
	}
	if len(os.Args) > 1 && os.Args[1] == gocacheprog.Arg {
		os.Exit(gocacheprog.Main(os.Args[2:]))
	}
	return reexec.Init()
}
