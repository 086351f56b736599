package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// This file is where the namespaces runner's mounts are made. The new root
// is, in order:
//
//   - the host's tree, bound recursively and made read-only, nosuid and
//     nodev in one mount_setattr(AT_RECURSIVE);
//   - a private /tmp: an overlay whose lower layer is the host's /tmp (read
//     as everywhere else) and whose upper layer is a tmpfs, so writes there
//     succeed inside the sandbox and never reach the host;
//   - a minimal /dev: a tmpfs with null, zero, full, random, urandom and tty
//     bound from the host, a new devpts instance, a private /dev/shm;
//   - a fresh, read-only /proc of the new pid namespace;
//   - the layers of the spec, shallowest first: writable binds of the
//     writable roots and the temp dir, read-only binds back over the
//     read-only subpaths, empty read-only mounts over the deny-read paths.
//
// Then pivot_root into it; the host's tree is detached.

// layerKind orders layers on the same path: writable first, then what
// narrows it. A pin binds a directory onto itself, unchanged: a mount point
// cannot be renamed or removed, so the directories between a writable root
// and a read-only subpath cannot be moved away with the protected path and
// replaced by look-alikes (mv .git .git-old; mkdir .git; ...).
type layerKind int

const (
	layerWritable layerKind = iota
	layerPin
	layerReadOnly
	layerDeny
)

// layer is one mount over the read-only host tree, at a host path.
type layer struct {
	kind  layerKind
	path  string
	isDir bool
}

// rootPlan is the set of layers, in the order they are mounted.
type rootPlan struct {
	layers []layer
}

// statFS is what planning reads; osLstat is the real one.
type statFS interface {
	Lstat(p string) (fs.FileInfo, error)
	Stat(p string) (fs.FileInfo, error)
	EvalSymlinks(p string) (string, error)
}

type osLstat struct{}

func (osLstat) Lstat(p string) (fs.FileInfo, error)   { return os.Lstat(p) }
func (osLstat) Stat(p string) (fs.FileInfo, error)    { return os.Stat(p) }
func (osLstat) EvalSymlinks(p string) (string, error) { return filepath.EvalSymlinks(p) }

// planRoot decides the layers while the host's tree is still in view. A
// read-only subpath that is a symlink protects what it points to (that only
// narrows; the link itself cannot be covered, see vocab.NamespaceGaps); one
// that does not exist gets nothing. A deny-read path that does not exist
// gets nothing.
func planRoot(s vocab.Spec, fsys statFS) (rootPlan, error) {
	var p rootPlan
	add := func(kind layerKind, path string, isDir bool) {
		for _, l := range p.layers {
			if l.kind == kind && l.path == path {
				return
			}
		}
		p.layers = append(p.layers, layer{kind, path, isDir})
	}
	for _, w := range append(append([]string(nil), s.Writable...), s.TempDir) {
		if w == "" {
			continue
		}
		fi, err := fsys.Stat(w)
		if err != nil {
			return p, fmt.Errorf("writable root: %w", err)
		}
		if !fi.IsDir() {
			return p, fmt.Errorf("writable root %s is not a directory", w)
		}
		add(layerWritable, w, true)
	}
	for _, r := range s.ReadOnly {
		real, ok := realPath(fsys, r)
		if !ok {
			continue
		}
		fi, err := fsys.Lstat(real)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := fsys.EvalSymlinks(real)
			if err != nil || !vocab.Within(target, "/") || !underAny(target, s.Writable, s.TempDir) {
				continue // dangling, or already read-only outside the writable roots
			}
			if fi, err = fsys.Stat(target); err != nil {
				continue
			}
			real = target
		}
		if fi.IsDir() || fi.Mode().IsRegular() {
			add(layerReadOnly, real, fi.IsDir())
			for _, dir := range between(real, s.Writable, s.TempDir) {
				add(layerPin, dir, true)
			}
		}
	}
	for _, d := range s.DenyRead {
		real, err := fsys.EvalSymlinks(d)
		if err != nil {
			continue
		}
		fi, err := fsys.Stat(real)
		if err != nil {
			continue
		}
		add(layerDeny, real, fi.IsDir())
	}
	sort.SliceStable(p.layers, func(i, j int) bool {
		di, dj := depth(p.layers[i].path), depth(p.layers[j].path)
		if di != dj {
			return di < dj
		}
		return p.layers[i].kind < p.layers[j].kind
	})
	return p, nil
}

// between returns the directories strictly between p and the writable root
// that holds it (the deepest one), outermost first.
func between(p string, roots []string, more ...string) []string {
	root := ""
	for _, r := range append(append([]string(nil), roots...), more...) {
		if r != "" && vocab.Within(p, r) && len(r) > len(root) {
			root = r
		}
	}
	if root == "" || root == p {
		return nil
	}
	var dirs []string
	for d := filepath.Dir(p); d != root && vocab.Within(d, root); d = filepath.Dir(d) {
		dirs = append([]string{d}, dirs...)
	}
	return dirs
}

// realPath resolves the parent of p, keeping its last element as it is.
func realPath(fsys statFS, p string) (string, bool) {
	dir, err := fsys.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", false
	}
	return filepath.Join(dir, filepath.Base(p)), true
}

func underAny(p string, roots []string, more ...string) bool {
	for _, r := range append(append([]string(nil), roots...), more...) {
		if r != "" && vocab.Within(p, r) {
			return true
		}
	}
	return false
}

func depth(p string) int { return strings.Count(p, "/") }

// The staging area: a tmpfs on the host's /tmp (in this mount namespace
// only) that becomes the root while the new root is built under it.
const (
	stageDir = "/tmp"
	newRoot  = "/newroot"
	oldRoot  = "/oldroot"
	emptyRO  = "/empty-file" // bound over deny-read files
	tmpUpper = "/tmp-upper"  // the private /tmp's upper and work dirs
)

// buildRoot makes the new root and pivots into it.
func buildRoot(p rootPlan) error {
	step := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	if err := step("make / a slave mount", unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, "")); err != nil {
		return err
	}
	if err := step("mount the staging tmpfs on "+stageDir, unix.Mount("tmpfs", stageDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755")); err != nil {
		return err
	}
	for _, d := range []string{stageDir + newRoot, stageDir + oldRoot} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return step("mkdir "+d, err)
		}
	}
	if err := os.WriteFile(stageDir+emptyRO, nil, 0o400); err != nil {
		return step("create "+emptyRO, err)
	}
	for _, d := range []string{stageDir + tmpUpper, stageDir + tmpUpper + "/upper", stageDir + tmpUpper + "/work"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return step("mkdir "+d, err)
		}
	}
	if err := os.Chmod(stageDir+tmpUpper+"/upper", 0o1777); err != nil {
		return step("chmod the private /tmp", err)
	}
	if err := step("pivot into the staging tmpfs", pivotTo(stageDir, stageDir+oldRoot)); err != nil {
		return err
	}
	if err := step("bind the host's tree", unix.Mount(oldRoot, newRoot, "", unix.MS_BIND|unix.MS_REC, "")); err != nil {
		return err
	}
	// Private, not slave: a mount the host makes later (a USB drive, sshfs,
	// an automount) would otherwise arrive inside with its own, writable
	// flags, past the read-only attribute set once below.
	if err := step("make the new root private", unix.Mount("", newRoot, "", unix.MS_REC|unix.MS_PRIVATE, "")); err != nil {
		return err
	}
	if err := setAttr(newRoot, true, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, 0); err != nil {
		return step("make the host's tree read-only", err)
	}
	overlay := "lowerdir=" + oldRoot + "/tmp,upperdir=" + tmpUpper + "/upper,workdir=" + tmpUpper + "/work,userxattr"
	if err := step("mount a private /tmp", unix.Mount("overlay", newRoot+"/tmp", "overlay", unix.MS_NOSUID|unix.MS_NODEV, overlay)); err != nil {
		return err
	}
	if err := setupDev(newRoot + "/dev"); err != nil {
		return step("set up /dev", err)
	}
	// Read-only: uid 0 inside is the caller's uid 0 outside (the map keeps
	// the caller's ids), and the kernel lets the global root uid write
	// /proc/sys by mode bits alone, capabilities or not (core_pattern would
	// run a program as root on the host).
	if err := step("mount a fresh /proc", unix.Mount("proc", newRoot+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, "")); err != nil {
		return err
	}
	var denyMounts []string
	for _, l := range p.layers {
		target := newRoot + l.path
		if err := ensureMountpoint(target, l.isDir); err != nil {
			return step("mount point "+l.path, err)
		}
		switch l.kind {
		case layerWritable:
			if err := unix.Mount(oldRoot+l.path, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return step("bind writable "+l.path, err)
			}
			if err := setAttr(target, true, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, unix.MOUNT_ATTR_RDONLY); err != nil {
				return step("make "+l.path+" writable", err)
			}
		case layerPin:
			if err := unix.Mount(target, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return step("pin "+l.path, err)
			}
		case layerReadOnly:
			if err := unix.Mount(oldRoot+l.path, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return step("bind read-only "+l.path, err)
			}
			if err := setAttr(target, true, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, 0); err != nil {
				return step("make "+l.path+" read-only", err)
			}
		case layerDeny:
			var err error
			if l.isDir {
				err = unix.Mount("tmpfs", target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=64k")
			} else {
				err = unix.Mount(emptyRO, target, "", unix.MS_BIND, "")
			}
			if err != nil {
				return step("hide deny-read "+l.path, err)
			}
			denyMounts = append(denyMounts, target)
		}
	}
	// Deny-read mounts were writable while writable roots inside them got
	// their mount points; now they are sealed, as is /dev's tmpfs.
	for _, m := range append(denyMounts, newRoot+"/dev") {
		if err := setAttr(m, false, unix.MOUNT_ATTR_RDONLY, 0); err != nil {
			return step("seal "+strings.TrimPrefix(m, newRoot), err)
		}
	}
	if err := os.Chdir(newRoot); err != nil {
		return step("chdir into the new root", err)
	}
	if err := step("pivot into the new root", unix.PivotRoot(".", ".")); err != nil {
		return err
	}
	if err := step("detach the host's tree", unix.Unmount(".", unix.MNT_DETACH)); err != nil {
		return err
	}
	return step("chdir /", os.Chdir("/"))
}

// pivotTo makes dir the root, with the old root at put_old.
func pivotTo(dir, putOld string) error {
	if err := unix.PivotRoot(dir, putOld); err != nil {
		return err
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	return nil
}

// setAttr sets and clears mount attributes of the mount at path (and, with
// recursive, of every mount beneath it).
func setAttr(path string, recursive bool, set, clear uint64) error {
	flags := uint(unix.AT_SYMLINK_NOFOLLOW)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	err := unix.MountSetattr(unix.AT_FDCWD, path, flags, &unix.MountAttr{Attr_set: set, Attr_clr: clear})
	if errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("mount_setattr: the kernel is older than 5.12: %w", err)
	}
	return err
}

// ensureMountpoint creates a missing mount point. That only succeeds where
// the new root is writable at this stage (deny-read tmpfs mounts, the
// private /tmp); elsewhere the host path exists (planRoot checked it).
func ensureMountpoint(target string, isDir bool) error {
	if _, err := os.Lstat(target); err == nil {
		return nil
	}
	if isDir {
		return os.MkdirAll(target, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return os.WriteFile(target, nil, 0o600)
}

// hostDevices are bound into the new /dev, when the host has them.
var hostDevices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// setupDev builds the minimal /dev: no disk, no host pty, no shared shm.
func setupDev(dev string) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return fmt.Errorf("tmpfs: %w", err)
	}
	for _, n := range hostDevices {
		host := oldRoot + "/dev/" + n
		if _, err := os.Stat(host); err != nil {
			continue
		}
		if err := os.WriteFile(dev+"/"+n, nil, 0o600); err != nil {
			return err
		}
		if err := unix.Mount(host, dev+"/"+n, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s: %w", n, err)
		}
	}
	if err := os.Mkdir(dev+"/pts", 0o755); err != nil {
		return err
	}
	if err := unix.Mount("devpts", dev+"/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("devpts: %w", err)
	}
	if err := os.Mkdir(dev+"/shm", 0o1777); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dev+"/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("shm: %w", err)
	}
	for name, target := range map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, dev+"/"+name); err != nil {
			return err
		}
	}
	return nil
}
