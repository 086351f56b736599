//go:build linux && cgo && sandbox_ctest

package launcher

/*
#include "ns_guard_linux.h"
#include "ns_linux.h"
#include "ns_plan_linux.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// cPlan is a plan of ns-run's stage 2 (ns_plan_linux.c) as its test reads
// it: the planner run in this process on what the host's tree holds now,
// with nothing mounted.
type cPlan struct {
	Layers  []cLayer   // in the order they would be mounted
	Guarded []cGuarded // the names the guard would refuse
	Carved  []string   // the deny-read paths Landlock would carve out too
}

// cLayer is one planned mount: Kind is "writable", "pin", "ro", "deny" or
// "socket"; Dev and Ino, for "ro" and "pin", the object planned on.
type cLayer struct {
	Kind     string
	Path     string
	Dir      bool
	Dev, Ino uint64
}

// cGuarded is one guarded name: Name in the directory Dev, Ino, planned
// for the protected path For; Bound when the name is there, under a mount.
type cGuarded struct {
	Dev, Ino  uint64
	Name, For string
	Bound     bool
}

var layerKinds = map[C.int]string{
	C.LAYER_WRITABLE: "writable", C.LAYER_PIN: "pin", C.LAYER_RO: "ro", C.LAYER_DENY: "deny", C.LAYER_SOCKET: "socket",
}

// cPlanFor encodes spec as the provider would for ns-run, decodes it with the
// C decoder and runs the C planner on it; the planner's refusal is the
// text of the fatal line stage 2 would print.
func cPlanFor(spec vocab.Spec) (cPlan, error) {
	args, err := vocab.Encode(vocab.NsRun, spec)
	if err != nil {
		return cPlan{}, err
	}
	var plan cPlan
	var planErr error
	err = withCSpec(args[1:], func(s *C.struct_spec) {
		var p C.struct_sbx_plan
		defer C.ns_plan_free(&p)
		if C.ns_plan(s, &p) != 0 {
			planErr = errors.New(C.GoString(&p.err[0]))
			return
		}
		for _, l := range unsafe.Slice(p.layers, p.nlayers) {
			plan.Layers = append(plan.Layers, cLayer{
				Kind: layerKinds[l.kind], Path: C.GoString(l.path), Dir: l.isdir != 0, Dev: uint64(l.dev), Ino: uint64(l.ino),
			})
		}
		for _, g := range unsafe.Slice(p.guarded, p.nguarded) {
			plan.Guarded = append(plan.Guarded, cGuarded{
				Dev: uint64(g.dev), Ino: uint64(g.ino), Name: C.GoString(g.name), For: C.GoString(g.path), Bound: g.bound != 0,
			})
		}
		deny := unsafe.Slice(s.deny, s.ndeny)
		for i, c := range unsafe.Slice(p.carved, s.ndeny) {
			if c != 0 {
				plan.Carved = append(plan.Carved, C.GoString(deny[i]))
			}
		}
	})
	if err == nil {
		err = planErr
	}
	return plan, err
}

// cGuards reports whether ns-run runs its guard for spec (ns_guards), on
// the arguments the provider would encode for it.
func cGuards(spec vocab.Spec) (bool, error) {
	args, err := vocab.Encode(vocab.NsRun, spec)
	if err != nil {
		return false, err
	}
	var guards bool
	err = withCSpec(args[1:], func(s *C.struct_spec) { guards = C.ns_guards(s) != 0 })
	return guards, err
}
