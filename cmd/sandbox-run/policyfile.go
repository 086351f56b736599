package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/nativepath"
	"github.com/bo-agent/sandbox-local/sandbox"
)

// holder returns the root of roots (resolved, as commandRoots makes them)
// that holds the file at path, symlinks resolved, or "".
func holder(path string, roots []string) string {
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	for _, root := range roots {
		if nativepath.Within(real, root) {
			return root
		}
	}
	return ""
}

// maxPolicyFile bounds what --policy reads.
const maxPolicyFile = 1 << 20

// applyPolicyFile reads the policy file at path (JSON, the field names of
// sandbox.Policy, an unknown field refused by name) and sets in dst each
// field it has that a given flag does not set (overridden, by JSON name:
// cliFlags.overridden). It returns the file's fields.
func applyPolicyFile(dst *sandbox.Policy, path string, overridden map[string]bool) ([]string, error) {
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
	// encoding/json matches names in any case and keeps the last of a
	// name given twice: a file that reads one way to a person and another
	// to the decoder is refused.
	if err := exactKeys(json.NewDecoder(bytes.NewReader(b)), reflect.TypeOf(sandbox.Policy{}), ""); err != nil {
		return nil, fmt.Errorf("--policy %s: %w", path, err)
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
		if !overridden[name] {
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

// exactKeys reads one JSON value from dec and refuses, in every object
// that decodes into a struct, a name that is not a field's JSON name
// exactly, and in every object a name given twice. at is the value's place
// in the file, for the message.
func exactKeys(dec *json.Decoder, typ reflect.Type, at string) error {
	for typ != nil && typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			name := strings.TrimPrefix(at+"."+key, ".")
			if seen[key] {
				return fmt.Errorf("field %q given twice", name)
			}
			seen[key] = true
			var elem reflect.Type
			switch {
			case typ != nil && typ.Kind() == reflect.Struct:
				f, ok := fieldByJSONName(typ, key)
				if !ok {
					return fmt.Errorf("unknown field %q", name)
				}
				elem = f.Type
			case typ != nil && typ.Kind() == reflect.Map:
				elem = typ.Elem()
			}
			if err := exactKeys(dec, elem, name); err != nil {
				return err
			}
		}
		_, err = dec.Token() // }
		return err
	case json.Delim('['):
		var elem reflect.Type
		if typ != nil && (typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array) {
			elem = typ.Elem()
		}
		for dec.More() {
			if err := exactKeys(dec, elem, at+"[]"); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ]
		return err
	}
	return nil
}

// fieldByJSONName returns the field of struct typ whose JSON name is
// exactly name.
func fieldByJSONName(typ reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < typ.NumField(); i++ {
		if f := typ.Field(i); f.IsExported() && jsonName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
