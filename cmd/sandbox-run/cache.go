package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"github.com/bo-agent/sandbox-local/sandbox"
)

// cacheToolNames are the names --no-cache takes.
func cacheToolNames() []string {
	var n []string
	for _, t := range sandbox.CacheTools() {
		n = append(n, t.Name)
	}
	return n
}

// cacheCmd lists or prunes the workspaces' cache dirs:
//
//	sandbox-run cache list [--json]
//	sandbox-run cache prune [--unused DURATION] [--all]
//
// prune removes the caches of workspaces that are gone, and those unused
// for --unused (default 30 days); --all removes every one.
func cacheCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "list" && args[0] != "prune") {
		fmt.Fprintln(stderr, "usage: sandbox-run cache list [--json] | sandbox-run cache prune [--unused DURATION] [--all]")
		return 2
	}
	fs := flag.NewFlagSet("sandbox-run cache "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	unused := fs.Duration("unused", 30*24*time.Hour, "prune: also remove the caches no run used for this long")
	all := fs.Bool("all", false, "prune: remove every workspace's caches")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	root := sandbox.CachesRoot(nil)
	if root == "" {
		fmt.Fprintln(stderr, "sandbox-run: no user cache directory (HOME, XDG_CACHE_HOME)")
		return vocab.FatalExit
	}
	var dirs []sandbox.CacheDir
	var err error
	if args[0] == "list" {
		dirs, err = sandbox.ListCaches(root)
	} else {
		if *all {
			*unused = 0
		}
		dirs, err = sandbox.PruneCaches(root, *unused)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(dirs, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		var total int64
		for _, d := range dirs {
			ws := d.Workspace
			if d.WorkspaceGone {
				ws += " (gone)"
			}
			used := "-"
			if !d.LastUsed.IsZero() {
				used = d.LastUsed.Local().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", size(d.Size), used, ws, d.Dir)
			total += d.Size
		}
		verb := "in"
		if args[0] == "prune" {
			verb = "removed from"
		}
		fmt.Fprintf(tw, "%s\t%d caches %s %s\n", size(total), len(dirs), verb, root)
		tw.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "sandbox-run: %s\n", vocab.OneLine(err.Error()))
		return 1
	}
	return 0
}

// size is n bytes for a person.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
