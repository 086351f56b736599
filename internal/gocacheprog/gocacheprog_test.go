package gocacheprog

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// userEntry puts body under action in dir, in the go command's format;
// the output file holds stored (body, unless a test tampers with it).
func userEntry(t *testing.T, dir string, action [32]byte, body, stored string) [32]byte {
	t.Helper()
	out := sha256.Sum256([]byte(body))
	for p, c := range map[string]string{
		fileName(dir, action[:], "a"): fmt.Sprintf("v1 %x %x %20d %20d\n", action, out, len(body), 1),
		fileName(dir, out[:], "d"):    stored,
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestServe speaks the protocol as the go command does (a request, an
// empty line, a put's body as a base64 JSON string): a get the user's
// cache holds is copied into the sandbox's and served from there; one
// whose output is not the entry's size is a miss; a put is served back. A
// run the user's cache served leaves no warm marker; one it did not, does.
func TestServe(t *testing.T) {
	own, user := t.TempDir(), t.TempDir()
	good, bad, fresh := sha256.Sum256([]byte("a1")), sha256.Sum256([]byte("a2")), sha256.Sum256([]byte("a3"))
	goodOut := userEntry(t, user, good, "compiled", "compiled")
	userEntry(t, user, bad, "compiled2", "cut")
	freshOut := sha256.Sum256([]byte("new body"))
	var in strings.Builder
	req := func(r request, body string) {
		b, _ := json.Marshal(r)
		in.Write(append(b, '\n', '\n'))
		if body != "" {
			in.WriteString(`"` + base64.StdEncoding.EncodeToString([]byte(body)) + "\"\n")
		}
	}
	req(request{ID: 1, Command: "get", ActionID: good[:]}, "")
	req(request{ID: 2, Command: "get", ActionID: bad[:]}, "")
	req(request{ID: 3, Command: "put", ActionID: fresh[:], OutputID: freshOut[:], BodySize: 8}, "new body")
	req(request{ID: 4, Command: "close"}, "")
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(Serve(strings.NewReader(in.String()), pw, own, user)) }()
	got := map[int64]response{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		var r response
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		got[r.ID] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got[0].KnownCommands) != 3 {
		t.Errorf("hello %+v", got[0])
	}
	r := got[1]
	if r.Miss || string(r.OutputID) != string(goodOut[:]) || r.DiskPath != fileName(own, goodOut[:], "d") {
		t.Errorf("get of the user's entry: %+v", r)
	} else if b, err := os.ReadFile(r.DiskPath); err != nil || string(b) != "compiled" {
		t.Errorf("served %q %v", b, err)
	}
	if !got[2].Miss {
		t.Errorf("a cut output served: %+v", got[2])
	}
	if r := got[3]; r.Err != "" || !strings.HasPrefix(r.DiskPath, own) {
		t.Errorf("put: %+v", r)
	}
	if _, ok := got[4]; !ok {
		t.Errorf("no answer to close")
	}
	// The put is served back from the sandbox's cache.
	if out, size, _, ok := entry(own, fresh[:]); !ok || size != 8 || string(out) != string(freshOut[:]) {
		t.Errorf("own entry after put: %x %d %v", out, size, ok)
	}
	if _, err := os.Stat(filepath.Join(own, WarmMarker)); err == nil {
		t.Errorf("warm marker after a run the user's cache served")
	}
	// A second run finds everything in the sandbox's cache: the marker.
	var again strings.Builder
	for _, r := range []request{{ID: 1, Command: "get", ActionID: good[:]}, {ID: 2, Command: "close"}} {
		b, _ := json.Marshal(r)
		again.Write(append(b, '\n', '\n'))
	}
	if err := Serve(strings.NewReader(again.String()), io.Discard, own, user); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(own, WarmMarker)); err != nil {
		t.Errorf("no warm marker after a run served by the sandbox's cache alone: %v", err)
	}
}
