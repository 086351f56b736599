//go:build linux

package launcher

import (
	"os"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// TestCReleasesTheHeldPrefix: ns-run's C stage renames back exactly the
// prefix the provider holds variables under (it knows nothing else).
func TestCReleasesTheHeldPrefix(t *testing.T) {
	b, err := os.ReadFile("ns_stage2_linux.c")
	if err != nil {
		t.Fatal(err)
	}
	if want := `#define SBX_HELD_ENV_PREFIX "` + vocab.HeldEnvPrefix + `"`; !strings.Contains(string(b), want) {
		t.Errorf("ns_stage2_linux.c does not define %s", want)
	}
}
