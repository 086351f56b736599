package sandbox

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateLimits(t *testing.T) {
	for _, tc := range []struct {
		l     Limits
		field string // "" when valid
	}{
		{Limits{}, ""},
		{Limits{MaxProcesses: 8, MaxMemory: 16 << 20, MaxTempSize: 1 << 20}, ""},
		{Limits{MaxProcesses: 1 << 22, MaxMemory: 1 << 60, MaxTempSize: 1 << 60}, ""},
		{Limits{MaxProcesses: -1}, "limits.max_processes"},
		{Limits{MaxProcesses: 7}, "limits.max_processes"},
		{Limits{MaxProcesses: 1<<22 + 1}, "limits.max_processes"},
		{Limits{MaxMemory: -1}, "limits.max_memory"},
		{Limits{MaxMemory: 16<<20 - 1}, "limits.max_memory"},
		{Limits{MaxMemory: 1<<60 + 1}, "limits.max_memory"},
		{Limits{MaxTempSize: -5}, "limits.max_temp_size"},
		{Limits{MaxTempSize: 1<<20 - 1}, "limits.max_temp_size"},
	} {
		err := validateLimits(tc.l)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%+v: %v", tc.l, err)
			}
			continue
		}
		var se *Error
		if !errors.As(err, &se) || se.Code != CodeInvalidPolicy || !strings.Contains(se.Reason, tc.field) {
			t.Errorf("%+v: %v, want INVALID_POLICY naming %s", tc.l, err, tc.field)
		}
	}
}

func TestPlanLimits(t *testing.T) {
	ns := limitTraits{launcher: true, usernsNproc: true, tmpfs: true}
	ll := limitTraits{launcher: true}
	removed := 0
	maker := func(pids, mem bool) cgroupMaker {
		return func(p, m int64) cgroups {
			var c cgroups
			if p > 0 && pids {
				c.pids = true
			}
			if m > 0 && mem {
				c.memory = true
			}
			if c.pids || c.memory {
				c.dirs = []string{"/sys/fs/cgroup/x/sandbox-local-1"}
				c.remove = func() error { removed++; return nil }
			} else {
				c.why = "none here"
			}
			return c
		}
	}
	noCalls := func(int64, int64) cgroups { t.Fatal("a cgroup was made where none is needed"); return cgroups{} }
	all := Limits{MaxProcesses: 50, MaxMemory: 64 << 20, MaxTempSize: 8 << 20}
	for _, tc := range []struct {
		name    string
		l       Limits
		runner  string
		lt      limitTraits
		root    bool
		mk      cgroupMaker
		mechs   []string // per reported limit, in order
		gaps    int
		nproc   int
		as      int64
		tmpsize int64
		cgroups int
	}{
		{"namespaces user, default", Limits{}, "namespaces", ns, false, noCalls, []string{MechNprocRlimit}, 0, DefaultMaxProcesses, 0, 0, 0},
		{"namespaces user, all, cgroup v2", all, "namespaces", ns, false, maker(true, true),
			[]string{MechNprocRlimit, MechMemoryCgroup, MechTmpfs}, 0, 50, 0, 8 << 20, 1},
		{"namespaces user, all, no cgroup", all, "namespaces", ns, false, maker(false, false),
			[]string{MechNprocRlimit, MechASRlimit, MechTmpfs}, 1, 50, 64 << 20, 8 << 20, 0},
		{"namespaces root, pids cgroup", all, "namespaces", ns, true, maker(true, false),
			[]string{MechPidsCgroup, MechASRlimit, MechTmpfs}, 1, 0, 64 << 20, 8 << 20, 1},
		{"namespaces root, default, no cgroup", Limits{}, "namespaces", ns, true, maker(false, false), []string{""}, 0, 0, 0, 0, 0},
		{"namespaces root, default: no cgroup made", Limits{}, "namespaces", ns, true, noCalls, []string{""}, 0, 0, 0, 0, 0},
		{"landlock, default: no cgroup made", Limits{}, "landlock", ll, false, noCalls, []string{""}, 0, 0, 0, 0, 0},
		{"namespaces root, set, no cgroup", Limits{MaxProcesses: 50}, "namespaces", ns, true, maker(false, false), []string{""}, 1, 0, 0, 0, 0},
		{"landlock, all, cgroup v2", all, "landlock", ll, false, maker(true, true),
			[]string{MechPidsCgroup, MechMemoryCgroup, ""}, 1, 0, 0, 0, 1},
		{"landlock, all, no cgroup", all, "landlock", ll, false, maker(false, false), []string{"", MechASRlimit, ""}, 3, 0, 64 << 20, 0, 0},
		{"landlock, default, no cgroup", Limits{}, "landlock", ll, false, maker(false, false), []string{""}, 0, 0, 0, 0, 0},
		{"seatbelt, all", all, "seatbelt", limitTraits{}, false, noCalls, []string{"", "", ""}, 3, 0, 0, 0, 0},
		{"winacl, default", Limits{}, "winacl", limitTraits{}, false, noCalls, []string{""}, 0, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planLimits(tc.l, tc.runner, tc.lt, tc.root, tc.mk)
			var mechs []string
			for _, l := range p.limits {
				mechs = append(mechs, l.Mechanism)
				if l.Mechanism == "" && l.Note == "" {
					t.Errorf("%s: not held, and no note says why", l.Name)
				}
			}
			if strings.Join(mechs, ",") != strings.Join(tc.mechs, ",") {
				t.Errorf("mechanisms %q, want %q", mechs, tc.mechs)
			}
			if len(p.gaps) != tc.gaps {
				t.Errorf("gaps %v, want %d", p.gaps, tc.gaps)
			}
			for _, g := range p.gaps {
				if g.Area != AreaLimits {
					t.Errorf("gap %v is not in area limits", g)
				}
			}
			if l := p.launch; l.MaxProcesses != tc.nproc || l.MaxAddressSpace != tc.as || l.TempSize != tc.tmpsize || len(l.Cgroups) != tc.cgroups {
				t.Errorf("launcher part: %+v", l)
			}
			if (p.remove != nil) != (tc.cgroups > 0) {
				t.Errorf("remove set: %v, with %d cgroups", p.remove != nil, tc.cgroups)
			}
		})
	}
}
