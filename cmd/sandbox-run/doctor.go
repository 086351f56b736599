package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
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
	d := sandbox.New(sandbox.Config{}).Diagnose(context.Background())
	status := 0
	if d.Selected == "" {
		status = vocab.FatalExit
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
	tw.Flush()
	return status
}
