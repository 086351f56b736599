package main

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// TestPolicyFlagsCoverEveryField: each field of the policy has a flag
// registered with it (newFlags), so a flag always wins over the file (a
// field without one would silently beat its flag), and each flag
// registered as the policy's sets a field of it.
func TestPolicyFlagsCoverEveryField(t *testing.T) {
	c := newFlags()
	covered := c.overridden(map[string]bool{})
	c.fs.VisitAll(func(f *flag.Flag) {
		fields, ok := c.fields[f.Name]
		if ok && len(fields) == 0 {
			t.Errorf("flag --%s is registered as the policy's but sets none of its fields", f.Name)
		}
		for _, field := range fields {
			covered[field] = true
		}
	})
	typ := reflect.TypeOf(sandbox.Policy{})
	for i := 0; i < typ.NumField(); i++ {
		if name := jsonName(typ.Field(i)); !covered[name] {
			t.Errorf("policy field %s (%s) has no flag registered with it in newFlags", typ.Field(i).Name, name)
		}
	}
	for flagName, want := range map[string][]string{"deny-read": {"deny_read"}, "allow-registry": {"allow_domains", "network"},
		"max-memory": {"limits"}, "clearenv": {"env"}, "no-cache": {"caches"}, "runner": nil} {
		if got := c.fields[flagName]; !slices.Equal(got, want) {
			t.Errorf("--%s sets %q, want %q", flagName, got, want)
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
		name   string
		path   string
		fields map[string]bool
		want   sandbox.Policy
		err    string
	}{
		{"the file's fields", good, nil,
			sandbox.Policy{Mode: sandbox.ReadOnly, Workspace: "/flags", DenyRead: []string{"/a"}, Network: sandbox.NetworkAllow, Env: sandbox.EnvPolicy{Keep: []string{"X"}}}, ""},
		{"a flag replaces its field", good, newFlags().overridden(map[string]bool{"deny-read": true, "allow-domain": true, "unsetenv": true}),
			sandbox.Policy{Mode: sandbox.ReadOnly, Workspace: "/flags", DenyRead: []string{"/flag"}, Network: sandbox.NetworkDeny}, ""},
		{"unknown field", write("bad.json", `{"mode": "read-only", "writable_root": ["/x"]}`), nil, sandbox.Policy{}, `unknown field "writable_root"`},
		{"wrong type", write("type.json", `{"deny_read": "/x"}`), nil, sandbox.Policy{}, "deny_read"},
		{"not an object", write("list.json", `[]`), nil, sandbox.Policy{}, "not a JSON object"},
		{"another case", write("case.json", `{"Require_Full": true}`), nil, sandbox.Policy{}, `unknown field "Require_Full"`},
		{"a nested field in another case", write("nested.json", `{"env": {"Keep": ["X"]}}`), nil, sandbox.Policy{}, `unknown field "env.Keep"`},
		{"a name twice", write("twice.json", `{"deny_read": ["/a"], "deny_read": []}`), nil, sandbox.Policy{}, `field "deny_read" given twice`},
		{"a name twice, in another case", write("twice2.json", `{"deny_read": ["/a"], "Deny_Read": []}`), nil, sandbox.Policy{}, `unknown field "Deny_Read"`},
		{"a variable set twice", write("set.json", `{"env": {"set": {"A": "1", "A": "2"}}}`), nil, sandbox.Policy{}, `field "env.set.A" given twice`},
		{"missing", filepath.Join(dir, "none.json"), nil, sandbox.Policy{}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: "/flags", DenyRead: []string{"/flag"}, Network: sandbox.NetworkDeny}
			_, err := applyPolicyFile(&p, tt.path, tt.fields)
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
