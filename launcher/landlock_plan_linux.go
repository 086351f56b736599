//go:build linux && cgo && sandbox_ctest

package launcher

/*
#include <stdlib.h>
#include "landlock_run_linux.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// cLandlockPlan runs landlock-run's C planner (landlock_run_linux.c) on
// spec, as the provider would encode it, with ptys as the terminals of
// the command's standard descriptors: its grants in the Go plan's type,
// for the test that holds the two planners together.
func cLandlockPlan(spec vocab.Spec, ptys []string) ([]grant, error) {
	args, err := vocab.Encode(vocab.LandlockRun, spec)
	if err != nil {
		return nil, err
	}
	var out []grant
	err = withCSpec(args[1:], func(s *C.struct_spec) {
		cptys := make([]*C.char, len(ptys)+1)
		for i, p := range ptys {
			cptys[i] = C.CString(p)
			defer C.free(unsafe.Pointer(cptys[i]))
		}
		// The array itself in C memory: cgo refuses Go pointers in it.
		arr := (**C.char)(C.calloc(C.size_t(len(cptys)), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
		defer C.free(unsafe.Pointer(arr))
		copy(unsafe.Slice(arr, len(cptys)), cptys)
		var p C.struct_sbx_ll_plan
		C.sbx_ll_make_plan(s, arr, C.int(len(ptys)), &p)
		defer C.sbx_ll_free_plan(&p)
		for _, g := range unsafe.Slice(p.g, p.n) {
			out = append(out, grant{Path: C.GoString(g.path), Access: uint64(g.access), Dir: g.dir != 0, Class: grantClass(g.class)})
		}
	})
	return out, err
}
