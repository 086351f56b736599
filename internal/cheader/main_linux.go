// Command cheader writes the launcher's C headers that are generated from
// Go, into the directory it is given (go generate ./launcher):
// shared_contract_linux.h from package vocab (vocab.CHeader), the launcher
// contract, and landlock_metadata_rules_linux.h from package metarules
// (metarules.CHeader), the metadata supervisor's rules, and
// landlock_rights_linux.h from package llrights (llrights.CHeader), the
// rights the landlock runner handles and grants.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bo-agent/sandbox-local/internal/llrights"
	"github.com/bo-agent/sandbox-local/internal/metarules"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cheader DIR")
		os.Exit(2)
	}
	for name, text := range map[string]string{
		"shared_contract_linux.h":         vocab.CHeader(),
		"landlock_metadata_rules_linux.h": metarules.CHeader(),
		"landlock_rights_linux.h":         llrights.CHeader(),
	} {
		if err := os.WriteFile(filepath.Join(os.Args[1], name), []byte(text), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "cheader:", err)
			os.Exit(1)
		}
	}
}
