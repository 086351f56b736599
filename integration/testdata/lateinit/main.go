// Command lateinit calls launcher.Init too late: its own subcommand
// dispatch runs first and rejects the launcher's arguments. Only a
// functional probe can tell; with two candidates the provider probes and
// must fail closed.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bo-agent/sandbox-local/launcher"
	"github.com/bo-agent/sandbox-local/sandbox"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "run" {
		fmt.Fprintf(os.Stderr, "usage: lateinit run WORKSPACE RUNNER (got %q)\n", os.Args[1:])
		os.Exit(2)
	}
	if launcher.Init() {
		return
	}
	ws, runner := os.Args[2], os.Args[3]
	p := sandbox.New(sandbox.Config{Runners: []string{runner, runner}})
	_, err := p.Wrap(context.Background(), sandbox.Request{
		Argv:   []string{"true"},
		Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws},
	})
	fmt.Println(err)
}
