package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// policyFlags names, for each field of a policy file (its JSON name, as
// the report writes the policy), the flags that set it: a field stands
// unless one of its flags is given, which then replaces it whole.
var policyFlags = map[string][]string{
	"mode":                       {"mode"},
	"workspace":                  {"workspace"},
	"writable_roots":             {"allow-write"},
	"read_only_subpaths":         {"read-only"},
	"writable_configs":           {"writable-config"},
	"deny_read":                  {"deny-read"},
	"allow_read":                 {"allow-read"},
	"network":                    {"network", "allow-domain"}, // --allow-domain alone selects proxied
	"allow_domains":              {"allow-domain"},
	"deny_domains":               {"deny-domain"},
	"allow_private_destinations": {"allow-private-destinations"},
	"allow_local_ports":          {"allow-local-port"},
	"allow_unix_sockets":         {"allow-unix-socket"},
	"require_full":               {"require-full"},
	"limits":                     {"max-processes", "max-memory", "max-temp-size"},
	"env":                        {"keep-env", "unsetenv", "setenv", "clearenv", "minimal-env"},
	"caches":                     {"no-caches", "cache-dir", "no-cache", "no-cache-warm"},
}

// maxPolicyFile bounds what --policy reads.
const maxPolicyFile = 1 << 20

// applyPolicyFile reads the policy file at path (JSON, the field names of
// sandbox.Policy, an unknown field refused by name) and sets in dst each
// field it has whose flags were not given. It returns the file's fields.
func applyPolicyFile(dst *sandbox.Policy, path string, given map[string]bool) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPolicyFile+1))
	if err != nil {
		return nil, fmt.Errorf("--policy %s: %w", path, err)
	}
	if len(b) > maxPolicyFile {
		return nil, fmt.Errorf("--policy %s: larger than %d bytes", path, maxPolicyFile)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, fmt.Errorf("--policy %s: not a JSON object: %w", path, err)
	}
	var src sandbox.Policy
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&src); err != nil {
		return nil, fmt.Errorf("--policy %s: %s", path, strings.TrimPrefix(err.Error(), "json: "))
	}
	var fields []string
	dv, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for i := 0; i < sv.NumField(); i++ {
		name := jsonName(sv.Type().Field(i))
		if _, ok := keys[name]; !ok {
			continue
		}
		fields = append(fields, name)
		if !slices.ContainsFunc(policyFlags[name], func(f string) bool { return given[f] }) {
			dv.Field(i).Set(sv.Field(i))
		}
	}
	return fields, nil
}

// jsonName is a struct field's name in JSON.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}
