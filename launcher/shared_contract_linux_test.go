package launcher

import (
	"os"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/llrights"
	"github.com/bo-agent/sandbox-local/internal/metarules"
	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// TestGeneratedHeadersAreCurrent: the C starts read the launcher contract
// from shared_contract_linux.h, which package vocab generates, and the C metadata
// supervisor its limits and answers from landlock_metadata_rules_linux.h, which
// package metarules generates (for it and the Go supervisor both); a
// change on the Go side must reach the C side.
func TestGeneratedHeadersAreCurrent(t *testing.T) {
	for name, want := range map[string]string{
		"shared_contract_linux.h":         vocab.CHeader(),
		"landlock_metadata_rules_linux.h": metarules.CHeader(),
		"landlock_rights_linux.h":         llrights.CHeader(),
	} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("launcher/%s is stale: run go generate ./launcher", name)
		}
	}
}
