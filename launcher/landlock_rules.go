//go:build linux

package launcher

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/bo-agent/sandbox-local/internal/llrights"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// grant is one Landlock path-beneath rule.
type grant struct {
	Path   string
	Access uint64
	// Dir says whether the plan found a directory there.
	Dir bool
	// Class says how the launcher may open Path (landlockRuleset).
	Class grantClass
}

// grantClass is how a grant's path is opened when the rule is added.
// The plan and the rule are made at different moments, and a command of
// another sandbox that writes a shared tree can swap a directory for a
// symlink in between; a rule follows what it is given.
type grantClass int

const (
	// walked: reached through real directories while listing (the walk
	// grants no symlink). Opened without following any symlink; a symlink
	// there now, or another type, or nothing, is not granted.
	walked grantClass = iota
	// device: a /dev entry (nobody but root can change /dev), followed as
	// the plan followed it.
	device
	// root: a writable root or the temp dir, resolved at Wrap time. Opened
	// without following any symlink; any failure is fatal.
	root
	// socket: an allowed UNIX socket, resolved at Wrap time. Opened
	// without following any symlink, and granted only if it is a socket
	// (a symlink swapped in could name another socket, or a directory of
	// them); otherwise it stays unreachable.
	socket
)

// lister is the part of the filesystem the plan reads.
type lister interface {
	ReadDir(dir string) ([]fs.DirEntry, error)
	Stat(path string) (fs.FileInfo, error)
}

type osLister struct{}

func (osLister) ReadDir(d string) ([]fs.DirEntry, error) { return os.ReadDir(d) }
func (osLister) Stat(p string) (fs.FileInfo, error)      { return os.Stat(p) }

// planFS turns a spec into path rules:
//
//   - reads: everything under / except /dev and the deny-read paths. A
//     denied path is carved out by granting its siblings instead of an
//     ancestor: an ancestor of a denied path gets read_dir only (it can be
//     listed; so can the denied directory beneath it, by name, but none of
//     its files read), and every other entry of that ancestor gets full
//     read. Symlinks among the siblings
//     are not granted (a rule would land on the link's target). Ancestors
//     only of /dev stay listable.
//   - /dev: read_dir, plus read-write on llrights.Devices and on ownPTYs,
//     the /dev/pts terminals of the command's standard descriptors.
//   - writes: every writable root and the temp dir get llrights.WritableTree.
//   - UNIX sockets (network deny): each allowed socket gets resolve_unix,
//     the one right that lets a connect or sendmsg reach it. A socket the
//     command creates itself is reachable without a rule (it belongs to the
//     same Landlock domain).
func planFS(s vocab.Spec, fsys lister, ownPTYs []string) []grant {
	deny := append([]string{"/dev"}, s.DenyRead...)
	// An ancestor of a denied path is listable (ls ~ with ~/.ssh denied):
	// Landlock's read_dir reaches down the hierarchy, so the denied
	// directory's names can be listed too, never its files read
	// (vocab.LandlockDenyReadMetadataGap says so).
	listable := func(p string) bool { return !contains(s.DenyRead, p) }
	var out []grant
	var walk func(p string, isDir bool)
	walk = func(p string, isDir bool) {
		if contains(deny, p) {
			return
		}
		if !isDir {
			out = append(out, grant{Path: p, Access: llrights.ReadFile})
			return
		}
		if !ancestorOfAny(p, deny) {
			out = append(out, grant{Path: p, Access: llrights.ReadAll, Dir: true})
			return
		}
		if listable(p) {
			out = append(out, grant{Path: p, Access: llrights.ReadDir, Dir: true})
		}
		ents, err := fsys.ReadDir(p)
		if err != nil {
			return // unreadable: nothing beneath it is granted
		}
		for _, e := range ents {
			if e.Type()&fs.ModeSymlink != 0 {
				continue
			}
			walk(filepath.Join(p, e.Name()), e.IsDir())
		}
	}
	walk("/", true)

	out = append(out, grant{Path: "/dev", Access: llrights.ReadDir, Dir: true, Class: device})
	for _, d := range append(append([]string(nil), llrights.Devices...), ownPTYs...) {
		if fi, err := fsys.Stat(d); err == nil {
			acc := uint64(llrights.DeviceRW)
			if fi.IsDir() {
				acc |= llrights.ReadDir
			}
			out = append(out, grant{Path: d, Access: acc, Dir: fi.IsDir(), Class: device})
		}
	}
	for _, w := range s.Writable {
		out = append(out, grant{Path: w, Access: llrights.WritableTree, Dir: true, Class: root})
	}
	if s.TempDir != "" {
		out = append(out, grant{Path: s.TempDir, Access: llrights.WritableTree, Dir: true, Class: root})
	}
	if s.Network != vocab.NetworkAllow {
		for _, u := range s.UnixSockets {
			out = append(out, grant{Path: u, Access: ll.AccessFSResolveUnix, Class: socket})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// ancestorOfAny reports whether p is a proper ancestor of one of paths.
func ancestorOfAny(p string, paths []string) bool {
	for _, d := range paths {
		if d != p && vocab.Within(d, p) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
