//go:build linux

package integration

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The Python package index fixture: a PEP 503 simple index with one
// wheel, sbx-hello 1.0.0.
const (
	sbxPyPkg   = "sbx-hello"
	sbxPyWheel = "sbx_hello-1.0.0-py3-none-any.whl"
)

// pyWheel builds the wheel: the module, METADATA, WHEEL and a RECORD
// with every file's hash.
func pyWheel(t testing.TB) []byte {
	t.Helper()
	files := []struct{ name, body string }{
		{"sbx_hello/__init__.py", "HELLO = \"hello from the sbx wheel\"\n"},
		{"sbx_hello-1.0.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: sbx-hello\nVersion: 1.0.0\n"},
		{"sbx_hello-1.0.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: sandbox-local-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var record strings.Builder
	for _, f := range files {
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("sbx_hello-1.0.0.dist-info/RECORD,,\n")
	files = append(files, struct{ name, body string }{"sbx_hello-1.0.0.dist-info/RECORD", record.String()})
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f.body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// startPyIndex serves /simple/sbx-hello/ and the wheel under /files/, and
// redirects /moved/... to sbxOther; it returns the server and the wheel.
func (w *netWorld) startPyIndex(t *testing.T) (*httptest.Server, []byte) {
	t.Helper()
	whl := pyWheel(t)
	sum := sha256.Sum256(whl)
	page := fmt.Sprintf("<!DOCTYPE html>\n<html><body>\n<a href=\"/files/%s#sha256=%s\">%s</a>\n</body></html>\n",
		sbxPyWheel, hex.EncodeToString(sum[:]), sbxPyWheel)
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/moved"); ok {
			redirectToOther(rw, r, rest)
			return
		}
		switch r.URL.Path {
		case "/simple/" + sbxPyPkg + "/":
			rw.Header().Set("Content-Type", "text/html")
			io.WriteString(rw, page)
		case "/simple/" + sbxPyPkg:
			http.Redirect(rw, r, "/simple/"+sbxPyPkg+"/", http.StatusMovedPermanently)
		case "/files/" + sbxPyWheel:
			// As PyPI serves its files: pip keeps only a response
			// that says how long it stays fresh.
			rw.Header().Set("Cache-Control", "max-age=365000000, immutable, public")
			rw.Header().Set("Content-Type", "application/octet-stream")
			rw.Write(whl)
		default:
			http.NotFound(rw, r)
		}
	})
	s := httptest.NewUnstartedServer(w.counted(h))
	s.TLS = w.HTTPS.TLS.Clone()
	s.StartTLS()
	t.Cleanup(s.Close)
	return s, whl
}
