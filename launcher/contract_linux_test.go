package launcher

import (
	"os"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// TestContractHeaderIsCurrent: the C starts read the launcher contract
// from contract_linux.h, which package vocab generates; a change on the Go
// side must reach the C side.
func TestContractHeaderIsCurrent(t *testing.T) {
	b, err := os.ReadFile("contract_linux.h")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != vocab.CHeader() {
		t.Fatal("launcher/contract_linux.h is stale: run go generate ./launcher")
	}
}
