package sandbox

import (
	"math"
	"os"
	"testing"
	"time"
)

// TestMain removes, after the tests, the cache dirs that the tests' wraps
// made for their temporary workspaces (those of workspaces that are gone).
func TestMain(m *testing.M) {
	code := m.Run()
	PruneCaches(CachesRoot(nil), time.Duration(math.MaxInt64))
	os.Exit(code)
}
