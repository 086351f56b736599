package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/sandbox"
)

// doctor prints what this machine supports and which runner would be used.
// It exits 0 when a runner is selected, 125 when none is.
func doctor(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sandbox-run doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return vocab.FatalExit
	}
	ctx := context.Background()
	p := sandbox.New(sandbox.Config{})
	d := report{Diagnosis: p.Diagnose(ctx)}
	status := 0
	if d.Selected == "" {
		status = vocab.FatalExit
	} else {
		d.DefaultPolicy = defaultPolicy(ctx, p)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(d, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return status
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "os\t%s %s\n", d.Host.OS, d.Host.Kernel)
	fmt.Fprintf(tw, "landlock abi\t%d\n", d.Host.LandlockABI)
	fmt.Fprintf(tw, "seccomp\t%v\n", d.Host.Seccomp)
	fmt.Fprintf(tw, "user namespaces\t%v (%s)\n", d.Host.UserNamespaces, d.Host.UserNamespacesNote)
	for _, c := range d.Candidates {
		verdict := "ok"
		if !c.OK {
			verdict = "FAILED: " + c.Reason
		}
		fmt.Fprintf(tw, "runner %s\t%s\n", c.Runner, verdict)
	}
	sel := d.Selected
	if sel == "" {
		sel = "none: " + d.Error
	}
	fmt.Fprintf(tw, "selected\t%s\n", sel)
	if dp := d.DefaultPolicy; dp != nil {
		switch {
		case dp.Error != "":
			fmt.Fprintf(tw, "default policy\tFAILED: %s\n", vocab.OneLine(dp.Error))
		case dp.Enforcement == sandbox.Full:
			fmt.Fprintf(tw, "default policy\tfull (%s)\n", dp.Runner)
		default:
			fmt.Fprintf(tw, "default policy\tpartial (%s), %d gaps:\n", dp.Runner, len(dp.Gaps))
			for _, g := range dp.Gaps {
				fmt.Fprintf(tw, "  gap\t%s\n", vocab.OneLine(g.String()))
			}
		}
	}
	tw.Flush()
	return status
}

// report is what doctor prints: the provider's diagnosis, and how
// complete the default policy's confinement is here.
type report struct {
	sandbox.Diagnosis
	DefaultPolicy *policyCheck `json:"default_policy,omitempty"`
}

// policyCheck is how the selected runner would confine a command under the
// default policy (workspace-write, network deny): what a run with no flags
// gets, and what its partial notice counts.
type policyCheck struct {
	Runner      string              `json:"runner,omitempty"`
	Enforcement sandbox.Enforcement `json:"enforcement,omitempty"`
	Gaps        []sandbox.Gap       `json:"gaps,omitempty"`
	Error       string              `json:"error,omitempty"`
}

// defaultPolicy wraps (without running) a command under the default
// policy in a scratch workspace.
func defaultPolicy(ctx context.Context, p *sandbox.Provider) *policyCheck {
	ws, err := os.MkdirTemp("", "sandbox-run-doctor-")
	if err != nil {
		return &policyCheck{Error: err.Error()}
	}
	defer os.RemoveAll(ws)
	w, err := p.Wrap(ctx, sandbox.Request{Argv: []string{"true"}, Dir: ws,
		// Caches off: the scratch workspace is removed at once, and its
		// caches' dir would be left behind for cache prune.
		Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws, Network: sandbox.NetworkDeny,
			Caches: sandbox.CachePolicy{Off: true}}})
	if err != nil {
		return &policyCheck{Error: err.Error()}
	}
	defer w.Cleanup()
	return &policyCheck{Runner: w.Runner, Enforcement: w.Enforcement, Gaps: w.Gaps}
}
