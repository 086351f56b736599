package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bo-agent/sandbox-local/internal/nativepath"
)

// isRoot reports whether the caller's real uid is 0: the kernel does not
// hold that user to RLIMIT_NPROC, in any user namespace.
func isRoot() bool { return os.Getuid() == 0 }

// cgroupPrefix starts the name of every cgroup a wrap makes:
// cgroupPrefix PID "-" RANDOM, PID the provider's (as the temp dirs'
// names carry it), so that the cgroups of a provider that ended without
// Cleanup are found and removed (sweepCgroups). The rest is random and not
// the wrap's token: the command reads its own cgroup's name in
// /proc/self/cgroup.
const cgroupPrefix = "sandbox-local-"

// maxCgroupSweep bounds how many stale cgroups one wrap removes.
const maxCgroupSweep = 16

// sweepCgroups removes up to maxCgroupSweep empty cgroups in parent that a
// provider made (cgroupPrefix) and whose process is gone. A cgroup that
// still holds a process is not empty, and rmdir refuses it; a reused pid
// keeps one until that process is gone too.
func sweepCgroups(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	n := 0
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
		if !ok || !e.IsDir() || n >= maxCgroupSweep {
			continue
		}
		p, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(p)
		if err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if unix.Rmdir(filepath.Join(parent, e.Name())) == nil {
			n++
		}
	}
}

// hierarchy is one mounted cgroup hierarchy and where this process is in
// it.
type hierarchy struct {
	v2   bool
	opts []string // a v1 hierarchy's controllers
	own  string   // this process's cgroup directory
}

// parent is where a wrap's cgroup goes: under cgroup v2 beside this
// process's own cgroup (a cgroup holding processes cannot hand
// controllers to children, except the root), under v1 inside it.
func (h hierarchy) parent(mount string) string {
	if h.v2 && h.own != mount {
		return filepath.Dir(h.own)
	}
	return h.own
}

// newCgroups makes the wrap's cgroups where this process may: a cgroup v2
// for the process limit and the memory limit, or a cgroup v1 pids
// hierarchy for the process limit. The cgroup v1 memory controller is not
// used (its accounting of memory a process brings with it differs).
func newCgroups(pids, memory int64) cgroups {
	hs, mounts, err := readHierarchies("/proc/self/cgroup", "/proc/self/mountinfo")
	if err != nil {
		return cgroups{why: err.Error()}
	}
	var out cgroups
	var why []string
	for i, h := range hs {
		needPids := pids > 0 && !out.pids
		needMem := memory > 0 && !out.memory && h.v2
		if !h.v2 {
			needMem = false
			if !slices.Contains(h.opts, "pids") {
				needPids = false
			}
		}
		if !needPids && !needMem {
			continue
		}
		dir, got, err := makeCgroup(h.parent(mounts[i]), needPids, needMem, pids, memory)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		out.dirs = append(out.dirs, dir)
		out.pids = out.pids || got[0]
		out.memory = out.memory || got[1]
	}
	switch {
	case len(hs) == 0:
		why = append(why, "no cgroup hierarchy is mounted")
	case pids > 0 && !out.pids && len(why) == 0:
		why = append(why, "no hierarchy has the pids controller")
	case memory > 0 && !out.memory && len(why) == 0:
		why = append(why, "no cgroup v2 hierarchy has the memory controller")
	}
	out.why = strings.Join(why, "; ")
	dirs := out.dirs
	if len(dirs) > 0 {
		out.remove = func() error { return removeCgroups(dirs) }
	}
	return out
}

// readHierarchies reads this process's cgroups (cgroupFile) and the
// mounted hierarchies (mountinfoFile): each hierarchy with where this
// process is in it, and its mount point.
func readHierarchies(cgroupFile, mountinfoFile string) ([]hierarchy, []string, error) {
	own := map[string]string{} // "" for v2, else a v1 line's controller list
	b, err := os.ReadFile(cgroupFile)
	if err != nil {
		return nil, nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			own[""] = parts[2]
		} else {
			for _, c := range strings.Split(parts[1], ",") {
				own[c] = parts[2]
			}
		}
	}
	f, err := os.Open(mountinfoFile)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var hs []hierarchy
	var mounts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 {
			continue
		}
		root, mnt := unescapeMount(fields[3]), unescapeMount(fields[4])
		var h hierarchy
		var path string
		switch tail[0] {
		case "cgroup2":
			p, ok := own[""]
			if !ok {
				continue
			}
			h.v2, path = true, p
		case "cgroup":
			for _, o := range strings.Split(tail[2], ",") {
				if p, ok := own[o]; ok && o != "" {
					h.opts, path = append(h.opts, o), p
				}
			}
			if len(h.opts) == 0 {
				continue
			}
		default:
			continue
		}
		if !nativepath.Within(path, root) {
			continue // this process's cgroup is not below what is mounted here
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(path, root), "/")
		h.own = filepath.Join(mnt, rel)
		hs = append(hs, h)
		mounts = append(mounts, mnt)
	}
	return hs, mounts, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// makeCgroup makes a cgroup in parent and sets the limits asked for
// (pids.max, memory.max) that its controllers offer; got says which. A
// cgroup that offers none is removed again, as is one whose processes
// file this process could not write (the launcher could not join it).
func makeCgroup(parent string, wantPids, wantMem bool, pids, memory int64) (string, [2]bool, error) {
	var got [2]bool
	if unix.Access(filepath.Join(parent, "cgroup.procs"), unix.W_OK) != nil {
		return "", got, fmt.Errorf("the cgroup %s is not this user's to divide", parent)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", got, err
	}
	sweepCgroups(parent)
	dir := filepath.Join(parent, cgroupPrefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", got, fmt.Errorf("make a cgroup in %s: %w", parent, unwrapPath(err))
	}
	if wantPids && writeCgroup(dir, "pids.max", strconv.FormatInt(pids, 10)) == nil {
		got[0] = true
	}
	if wantMem && writeCgroup(dir, "memory.max", strconv.FormatInt(memory, 10)) == nil {
		got[1] = true
		// Otherwise the limit is stretched by swap rather than held.
		if err := writeCgroup(dir, "memory.swap.max", "0"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			got[1] = false
		}
	}
	if !got[0] && !got[1] || unix.Access(filepath.Join(dir, "cgroup.procs"), unix.W_OK) != nil {
		unix.Rmdir(dir)
		return "", [2]bool{}, fmt.Errorf("the cgroup %s offers neither controller asked for", parent)
	}
	return dir, got, nil
}

func writeCgroup(dir, file, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeCgroups removes a wrap's cgroups once its processes are gone: what
// is still in one (the launcher killed a moment ago, and its sandbox not
// yet torn down) is killed, and the removal retried, for up to 2 s.
func removeCgroups(dirs []string) error {
	var errs []error
	for _, dir := range dirs {
		writeCgroup(dir, "cgroup.kill", "1") // cgroup v2, Linux 5.14
		deadline := time.Now().Add(2 * time.Second)
		// A killed sandbox's processes are released within a millisecond
		// or so: wait in short steps first, so the common case does not
		// pay a long sleep.
		wait := 100 * time.Microsecond
		for {
			err := unix.Rmdir(dir)
			if err == nil || errors.Is(err, unix.ENOENT) {
				break
			}
			if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("remove the cgroup %s: %w", dir, err))
				break
			}
			killMembers(dir)
			time.Sleep(wait)
			wait = min(2*wait, 5*time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// killMembers kills the processes still in the cgroup dir: a wrap's own.
func killMembers(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// unwrapPath drops an *fs.PathError's path, which the caller names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
