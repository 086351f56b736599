package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// TestPolicyFlagsCoverEveryField: each field of the policy has the flags
// that set it, so a flag always wins over the file (a field without one
// would silently beat its flag).
func TestPolicyFlagsCoverEveryField(t *testing.T) {
	typ := reflect.TypeOf(sandbox.Policy{})
	for i := 0; i < typ.NumField(); i++ {
		if name := jsonName(typ.Field(i)); len(policyFlags[name]) == 0 {
			t.Errorf("policy field %s (%s) has no flag in policyFlags", typ.Field(i).Name, name)
		}
	}
}

func TestApplyPolicyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"mode": "read-only", "deny_read": ["/a"], "network": "allow", "env": {"keep": ["X"]}}`)
	tests := []struct {
		name  string
		path  string
		given map[string]bool
		want  sandbox.Policy
		err   string
	}{
		{"the file's fields", good, nil,
			sandbox.Policy{Mode: sandbox.ReadOnly, Workspace: "/flags", DenyRead: []string{"/a"}, Network: sandbox.NetworkAllow, Env: sandbox.EnvPolicy{Keep: []string{"X"}}}, ""},
		{"a flag replaces its field", good, map[string]bool{"deny-read": true, "allow-domain": true, "unsetenv": true},
			sandbox.Policy{Mode: sandbox.ReadOnly, Workspace: "/flags", DenyRead: []string{"/flag"}, Network: sandbox.NetworkDeny}, ""},
		{"unknown field", write("bad.json", `{"mode": "read-only", "writable_root": ["/x"]}`), nil, sandbox.Policy{}, `unknown field "writable_root"`},
		{"wrong type", write("type.json", `{"deny_read": "/x"}`), nil, sandbox.Policy{}, "deny_read"},
		{"not an object", write("list.json", `[]`), nil, sandbox.Policy{}, "not a JSON object"},
		{"missing", filepath.Join(dir, "none.json"), nil, sandbox.Policy{}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: "/flags", DenyRead: []string{"/flag"}, Network: sandbox.NetworkDeny}
			_, err := applyPolicyFile(&p, tt.path, tt.given)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(p, tt.want) {
				t.Errorf("got %+v (%v), want %+v", p, err, tt.want)
			}
		})
	}
}
