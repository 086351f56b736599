// Package gocacheprog is a GOCACHEPROG program (the go command's external
// build cache protocol) that serves the go command inside a sandbox: it
// writes the sandbox's own build cache ($GOCACHE, in the go command's disk
// format) and, on a miss there, reads the user's own build cache, never
// writing it, copying the entry into the sandbox's. So a first build in a
// new workspace is not a cold one, and the user's cache, which the user's
// unconfined builds trust, stays out of the command's reach.
//
// It runs inside the sandbox, as the go command's child, confined like
// it: it can read the user's cache because the command can, and write only
// where the command can.
package gocacheprog

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Arg is the argv[1] that makes a binary calling launcher.Init serve as
// the program: GOCACHEPROG="<binary> <Arg> <user's GOCACHE>".
const Arg = "sandbox-local-gocacheprog"

// request and response are the protocol's messages
// (cmd/go/internal/cacheprog).
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// Main serves the protocol on stdin and stdout: args is the user's build
// cache dir ("" for none); the sandbox's is $GOCACHE. It returns the exit
// status.
func Main(args []string) int {
	own := os.Getenv("GOCACHE")
	if own == "" || !filepath.IsAbs(own) {
		fmt.Fprintln(os.Stderr, "sandbox-local gocacheprog: GOCACHE is not an absolute directory")
		return 2
	}
	user := ""
	if len(args) > 0 {
		user = args[0]
	}
	if err := Serve(os.Stdin, os.Stdout, own, user); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-local gocacheprog:", err)
		return 1
	}
	return 0
}

// Serve answers the go command's requests from in on out, keeping the
// cache in own and reading user's on a miss, until a close request or the
// end of in.
func Serve(in io.Reader, out io.Writer, own, user string) error {
	c := &cache{own: own, user: user}
	if err := os.MkdirAll(own, 0o777); err != nil {
		return err
	}
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	var mu sync.Mutex
	reply := func(r *response) error {
		mu.Lock()
		defer mu.Unlock()
		if err := enc.Encode(r); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := reply(&response{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	br := bufio.NewReaderSize(in, 64<<10)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return nil // the go command closed our stdin
			}
			continue
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			return fmt.Errorf("bad request %q: %w", line, err)
		}
		switch req.Command {
		case "close":
			wg.Wait()
			if c.user != "" && c.userHits.Load() == 0 {
				writeFile(filepath.Join(own, WarmMarker), nil)
			}
			return reply(&response{ID: req.ID})
		case "put":
			body, err := readBody(br, req.BodySize)
			if err != nil {
				return err
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				reply(c.put(&req, body))
			}()
		case "get":
			wg.Add(1)
			go func() {
				defer wg.Done()
				reply(c.get(&req))
			}()
		default:
			if err := reply(&response{ID: req.ID, Err: "unknown command " + strconv.Quote(req.Command)}); err != nil {
				return err
			}
		}
	}
}

// readBody reads a put's body: the next line that is not empty (the go
// command ends each request with an empty line) holds a JSON string of its
// base64.
func readBody(br *bufio.Reader, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	var line []byte
	for len(line) == 0 {
		l, err := br.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("read body: %w", err)
		}
		line = bytes.TrimSpace(l)
	}
	if len(line) < 2 || line[0] != '"' || line[len(line)-1] != '"' {
		return nil, errors.New("body is not a JSON string")
	}
	body, err := base64.StdEncoding.DecodeString(string(line[1 : len(line)-1]))
	if err != nil {
		return nil, fmt.Errorf("decode body: %w", err)
	}
	if int64(len(body)) != size {
		return nil, fmt.Errorf("body of %d bytes, want %d", len(body), size)
	}
	return body, nil
}

type cache struct {
	own, user string
	userHits  atomic.Int64
}

// WarmMarker is the file a run leaves in the sandbox's cache when the
// user's cache served it nothing: the sandbox's cache then holds what
// this workspace's builds need, and the wrap stops naming the program
// (a build without it saves the protocol's cost). A command can make the
// file itself: that only stops its own workspace's warming.
const WarmMarker = "sandbox-local-warm"

// entrySize is the length of an action entry of the go command's disk
// cache: "v1 <action> <output> <size> <time>\n".
const entrySize = 2 + 1 + 64 + 1 + 64 + 1 + 20 + 1 + 20 + 1

func fileName(dir string, id []byte, kind string) string {
	return filepath.Join(dir, fmt.Sprintf("%02x", id[0]), fmt.Sprintf("%x", id)+"-"+kind)
}

// entry reads an action entry from dir: the output id, its size and time.
func entry(dir string, action []byte) (out []byte, size int64, t time.Time, ok bool) {
	b, err := os.ReadFile(fileName(dir, action, "a"))
	if err != nil || len(b) != entrySize || string(b[:3]) != "v1 " || b[entrySize-1] != '\n' {
		return nil, 0, t, false
	}
	if hex.EncodeToString(action) != string(b[3:67]) {
		return nil, 0, t, false
	}
	out, err = hex.DecodeString(string(b[68:132]))
	if err != nil {
		return nil, 0, t, false
	}
	size, err1 := strconv.ParseInt(string(bytes.TrimLeft(b[133:153], " ")), 10, 64)
	nano, err2 := strconv.ParseInt(string(bytes.TrimLeft(b[154:174], " ")), 10, 64)
	if err1 != nil || err2 != nil || size < 0 {
		return nil, 0, t, false
	}
	return out, size, time.Unix(0, nano), true
}

func (c *cache) get(req *request) *response {
	if len(req.ActionID) != sha256.Size {
		return &response{ID: req.ID, Err: "bad action id"}
	}
	if out, size, t, ok := entry(c.own, req.ActionID); ok {
		p := fileName(c.own, out, "d")
		if fi, err := os.Stat(p); err == nil && fi.Size() == size {
			return &response{ID: req.ID, OutputID: out, Size: size, Time: &t, DiskPath: p}
		}
	}
	if c.user == "" {
		return &response{ID: req.ID, Miss: true}
	}
	out, size, _, ok := entry(c.user, req.ActionID)
	if !ok {
		return &response{ID: req.ID, Miss: true}
	}
	// The user's output, when its size is the entry's (the go command's
	// own check of its disk cache), is copied into the sandbox's cache and
	// served from there: the sandbox's cache never shares a file with the
	// user's (a hard link would let the command write the user's file).
	body, err := os.ReadFile(fileName(c.user, out, "d"))
	if err != nil || int64(len(body)) != size {
		return &response{ID: req.ID, Miss: true}
	}
	c.userHits.Add(1)
	return c.put(&request{ID: req.ID, ActionID: req.ActionID, OutputID: out, BodySize: size}, body)
}

func (c *cache) put(req *request, body []byte) *response {
	if len(req.ActionID) != sha256.Size || len(req.OutputID) != sha256.Size {
		return &response{ID: req.ID, Err: "bad action or output id"}
	}
	p := fileName(c.own, req.OutputID, "d")
	if err := writeFile(p, body); err != nil {
		return &response{ID: req.ID, Err: err.Error()}
	}
	now := time.Now()
	e := fmt.Sprintf("v1 %x %x %20d %20d\n", req.ActionID, req.OutputID, len(body), now.UnixNano())
	if err := writeFile(fileName(c.own, req.ActionID, "a"), []byte(e)); err != nil {
		return &response{ID: req.ID, Err: err.Error()}
	}
	return &response{ID: req.ID, OutputID: req.OutputID, Size: int64(len(body)), Time: &now, DiskPath: p}
}

// writeFile writes b to p through a new file renamed into place, so a
// reader never sees half of it.
func writeFile(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), p)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}
