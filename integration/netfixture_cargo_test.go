//go:build linux

package integration

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The cargo registry fixture: a sparse index (config.json and one index
// file) and the .crate download of sbx-hello 1.0.0.
const (
	sbxCrate    = "sbx-hello"
	sbxCrateVer = "1.0.0"
)

// crateFile builds sbx-hello-1.0.0.crate.
func crateFile(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	dir := sbxCrate + "-" + sbxCrateVer + "/"
	for _, f := range []struct{ name, body string }{
		{dir + "Cargo.toml", "[package]\nname = \"" + sbxCrate + "\"\nversion = \"" + sbxCrateVer + "\"\nedition = \"2021\"\n"},
		{dir + "src/lib.rs", "pub fn hello() -> &'static str { \"hello from the sbx crate\" }\n"},
	} {
		hdr := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), ModTime: time.Unix(1767225600, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, f.body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// startCargoRegistry serves the sparse index under /index/ (its dl URL
// naming the host the client asked for) and the crate under /dl/, and
// redirects /moved/... to sbxOther.
func (w *netWorld) startCargoRegistry(t *testing.T) (*httptest.Server, []byte) {
	t.Helper()
	crate := crateFile(t)
	sum := sha256.Sum256(crate)
	line := fmt.Sprintf(`{"name":%q,"vers":%q,"deps":[],"cksum":%q,"features":{},"yanked":false}`+"\n", sbxCrate, sbxCrateVer, hex.EncodeToString(sum[:]))
	indexPath := "/index/" + sbxCrate[:2] + "/" + sbxCrate[2:4] + "/" + sbxCrate
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/moved"); ok {
			redirectToOther(rw, r, rest)
			return
		}
		switch r.URL.Path {
		case "/index/config.json":
			_, port, _ := net.SplitHostPort(r.Host)
			host, _, _ := net.SplitHostPort(r.Host)
			rw.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(rw, `{"dl":"https://%s/dl/{crate}/{version}/download"}`, net.JoinHostPort(host, port))
		case indexPath:
			io.WriteString(rw, line)
		case "/dl/" + sbxCrate + "/" + sbxCrateVer + "/download":
			rw.Header().Set("Content-Type", "application/octet-stream")
			rw.Write(crate)
		default:
			http.NotFound(rw, r)
		}
	})
	s := httptest.NewUnstartedServer(w.counted(h))
	s.TLS = w.HTTPS.TLS.Clone()
	s.StartTLS()
	t.Cleanup(s.Close)
	return s, crate
}
