// Command quickstart runs one command confined to a workspace: the
// library's main flow as a complete program (the README shows it, and its
// test runs it).
//
//	quickstart WORKSPACE CMD [ARG...]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bo-agent/sandbox-local/launcher"
	"github.com/bo-agent/sandbox-local/sandbox"
)

func main() {
	if launcher.Init() { // first: this binary is also the sandbox's launcher
		return
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: quickstart WORKSPACE CMD [ARG...]")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs argv confined to ws and returns the exit status to use.
func run(ws string, argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w, err := sandbox.Default().Wrap(ctx, sandbox.Request{
		Argv: argv,
		Dir:  ws,
		Policy: sandbox.Policy{
			Mode:      sandbox.WorkspaceWrite,
			Workspace: ws,
			Network:   sandbox.NetworkDeny,
		},
	})
	if errors.Is(err, sandbox.ErrUnavailable) {
		fmt.Fprintln(stderr, "not run: no sandbox here:", err) // fail closed
		return 125
	}
	if err != nil {
		fmt.Fprintln(stderr, "not run:", err) // an invalid policy: nothing was spawned
		return 125
	}
	defer w.Cleanup()
	if w.Enforcement == sandbox.Partial {
		fmt.Fprintf(stderr, "partial confinement (%s): %d gaps\n", w.Runner, len(w.Gaps))
	}
	o, err := w.Run(ctx, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "not run:", err)
		return 125
	}
	switch o.Kind {
	case sandbox.OutcomeRunnerFailure:
		fmt.Fprintln(stderr, "the sandbox failed before the command ran:", o.Reason)
		return 125
	case sandbox.OutcomeDenied:
		fmt.Fprintf(stderr, "exit %d: the sandbox likely refused something (%q)\n", o.ExitCode, o.Reason)
	case sandbox.OutcomeTimeout, sandbox.OutcomeCancelled:
		fmt.Fprintln(stderr, "stopped:", o.Kind)
		return 124
	}
	if o.ExitCode < 0 {
		return 1 // died of a signal
	}
	return o.ExitCode
}
