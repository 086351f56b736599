//go:build linux && cgo && sandbox_ctest

package launcher

/*
#include <stdlib.h>
#include "shared_linux.h"
// A call without arguments would make cgo's prologue trip -Wextra.
static void refusals_end(int unused) {
	(void)unused;
	sbx_refusals_end();
}
*/
import "C"

import (
	"os"
	"unsafe"
)

// refusalCall is one refusal handed to a writer.
type refusalCall struct{ op, rule, path string }

// cRefusals hands calls to the C writer (shared_linux.c's sbx_refused,
// then sbx_refusals_end) on a fresh pipe and returns what it wrote.
func cRefusals(calls []refusalCall) ([]byte, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	C.sbx_refusals_reset(C.int(w.Fd()))
	for _, c := range calls {
		op, rule, path := C.CString(c.op), C.CString(c.rule), C.CString(c.path)
		C.sbx_refused(op, rule, path)
		C.free(unsafe.Pointer(op))
		C.free(unsafe.Pointer(rule))
		C.free(unsafe.Pointer(path))
	}
	C.refusals_end(0)
	C.sbx_refusals_reset(-1)
	w.Close()
	var out []byte
	buf := make([]byte, 1<<16)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, nil
		}
	}
}
