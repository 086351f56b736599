// Command euid prints its effective uid. Installed setuid, it shows whether
// the setuid bit took effect: the setuid test runs it unconfined (it must)
// and inside the sandbox (it must not).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Printf("euid %d\n", os.Geteuid())
}
