// Command noinit is a consumer that forgot launcher.Init: it must get
// SANDBOX_UNAVAILABLE from Wrap, never a runnable wrap.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bo-agent/sandbox-local/sandbox"
)

func main() {
	ws := os.Args[1]
	_, err := sandbox.Default().Wrap(context.Background(), sandbox.Request{
		Argv:   []string{"true"},
		Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws},
	})
	fmt.Println(err)
}
