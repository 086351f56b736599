//go:build cgo

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The programs package seccompfilter embeds are the ones libseccomp
// compiles from the definition now: every key, every architecture. The
// first line names the libseccomp that compiled them and is compared only
// to say so when the programs differ.
func TestGeneratedFilesCurrent(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Errorf("%v: run go generate ./internal/seccompfilter", err)
			continue
		}
		gotHead, gotBody, _ := bytes.Cut(got, []byte("\n"))
		wantHead, wantBody, _ := bytes.Cut(want, []byte("\n"))
		if bytes.Equal(gotBody, wantBody) {
			continue
		}
		why := ""
		if !bytes.Equal(gotHead, wantHead) {
			why = "; it was generated " + strings.TrimPrefix(string(gotHead), "// ") +
				", this is " + strings.TrimPrefix(string(wantHead), "// ") +
				" (another libseccomp may compile the same rules otherwise: CI generates with Debian bookworm's)"
		}
		t.Errorf("internal/seccompfilter/%s differs from what the definition (gen/filter_linux.go) compiles to now: run go generate ./internal/seccompfilter%s", name, why)
	}
	// No file of an architecture no longer generated is left behind.
	old, err := filepath.Glob(filepath.Join("..", "programs_linux*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range old {
		if _, ok := files[filepath.Base(p)]; !ok {
			t.Errorf("internal/seccompfilter/%s is not generated any more: remove it", filepath.Base(p))
		}
	}
}
