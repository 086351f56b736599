// Command floor only execs its arguments: the least any Go launcher can
// cost, the floor the benchmarks compare the runners against.
package main

import (
	"os"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		os.Exit(2)
	}
	err := syscall.Exec(os.Args[1], os.Args[1:], os.Environ())
	os.Stderr.WriteString("floor: " + err.Error() + "\n")
	os.Exit(126)
}
