package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/launcher"
)

func TestMain(m *testing.M) {
	if launcher.Init() {
		return
	}
	os.Exit(m.Run())
}

// TestQuickstart runs the README's program: the write inside the
// workspace lands, the one outside is refused and named, and an invalid
// workspace runs nothing.
func TestQuickstart(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "quickstart-") // not /tmp: the namespaces runner makes it private
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	ws := filepath.Join(base, "ws")
	os.Mkdir(ws, 0o755)
	outside := filepath.Join(base, "outside")
	var out, errb bytes.Buffer
	code := run(ws, []string{"sh", "-c", "echo hi > f && cat f && echo x > " + outside}, nil, &out, &errb)
	if code == 0 || out.String() != "hi\n" || !strings.Contains(errb.String(), "the sandbox likely refused") {
		t.Errorf("exit %d stdout %q stderr %q; want hi, then the refused write named", code, out.String(), errb.String())
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the write outside the workspace landed: %v", err)
	}
	out.Reset()
	errb.Reset()
	if code := run(filepath.Join(base, "missing"), []string{"sh", "-c", "touch " + outside}, nil, &out, &errb); code != 125 || !strings.Contains(errb.String(), "INVALID_POLICY") {
		t.Errorf("missing workspace: exit %d stderr %q; want 125 and INVALID_POLICY", code, errb.String())
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the command ran with an invalid policy: %v", err)
	}
}
