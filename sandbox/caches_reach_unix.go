//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// reachableByOwnerBits checks that every directory above dir can be
// searched by this user through its owner, group or other bits alone,
// without root's override: the namespaces runner's root has none over
// files of users its namespace does not map, so a cache dir below another
// user's private home (HOME handed on from root) could be made here but
// not reached inside the sandbox.
func reachableByOwnerBits(dir string) error {
	uid, gid := os.Getuid(), os.Getgid()
	groups, _ := os.Getgroups()
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			st, ok := fi.Sys().(*syscall.Stat_t)
			mode := fi.Mode().Perm()
			search := ok && (int(st.Uid) == uid && mode&0o100 != 0 ||
				(int(st.Gid) == gid || slices.Contains(groups, int(st.Gid))) && mode&0o010 != 0 || mode&0o001 != 0)
			if !search {
				return fmt.Errorf("%s is not searchable by this user's own permissions", p)
			}
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}
