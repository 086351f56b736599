package seatbelt

import (
	"io/fs"
	"sort"
	"strings"
	"syscall"
	"time"
)

// fakeFS is an in-memory file system: directories, files and symlinks by
// exact path. With foldCase it behaves like a case-insensitive volume
// (lookups fold case, listings keep the stored spelling).
type fakeFS struct {
	nodes    map[string]fakeNode
	lstatErr map[string]error // injected Lstat failures
	foldCase bool
}

type fakeNode struct {
	mode fs.FileMode
	link string
}

func newFakeFS() *fakeFS {
	f := &fakeFS{nodes: map[string]fakeNode{"/": {mode: fs.ModeDir | 0o755}}, lstatErr: map[string]error{}}
	return f
}

// macFS returns a fake laid out like a Mac: the /private aliases, a user
// with a workspace holding a git repository, and a few secrets.
func macFS() *fakeFS {
	f := newFakeFS()
	f.dir("/private/tmp/cache")
	f.dir("/private/var/folders/zz/xy/T/sbx-1")
	f.dir("/private/var/run")
	f.file("/private/etc/hosts")
	f.symlink("/tmp", "private/tmp")
	f.symlink("/var", "private/var")
	f.symlink("/etc", "private/etc")
	f.dir("/System/Volumes/Data/Users")
	f.dir("/Users/me/ws/.git/hooks")
	f.file("/Users/me/ws/.git/config")
	f.file("/Users/me/ws/src/main.go")
	f.dir("/Users/me/.ssh")
	f.dir("/Users/me/.aws")
	f.symlink("/Users/me/link-ws", "ws")
	f.dir("/Users/me/ws2/.git")
	f.dir("/Users/me/ws2/.githooks")
	f.symlink("/Users/me/ws2/.git/hooks", "../.githooks")
	f.file("/Users/me/ws2/.git/config")
	return f
}

func (f *fakeFS) mkParents(p string) {
	for _, a := range ancestors(p) {
		if _, ok := f.nodes[a]; !ok {
			f.nodes[a] = fakeNode{mode: fs.ModeDir | 0o755}
		}
	}
}

func (f *fakeFS) dir(p string) {
	f.mkParents(p)
	f.nodes[p] = fakeNode{mode: fs.ModeDir | 0o755}
}

func (f *fakeFS) file(p string) {
	f.mkParents(p)
	f.nodes[p] = fakeNode{mode: 0o644}
}

func (f *fakeFS) symlink(p, target string) {
	f.mkParents(p)
	f.nodes[p] = fakeNode{mode: fs.ModeSymlink | 0o777, link: target}
}

func (f *fakeFS) find(p string) (string, fakeNode, bool) {
	if n, ok := f.nodes[p]; ok {
		return p, n, true
	}
	if f.foldCase {
		for k, n := range f.nodes {
			if strings.EqualFold(k, p) {
				return k, n, true
			}
		}
	}
	return "", fakeNode{}, false
}

func (f *fakeFS) Lstat(name string) (fs.FileInfo, error) {
	if err, ok := f.lstatErr[name]; ok {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	if parent := parentOf(name); name != "/" {
		if _, pn, ok := f.find(parent); ok && !pn.mode.IsDir() {
			return nil, &fs.PathError{Op: "lstat", Path: name, Err: syscall.ENOTDIR}
		}
	}
	k, n, ok := f.find(name)
	if !ok {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
	}
	return fakeInfo{name: k[strings.LastIndexByte(k, '/')+1:], mode: n.mode}, nil
}

func (f *fakeFS) Readlink(name string) (string, error) {
	_, n, ok := f.find(name)
	if !ok || n.mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: syscall.EINVAL}
	}
	return n.link, nil
}

func (f *fakeFS) ReadDirNames(name string) ([]string, error) {
	k, n, ok := f.find(name)
	if !ok || !n.mode.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	var out []string
	for p := range f.nodes {
		if p != "/" && parentOf(p) == k {
			out = append(out, p[strings.LastIndexByte(p, '/')+1:])
		}
	}
	sort.Strings(out)
	return out, nil
}

type fakeInfo struct {
	name string
	mode fs.FileMode
}

func (i fakeInfo) Name() string       { return i.name }
func (i fakeInfo) Size() int64        { return 0 }
func (i fakeInfo) Mode() fs.FileMode  { return i.mode }
func (i fakeInfo) ModTime() time.Time { return time.Time{} }
func (i fakeInfo) IsDir() bool        { return i.mode.IsDir() }
func (i fakeInfo) Sys() any           { return nil }
