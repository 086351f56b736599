package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"text/tabwriter"
	"time"
)

// workload is file-heavy work timed under each variant: prepare (not
// timed) makes what the round needs, argv is timed, and the tree the
// round made is removed afterwards (not timed).
type workload struct {
	name string
	argv func(src, dest string) []string
}

// workloads are the shapes of npm install, git checkout and unpacking an
// archive: tens of thousands of creates, chmods and utimes. Each runs on
// the tree the untar before it made in the same round.
var workloads = []workload{
	// tar's defaults: as root, owners and modes kept (a chown and chmod per file).
	{"untar", func(src, dest string) []string { return []string{"tar", "-xf", src, "-C", dest} }},
	{"untar --no-same-*", func(src, dest string) []string {
		return []string{"tar", "--no-same-owner", "--no-same-permissions", "-xf", src, "-C", dest + "/b"}
	}},
	{"chmod -R", func(src, dest string) []string { return []string{"chmod", "-R", "u+rwX,go-w", dest} }},
}

// workDir is where the file-heavy work runs: a tmpfs of its own when
// the caller is root (so the disk hides nothing), else the disk.
func workDir() (dir string, done func(), err error) {
	dir, err = os.MkdirTemp("/var/tmp", "benchcmp-work-")
	if err != nil {
		return "", nil, err
	}
	if os.Geteuid() == 0 {
		unmount, err := mountTmpfs(dir)
		if err != nil {
			os.Remove(dir)
			return "", nil, fmt.Errorf("mount a tmpfs on %s: %w", dir, err)
		}
		fmt.Println("work: on a tmpfs")
		return dir, func() { unmount(); os.Remove(dir) }, nil
	}
	fmt.Println("work: not root, so on the disk under /var/tmp (no tmpfs of its own)")
	return dir, func() { os.RemoveAll(dir) }, nil
}

// sourceTar archives the Go tree's src (about 12k files) into dir.
func sourceTar(dir string) (string, error) {
	tarball := filepath.Join(dir, "src.tar")
	if out, err := exec.Command("tar", "-cf", tarball, "-C", runtime.GOROOT(), "src").CombinedOutput(); err != nil {
		return "", fmt.Errorf("archive GOROOT/src: %v %s", err, out)
	}
	return tarball, nil
}

// runWork times each workload under each variant, interleaved: in every
// round each variant untars into a fresh directory of the workspace, then
// runs the other workloads on that tree.
func runWork(rounds int, variants []variant, ws, tarball string) error {
	times := make([][][]time.Duration, len(workloads))
	for w := range workloads {
		times[w] = make([][]time.Duration, len(variants))
	}
	for r := 0; r < rounds; r++ {
		for i, v := range variants {
			dest := filepath.Join(ws, v.name+"-"+strconv.Itoa(r))
			if err := os.MkdirAll(filepath.Join(dest, "b"), 0o755); err != nil {
				return err
			}
			for w, wl := range workloads {
				d, err := v.run(wl.argv(tarball, dest))
				if err != nil {
					return fmt.Errorf("%s %s: %w", v.name, wl.name, err)
				}
				times[w][i] = append(times[w][i], d)
			}
			if err := os.RemoveAll(dest); err != nil {
				return err
			}
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "work\tvariant\tmedian\tp25-p75\tvs bare\tvs bwrap\t\n")
	for w, wl := range workloads {
		med := make([]time.Duration, len(variants))
		for i := range variants {
			med[i] = quantile(times[w][i], 2)
		}
		for i, v := range variants {
			fmt.Fprintf(tw, "%s\t%s\t%.1f ms\t%.1f-%.1f\t%s\t%s\t\n", wl.name, v.name, ms(med[i]),
				ms(quantile(times[w][i], 1)), ms(quantile(times[w][i], 3)),
				ratio(med[i], med, variants, "bare"), ratio(med[i], med, variants, "bwrap"))
		}
	}
	return tw.Flush()
}
