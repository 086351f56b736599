package sandbox

import (
	"errors"
	"fmt"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// Limits bounds what one command may take of the machine: the processes
// it runs at once, its memory, and the size of its private temp dir. What
// a runner cannot hold here is named in Wrapped.Limits; a limit the policy
// set (not the default process limit) that it cannot hold is also a gap
// (AreaLimits), so RequireFull refuses the wrap. See docs/policy.md,
// "Resource limits".
type Limits struct {
	// MaxProcesses bounds the processes and threads the sandbox runs at
	// once, the launcher's own (at most 3) included: a fork storm stops
	// there (fork fails with EAGAIN) instead of at the host's limit. 0
	// means DefaultMaxProcesses; otherwise 8 to 4194304.
	MaxProcesses int `json:"max_processes,omitempty"`
	// MaxMemory bounds the command's memory, in bytes (at least 16 MiB);
	// 0 means no limit.
	MaxMemory int64 `json:"max_memory,omitempty"`
	// MaxTempSize bounds the private temp dir ($TMPDIR), in bytes (at
	// least 1 MiB): a write beyond it fails with ENOSPC. 0 means no limit.
	MaxTempSize int64 `json:"max_temp_size,omitempty"`
}

// DefaultMaxProcesses is the process limit of a policy that sets none:
// far above what a build runs at once (make -j on many cores, a test
// runner's workers, their threads), far below a host's own limit.
const DefaultMaxProcesses = 4096

// The smallest limits a policy may set: below them not even a shell
// starts.
const (
	minProcesses = 8
	minMemory    = 16 << 20
	minTempSize  = 1 << 20
)

// The names of the limits, as Limit.Name spells them.
const (
	LimitProcesses = "processes"
	LimitMemory    = "memory"
	LimitTempSize  = "temp-size"
)

// The mechanisms that hold a limit, as Limit.Mechanism spells them.
const (
	// MechPidsCgroup: a cgroup's pids.max; the launcher joins the cgroup
	// before any process of the sandbox exists.
	MechPidsCgroup = "pids-cgroup"
	// MechNprocRlimit: RLIMIT_NPROC, which counts the processes of the
	// sandbox's own user namespace only (namespaces runner, not as root).
	MechNprocRlimit = "rlimit-nproc"
	// MechMemoryCgroup: a cgroup v2's memory.max, with memory.swap.max 0.
	MechMemoryCgroup = "memory-cgroup"
	// MechASRlimit: RLIMIT_AS, each process's address space.
	MechASRlimit = "rlimit-as"
	// MechTmpfs: the temp dir is a tmpfs of that size (namespaces runner).
	MechTmpfs = "tmpfs"
)

// Limit is one resource limit of a wrap and how it is held.
type Limit struct {
	// Name is LimitProcesses, LimitMemory or LimitTempSize.
	Name string `json:"name"`
	// Value is the limit: processes, or bytes.
	Value int64 `json:"value"`
	// Mechanism is what holds it (MechPidsCgroup, ...); empty when
	// nothing does here, and Note says why.
	Mechanism string `json:"mechanism,omitempty"`
	// Default is set when the policy set no value and this is the
	// default (DefaultMaxProcesses).
	Default bool `json:"default,omitempty"`
	// Note says what the mechanism does not cover, or why there is none.
	Note string `json:"note,omitempty"`
}

// validateLimits checks a policy's limits; INVALID_POLICY names the field.
func validateLimits(l Limits) error {
	if n := l.MaxProcesses; n != 0 && (n < minProcesses || n > vocab.MaxProcesses) {
		return invalidf("limits.max_processes %d: want %d to %d (0: the default, %d)", n, minProcesses, vocab.MaxProcesses, DefaultMaxProcesses)
	}
	if n := l.MaxMemory; n != 0 && (n < minMemory || n > vocab.MaxBytes) {
		return invalidf("limits.max_memory %d: want %d (16 MiB) to %d bytes (0: none)", n, minMemory, vocab.MaxBytes)
	}
	if n := l.MaxTempSize; n != 0 && (n < minTempSize || n > vocab.MaxBytes) {
		return invalidf("limits.max_temp_size %d: want %d (1 MiB) to %d bytes (0: none)", n, minTempSize, vocab.MaxBytes)
	}
	return nil
}

// limitTraits are the limits a runner's launcher can hold.
type limitTraits struct {
	// launcher: the launcher joins cgroups (-cgroup) and sets rlimits
	// (-nproc, -as) before it execs the command.
	launcher bool
	// usernsNproc: the command runs in a user namespace of its own, where
	// RLIMIT_NPROC counts only the sandbox's processes (Linux 5.14's
	// per-namespace ucounts). Root ignores RLIMIT_NPROC all the same.
	usernsNproc bool
	// tmpfs: the launcher can make the temp dir a sized tmpfs (-tmpsize).
	tmpfs bool
}

// cgroups is what a cgroupMaker made for one wrap.
type cgroups struct {
	dirs         []string // the cgroups the launcher joins
	pids, memory bool     // the limits they hold
	why          string   // why not the ones asked for
	remove       func() error
}

// cgroupMaker makes the cgroups of one wrap: pids.max pids (when
// positive), memory.max memory (when positive). What it cannot make, it
// leaves out, saying why.
type cgroupMaker func(pids, memory int64) cgroups

// limitPlan is how one wrap's limits are held.
type limitPlan struct {
	limits []Limit
	gaps   []Gap
	// launch is the launcher's part, copied whole into the Spec.
	launch vocab.Limits
	remove func() error // removes the cgroups; nil when none was made
}

// planLimits decides how l is held by runner, whose launcher can hold lt;
// root says the caller is uid 0 (whom RLIMIT_NPROC does not bind); mk
// makes the cgroups when a limit needs one.
func planLimits(l Limits, runner string, lt limitTraits, root bool, mk cgroupMaker) limitPlan {
	var p limitPlan
	procs, def := int64(l.MaxProcesses), l.MaxProcesses == 0
	if def {
		procs = DefaultMaxProcesses
	}
	nproc := lt.usernsNproc && !root
	var cg cgroups
	if lt.launcher {
		var wantPids int64
		if !nproc && !def {
			// A pids cgroup per command costs about a millisecond, and a
			// cgroup v1 attach up to ten: made for a limit the policy
			// asks for, not for the default.
			wantPids = procs
		}
		if wantPids > 0 || l.MaxMemory > 0 {
			cg = mk(wantPids, l.MaxMemory)
			p.launch.Cgroups, p.remove = cg.dirs, cg.remove
		}
	}
	add := func(lim Limit, explicit bool) {
		p.limits = append(p.limits, lim)
		if lim.Mechanism == "" && explicit {
			p.gaps = append(p.gaps, Gap{Area: vocab.AreaLimits, Reason: lim.Name + " limit not held: " + lim.Note})
		}
	}
	const counts = "counts every process and thread of the sandbox, the launcher's own included"
	procLimit := Limit{Name: LimitProcesses, Value: procs, Default: def}
	switch {
	case nproc:
		procLimit.Mechanism, procLimit.Note = MechNprocRlimit, counts+", in the sandbox's own user namespace"
		p.launch.MaxProcesses = int(procs)
	case cg.pids:
		procLimit.Mechanism, procLimit.Note = MechPidsCgroup, counts
	case def && lt.launcher:
		procLimit.Note = "the default is held by RLIMIT_NPROC in the sandbox's own user namespace only (not for root, nor without a user namespace); a pids cgroup, which costs every command about a millisecond, is made only for a limit the policy sets (Limits.MaxProcesses, --max-processes)"
	case !lt.launcher:
		procLimit.Note = fmt.Sprintf("the %s runner has no process limit", runner)
	case lt.usernsNproc:
		procLimit.Note = "root is not bound by RLIMIT_NPROC, and no pids cgroup could be made: " + cg.why
	default:
		procLimit.Note = "no pids cgroup could be made (" + cg.why + "), and RLIMIT_NPROC would count every process of the user on the host (no user namespace of its own)"
	}
	add(procLimit, !def)
	if l.MaxMemory > 0 {
		m := Limit{Name: LimitMemory, Value: l.MaxMemory}
		switch {
		case cg.memory:
			m.Mechanism, m.Note = MechMemoryCgroup, "the sandbox's memory in all, swap excluded: the kernel kills a process of it when it is full"
		case lt.launcher:
			m.Mechanism, m.Note = MechASRlimit, "each process's address space, not the sandbox's memory in all; programs that reserve much address space (Go, Java, sanitizers) may fail below it (no cgroup v2 memory controller could be used: "+cg.why+")"
			p.launch.MaxAddressSpace = l.MaxMemory
			p.gaps = append(p.gaps, Gap{Area: vocab.AreaLimits, Reason: "memory limit held per process only (RLIMIT_AS): " + m.Note})
		default:
			m.Note = fmt.Sprintf("the %s runner has no memory limit", runner)
		}
		add(m, true)
	}
	if l.MaxTempSize > 0 {
		t := Limit{Name: LimitTempSize, Value: l.MaxTempSize}
		switch {
		case lt.tmpfs:
			t.Mechanism, t.Note = MechTmpfs, "the temp dir is a tmpfs of its own, in memory: its files are gone after the run"
			p.launch.TempSize = l.MaxTempSize
		case lt.launcher:
			t.Note = fmt.Sprintf("the %s runner mounts nothing: the temp dir is on the host's disk, unbounded (RLIMIT_FSIZE would cap each file the command writes anywhere, not the dir's total; needs the namespaces runner)", runner)
		default:
			t.Note = fmt.Sprintf("the %s runner has no temp dir size limit", runner)
		}
		add(t, true)
	}
	return p
}

// applyLimits plans r's limits for run and makes the cgroups they need,
// which w's cleanup removes. It returns the launcher's part of the Spec,
// and the gaps of the limits that cannot be held.
func applyLimits(run runner, r *resolved, w *Wrapped) (vocab.Limits, []Gap) {
	p := planLimits(r.limits, run.name(), run.traits().limits, isRoot(), newCgroups)
	w.Limits = p.limits
	if p.remove != nil {
		prev := w.cleanup
		w.cleanup = func() error {
			err := p.remove()
			if prev != nil {
				err = errors.Join(err, prev())
			}
			return err
		}
	}
	return p.launch, p.gaps
}
