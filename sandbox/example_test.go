package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// The main flow. A program that uses the sandbox calls launcher.Init first
// in main, so that its own binary can act as the launcher:
//
//	func main() {
//		if launcher.Init() {
//			return
//		}
//		...
//	}
func Example() {
	ctx := context.Background()
	ws, _ := os.Getwd()
	w, err := sandbox.Default().Wrap(ctx, sandbox.Request{
		Argv: []string{"make", "test"},
		Policy: sandbox.Policy{
			Mode:      sandbox.WorkspaceWrite,
			Workspace: ws,
			DenyRead:  []string{os.ExpandEnv("$HOME/.ssh")},
			Network:   sandbox.NetworkDeny,
		},
	})
	if errors.Is(err, sandbox.ErrUnavailable) {
		log.Printf("not running the command: %v", err) // fail closed
		return
	}
	if err != nil {
		log.Fatal(err) // INVALID_POLICY: nothing was spawned
	}
	defer w.Cleanup()
	if w.Enforcement == sandbox.Partial {
		log.Printf("%s confines this command partially: %v", w.Runner, w.Gaps)
	}
	o, err := w.Run(ctx, os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		log.Fatal(err) // the launcher could not be started
	}
	switch o.Kind {
	case sandbox.OutcomeRunnerFailure:
		log.Printf("the sandbox failed before the command ran: %s", o.Reason)
	case sandbox.OutcomeDenied:
		log.Printf("exit %d; the sandbox likely refused something (%q)", o.ExitCode, o.Reason)
	case sandbox.OutcomeTimeout, sandbox.OutcomeCancelled:
		log.Printf("stopped: %s", o.Kind)
	default:
		log.Printf("exit %d", o.ExitCode)
	}
}

// A consumer that spawns the command itself keeps the start of its stderr
// for Classify.
func ExampleWrapped_Command() {
	ctx := context.Background()
	ws, _ := os.Getwd()
	w, err := sandbox.Default().Wrap(ctx, sandbox.Request{Argv: []string{"make", "test"},
		Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws}})
	if err != nil {
		log.Printf("not running the command: %v", err) // fail closed
		return
	}
	defer w.Cleanup()
	cmd := w.Command(ctx)
	var stderr limitedBuffer
	cmd.Stdout, cmd.Stderr = os.Stdout, &stderr
	cmd.Run()
	o := w.Classify(cmd.ProcessState.ExitCode(), stderr.b)
	log.Printf("%s, exit %d", o.Kind, o.ExitCode)
}

// limitedBuffer keeps the first 64 KiB written to it: the launcher's own
// lines come first, so that is all Classify needs.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 64<<10 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Classify tells a command's own failure from the sandbox's. The signed
// fatal line is only believed together with the launcher's exit status.
func ExampleWrapped_Classify() {
	w := &sandbox.Wrapped{
		DenialSignatures: []string{"Permission denied"},
		RunnerFailure: sandbox.RunnerFailureRule{
			Kind:        sandbox.RuleExitAndLine,
			ExitCode:    125,
			FatalPrefix: "landlock-run: fatal: [0123456789abcdef0123456789abcdef] ",
		},
	}
	for _, r := range []struct {
		code   int
		stderr string
	}{
		{0, ""},
		{2, "make: *** [test] Error 2\n"},
		{1, "sh: cannot create /etc/x: Permission denied\n"},
		{125, "landlock-run: fatal: [0123456789abcdef0123456789abcdef] landlock ruleset: no such file\n"},
		{125, "landlock-run: fatal: [ffffffffffffffffffffffffffffffff] forged by the command\n"},
	} {
		o := w.Classify(r.code, []byte(r.stderr))
		fmt.Println(r.code, o.Kind)
	}
	// Output:
	// 0 child
	// 2 child
	// 1 likely-denied
	// 125 runner-failure
	// 125 child
}
