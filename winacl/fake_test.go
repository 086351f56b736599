package winacl

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
)

// fakeSystem is an in-memory System that records every call. Paths are
// compared by Key, as NTFS would.
type fakeSystem struct {
	mu      sync.Mutex
	nodes   map[string]*fakeNode // by Key
	long    map[string]string    // Key of a short-name path -> its long path
	procs   map[uint32]uint64    // running pid -> start time
	self    ProcessID
	temp    string
	calls   []fakeCall
	failOn  map[string]error // op -> error to return
	rdState map[string]error // path key -> error for ReadFile
	// nextIndex is the last file index Identify handed out.
	nextIndex uint64
}

type fakeNode struct {
	path  string
	dir   bool
	data  []byte
	aces  []ACE
	index uint64 // file index, given on first Identify
}

type fakeCall struct {
	Op   string
	Path string
	ACE  ACE
}

// mutating ops: everything that would change the disk.
var mutatingOps = map[string]bool{"AddACE": true, "RevokeACE": true, "MkdirPrivate": true,
	"RemoveAll": true, "WriteFile": true, "Remove": true}

func newFakeSystem(temp string) *fakeSystem {
	f := &fakeSystem{nodes: map[string]*fakeNode{}, long: map[string]string{}, procs: map[uint32]uint64{},
		self: ProcessID{PID: 100, Start: 1000}, temp: temp, failOn: map[string]error{}, rdState: map[string]error{}}
	f.procs[100] = 1000
	f.mkdirAll(temp)
	return f
}

func (f *fakeSystem) record(op, path string, ace ACE) error {
	f.calls = append(f.calls, fakeCall{op, path, ace})
	return f.failOn[op]
}

// mkdirAll creates path and its parents (test set-up, not recorded).
func (f *fakeSystem) mkdirAll(path string) {
	wp, err := parsePath(path, rejectStreams)
	if err != nil {
		return // a test that sets up a bad path sees it missing
	}
	for n := 0; n <= len(wp.comps); n++ {
		p := winPath{root: wp.root, comps: wp.comps[:n]}.String()
		if f.nodes[Key(p)] == nil {
			f.nodes[Key(p)] = &fakeNode{path: p, dir: true}
		}
	}
}

func (f *fakeSystem) writeFileSetup(path string, data []byte) {
	wp, _ := parsePath(path, rejectStreams)
	f.mkdirAll(winPath{root: wp.root, comps: wp.comps[:len(wp.comps)-1]}.String())
	f.nodes[Key(path)] = &fakeNode{path: path, data: data}
}

func (f *fakeSystem) node(path string) (*fakeNode, error) {
	n := f.nodes[Key(path)]
	if n == nil {
		return nil, &fs.PathError{Op: "fake", Path: path, Err: fs.ErrNotExist}
	}
	return n, nil
}

func (f *fakeSystem) parentExists(path string) bool {
	wp, err := parsePath(path, rejectStreams)
	if err != nil || len(wp.comps) == 0 {
		return false
	}
	n := f.nodes[Key(winPath{root: wp.root, comps: wp.comps[:len(wp.comps)-1]}.String())]
	return n != nil && n.dir
}

func (f *fakeSystem) TempRoot() (string, error) { return f.temp, nil }

func (f *fakeSystem) LongPathName(path string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{Op: "LongPathName", Path: path})
	if l, ok := f.long[Key(path)]; ok {
		return l, nil
	}
	if f.nodes[Key(path)] != nil {
		return path, nil
	}
	return "", &fs.PathError{Op: "GetLongPathNameW", Path: path, Err: fs.ErrNotExist}
}

func (f *fakeSystem) HasACE(path string, want ACE) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("HasACE", path, want); err != nil {
		return false, err
	}
	n, err := f.node(path)
	if err != nil {
		return false, err
	}
	for _, a := range n.aces {
		inh := a.Inherit == want.Inherit || !n.dir
		if a.SID == want.SID && a.Deny == want.Deny && inh && a.Access&want.Access == want.Access {
			return true, nil
		}
	}
	return false, nil
}

func (f *fakeSystem) AddACE(path string, ace ACE) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("AddACE", path, ace); err != nil {
		return err
	}
	n, err := f.node(path)
	if err != nil {
		return err
	}
	n.aces = append(n.aces, ace)
	return nil
}

func (f *fakeSystem) RevokeACE(path string, sid SID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("RevokeACE", path, ACE{SID: sid}); err != nil {
		return err
	}
	n, err := f.node(path)
	if err != nil {
		return err
	}
	var keep []ACE
	for _, a := range n.aces {
		if a.SID != sid || a.Deny {
			keep = append(keep, a)
		}
	}
	n.aces = keep
	return nil
}

func (f *fakeSystem) MkdirPrivate(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("MkdirPrivate", path, ACE{}); err != nil {
		return err
	}
	if f.nodes[Key(path)] != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: fs.ErrExist}
	}
	if !f.parentExists(path) {
		return &fs.PathError{Op: "mkdir", Path: path, Err: fs.ErrNotExist}
	}
	f.nodes[Key(path)] = &fakeNode{path: path, dir: true}
	return nil
}

func (f *fakeSystem) RemoveAll(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("RemoveAll", path, ACE{}); err != nil {
		return err
	}
	for k, n := range f.nodes {
		if Within(n.path, path) {
			delete(f.nodes, k)
		}
	}
	return nil
}

func (f *fakeSystem) ReadDir(path string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{Op: "ReadDir", Path: path})
	return f.list(path)
}

func (f *fakeSystem) list(path string) ([]string, error) {
	if _, err := f.node(path); err != nil {
		return nil, err
	}
	var names []string
	for _, n := range f.nodes {
		wp, _ := parsePath(n.path, rejectStreams)
		if len(wp.comps) == 0 {
			continue
		}
		parent := winPath{root: wp.root, comps: wp.comps[:len(wp.comps)-1]}.String()
		if Key(parent) == Key(path) {
			names = append(names, wp.comps[len(wp.comps)-1])
		}
	}
	sort.Strings(names)
	return names, nil
}

func (f *fakeSystem) ReadFile(path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{Op: "ReadFile", Path: path})
	if err := f.rdState[Key(path)]; err != nil {
		return nil, err
	}
	n, err := f.node(path)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), n.data...), nil
}

func (f *fakeSystem) WriteFile(path string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("WriteFile", path, ACE{}); err != nil {
		return err
	}
	if !f.parentExists(path) {
		return &fs.PathError{Op: "write", Path: path, Err: fs.ErrNotExist}
	}
	f.nodes[Key(path)] = &fakeNode{path: path, data: append([]byte(nil), data...)}
	return nil
}

func (f *fakeSystem) Remove(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("Remove", path, ACE{}); err != nil {
		return err
	}
	if _, err := f.node(path); err != nil {
		return err
	}
	delete(f.nodes, Key(path))
	return nil
}

func (f *fakeSystem) Self() (ProcessID, error) { return f.self, nil }

func (f *fakeSystem) StartTime(pid uint32) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{Op: "StartTime", Path: fmt.Sprint(pid)})
	if err := f.failOn["StartTime"]; err != nil {
		return 0, err
	}
	s, ok := f.procs[pid]
	if !ok {
		return 0, fmt.Errorf("pid %d: %w", pid, ErrProcessGone)
	}
	return s, nil
}

// take returns and clears the recorded calls.
func (f *fakeSystem) take() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func count(calls []fakeCall, op string) int {
	n := 0
	for _, c := range calls {
		if c.Op == op {
			n++
		}
	}
	return n
}

func mutations(calls []fakeCall) []fakeCall {
	var out []fakeCall
	for _, c := range calls {
		if mutatingOps[c.Op] {
			out = append(out, c)
		}
	}
	return out
}

func callsOn(calls []fakeCall, path string) []fakeCall {
	var out []fakeCall
	for _, c := range calls {
		if Key(c.Path) == Key(path) {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeSystem) aces(path string) []ACE {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.nodes[Key(path)]; n != nil {
		return append([]ACE(nil), n.aces...)
	}
	return nil
}

func (f *fakeSystem) exists(path string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nodes[Key(path)] != nil
}

func (f *fakeSystem) names(dir string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	names, _ := f.list(dir)
	return names
}

// errBoom is an injected failure.
var errBoom = errors.New("boom")

func joinCalls(calls []fakeCall) string {
	var b strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&b, "%s %s %v\n", c.Op, c.Path, c.ACE)
	}
	return b.String()
}

// Identify gives each node the identity it got when it was created: a node
// deleted and created again has a new Index.
func (f *fakeSystem) Identify(path string) (FileIdentity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{Op: "Identify", Path: path})
	n, err := f.node(path)
	if err != nil {
		return FileIdentity{}, err
	}
	if n.index == 0 {
		f.nextIndex++
		n.index = f.nextIndex
	}
	return FileIdentity{Volume: 7, Index: n.index, Dir: n.dir}, nil
}
