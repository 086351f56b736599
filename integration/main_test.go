//go:build linux

// Package integration runs real commands under real policies on the real
// kernel and asserts what happened on the host afterwards. Every case runs
// for every Linux runner, as whichever user runs the test binary (scripts/test
// runs it as root and again as an unprivileged user).
package integration

import (
	"math"
	"os"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/launcher"
	"github.com/bo-agent/sandbox-local/sandbox"
)

func TestMain(m *testing.M) {
	if launcher.Init() {
		return
	}
	// The test binary doubles as the attack tool run inside the sandbox, so
	// no interpreter or per-user tool is needed: see tools_test.go.
	if len(os.Args) > 1 && os.Args[1] == toolArg {
		os.Exit(runTool(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == jobShellArg {
		os.Exit(jobShell(os.Args[2:]))
	}
	code := m.Run()
	// The cache dirs the cases' wraps made for their workspaces, all gone.
	sandbox.PruneCaches(sandbox.CachesRoot(nil), time.Duration(math.MaxInt64))
	if helpersDir != "" {
		os.RemoveAll(helpersDir)
	}
	os.Exit(code)
}
