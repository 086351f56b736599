//go:build linux

package launcher

import (
	"io/fs"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/bo-agent/sandbox-local/internal/llrights"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// fakeLister serves a tree from an fstest.MapFS rooted at "/".
type fakeLister struct{ m fstest.MapFS }

func rel(p string) string {
	if p == "/" {
		return "."
	}
	return p[1:]
}
func (f fakeLister) ReadDir(d string) ([]fs.DirEntry, error) { return f.m.ReadDir(rel(d)) }
func (f fakeLister) Stat(p string) (fs.FileInfo, error)      { return f.m.Stat(rel(p)) }

func tree() fakeLister {
	return fakeLister{fstest.MapFS{
		"bin/sh":            {},
		"etc/passwd":        {},
		"home/u/.ssh/id":    {},
		"home/u/.bashrc":    {},
		"home/u/proj/a.go":  {},
		"home/u/link":       {Mode: fs.ModeSymlink},
		"dev/null":          {Mode: fs.ModeDevice | fs.ModeCharDevice},
		"dev/sda":           {Mode: fs.ModeDevice},
		"dev/pts/ptmx":      {},
		"dev/pts/3":         {},
		"dev/pts/4":         {},
		"tmp/sandbox/t/x":   {},
		"proc/self/environ": {},
	}}
}

func grantsOf(gs []grant) map[string]uint64 {
	m := map[string]uint64{}
	for _, g := range gs {
		m[g.Path] |= g.Access
	}
	return m
}

func TestPlanFSReadOnly(t *testing.T) {
	got := grantsOf(planFS(vocab.Spec{TempDir: "/tmp/sandbox/t"}, tree(), []string{"/dev/pts/3"}))
	want := map[string]uint64{
		"/":              llrights.ReadDir, // ancestor of /dev: listable only
		"/bin":           llrights.ReadAll,
		"/etc":           llrights.ReadAll,
		"/home":          llrights.ReadAll,
		"/proc":          llrights.ReadAll,
		"/tmp":           llrights.ReadAll,
		"/dev":           llrights.ReadDir,
		"/dev/null":      llrights.DeviceRW,
		"/dev/pts/3":     llrights.DeviceRW, // the command's own terminal; not the others
		"/tmp/sandbox/t": llrights.WritableTree,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plan\n got %v\nwant %v", got, want)
	}
}

func TestPlanFSDenyReadGrantsSiblings(t *testing.T) {
	s := vocab.Spec{Writable: []string{"/home/u/proj"}, DenyRead: []string{"/home/u/.ssh"}}
	got := grantsOf(planFS(s, tree(), nil))
	for p, acc := range map[string]uint64{
		"/home/u/.bashrc": llrights.ReadFile,
		"/home/u/proj":    llrights.ReadAll | llrights.WritableTree,
	} {
		if got[p] != acc {
			t.Errorf("%s: %#x, want %#x", p, got[p], acc)
		}
	}
	// Ancestors of the denied path can be listed, nothing more (ls ~).
	for _, p := range []string{"/", "/home", "/home/u"} {
		if got[p] != llrights.ReadDir {
			t.Errorf("%s: %#x, want read_dir only", p, got[p])
		}
	}
	for _, p := range []string{"/home/u/.ssh", "/home/u/.ssh/id", "/home/u/link", "/dev/sda", "/dev/pts", "/dev/pts/4"} {
		if _, ok := got[p]; ok {
			t.Errorf("%s granted %#x, want nothing", p, got[p])
		}
	}
}

// TestRightsSets pins the exact rights: no writable tree may make device
// nodes, and reading never implies writing.
func TestRightsSets(t *testing.T) {
	if llrights.WritableTree&(ll.AccessFSMakeChar|ll.AccessFSMakeBlock) != 0 {
		t.Fatal("writable trees may create device nodes")
	}
	if llrights.HandledFS&(ll.AccessFSMakeChar|ll.AccessFSMakeBlock) == 0 {
		t.Fatal("device creation is not handled, so it is not denied")
	}
	if llrights.ReadAll&(ll.AccessFSWriteFile|ll.AccessFSTruncate|llrights.WriteDir) != 0 {
		t.Fatal("read rights include write rights")
	}
	want := uint64(ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir | ll.AccessFSWriteFile |
		ll.AccessFSTruncate | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir |
		ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeSym | ll.AccessFSRefer)
	if llrights.WritableTree != want {
		t.Fatalf("llrights.WritableTree = %#x, want %#x", llrights.WritableTree, want)
	}
}

// TestPlanFSUnixSockets: under network deny each allowed UNIX socket gets
// resolve_unix, and the ruleset handles that right only then (so every
// other pathname socket is refused where the kernel has ABI 9); under
// network allow nothing about UNIX sockets is planned.
func TestPlanFSUnixSockets(t *testing.T) {
	for _, tc := range []struct {
		name        string
		spec        vocab.Spec
		wantGrant   bool
		wantHandled bool
	}{
		{"deny, none allowed", vocab.Spec{}, false, false},
		{"deny, one allowed", vocab.Spec{UnixSockets: []string{"/run/agent.sock"}}, true, true},
		{"allow", vocab.Spec{Network: vocab.NetworkAllow, UnixSockets: []string{"/run/agent.sock"}}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := grantsOf(planFS(tc.spec, tree(), nil))
			if acc, ok := got["/run/agent.sock"]; ok != tc.wantGrant || ok && acc != ll.AccessFSResolveUnix {
				t.Errorf("grant on the socket: %#x (present %v), want resolve_unix only: %v", acc, ok, tc.wantGrant)
			}
			for p, acc := range got {
				if p != "/run/agent.sock" && acc&ll.AccessFSResolveUnix != 0 {
					t.Errorf("%s also gets resolve_unix", p)
				}
			}
			handled := uint64(landlockConfig(tc.spec).HandledAccessFS)&ll.AccessFSResolveUnix != 0
			if handled != tc.wantHandled {
				t.Errorf("resolve_unix handled: %v, want %v", handled, tc.wantHandled)
			}
		})
	}
}
