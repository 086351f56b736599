package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

func TestReadHierarchies(t *testing.T) {
	for _, tc := range []struct {
		name, cgroup, mountinfo string
		want                    []hierarchy
		mounts                  []string
	}{
		{
			name:   "hybrid: v1 pids and memory, an empty v2",
			cgroup: "8:pids:/\n4:memory:/process_api/b2c\n1:cpu,cpuacct:/\n0::/\n",
			mountinfo: "30 25 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n" +
				"33 30 0:29 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n" +
				"34 30 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
				"35 30 0:31 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n" +
				"36 30 0:32 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
			want: []hierarchy{
				{opts: []string{"pids"}, own: "/sys/fs/cgroup/pids"},
				{opts: []string{"memory"}, own: "/sys/fs/cgroup/memory/process_api/b2c"},
				{opts: []string{"cpu", "cpuacct"}, own: "/sys/fs/cgroup/cpu,cpuacct"},
				{v2: true, own: "/sys/fs/cgroup/unified"},
			},
			mounts: []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/unified"},
		},
		{
			name:      "v2, a systemd user service",
			cgroup:    "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-u7.scope\n",
			mountinfo: "35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
			want:      []hierarchy{{v2: true, own: "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-u7.scope"}},
			mounts:    []string{"/sys/fs/cgroup"},
		},
		{
			name:      "v2 mounted below its root, and a mount point with a space",
			cgroup:    "0::/ctr/inner\n",
			mountinfo: "35 24 0:30 /ctr /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw\n36 24 0:31 /other /x rw - cgroup2 cgroup2 rw\n",
			want:      []hierarchy{{v2: true, own: "/sys/fs/my cgroup/inner"}},
			mounts:    []string{"/sys/fs/my cgroup"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cg, mi := filepath.Join(dir, "cgroup"), filepath.Join(dir, "mountinfo")
			os.WriteFile(cg, []byte(tc.cgroup), 0o600)
			os.WriteFile(mi, []byte(tc.mountinfo), 0o600)
			hs, mounts, err := readHierarchies(cg, mi)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(hs, tc.want) || !reflect.DeepEqual(mounts, tc.mounts) {
				t.Errorf("got %+v %q\nwant %+v %q", hs, mounts, tc.want, tc.mounts)
			}
			for i, h := range hs {
				// A v2 cgroup goes beside this process's own one (its
				// parent may hand controllers to children); v1 inside it.
				want := h.own
				if h.v2 && h.own != mounts[i] {
					want = filepath.Dir(h.own)
				}
				if got := h.parent(mounts[i]); got != want {
					t.Errorf("parent of %+v: %s, want %s", h, got, want)
				}
			}
		})
	}
}

func TestSweepCgroups(t *testing.T) {
	dir := t.TempDir()
	gone := os.Getpid() + 1<<21 // above pid_max's default: no such process
	names := map[string]bool{   // name: kept
		cgroupPrefix + strconv.Itoa(gone) + "-00aa":        false,
		cgroupPrefix + strconv.Itoa(os.Getpid()) + "-00bb": true, // this provider's own
		cgroupPrefix + "1-00cc":                            true, // pid 1 lives
		cgroupPrefix + "x-00dd":                            true, // not a provider's name
		"other-" + strconv.Itoa(gone):                      true,
	}
	for n := range names {
		if err := os.Mkdir(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweepCgroups(dir)
	for n, kept := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); (err == nil) != kept {
			t.Errorf("%s: present %v, want %v", n, err == nil, kept)
		}
	}
}
