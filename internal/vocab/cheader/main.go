// Command cheader writes launcher/contract_linux.h from package vocab
// (vocab.CHeader): go generate ./launcher.
package main

import (
	"fmt"
	"os"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cheader FILE")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(vocab.CHeader()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "cheader:", err)
		os.Exit(1)
	}
}
