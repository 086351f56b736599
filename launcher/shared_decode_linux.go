//go:build linux && cgo && sandbox_ctest

package launcher

/*
#include <stdlib.h>
#include "shared_spec_linux.h"

// sbx_layout is where an option's values lie in struct spec: the
// generated table's field and count offsets and a value's size.
struct sbx_layout {
	long field, count;
	size_t size;
};

static struct sbx_layout sbx_layout_of(int id) {
	static const struct sbx_layout layouts[SBX_NOPTS] = {
#define SBX_LAYOUT_ROW(id, name, kind, max, repeatable, path, required, needs, what, field, count, size) [id] = {field, count, size},
		SBX_OPTIONS(SBX_LAYOUT_ROW)
#undef SBX_LAYOUT_ROW
	};
	return layouts[id];
}
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// withCSpec runs the C launchers' decoder (shared_decode_linux.c) on args and,
// when it accepts them, calls use with the decoded spec while the strings
// it points into are alive; it returns the decoder's refusal.
func withCSpec(args []string, use func(*C.struct_spec)) error {
	// argv in C memory: the spec points into it (cmd), and cgo refuses a
	// Go pointer inside what it passes.
	argv := (**C.char)(C.calloc(C.size_t(len(args)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	cargs := unsafe.Slice(argv, len(args)+1)
	for i, a := range args {
		cargs[i] = C.CString(a)
	}
	defer func() {
		for _, p := range cargs[:len(args)] {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(argv))
	}()
	var s C.struct_spec
	var errbuf [256]C.char
	if C.sbx_decode(C.int(len(args)), argv, &s, &errbuf[0], C.size_t(len(errbuf))) != 0 {
		return errors.New(C.GoString(&errbuf[0]))
	}
	defer func() {
		// The decoder allocates each repeatable option's values.
		for id := range vocab.Options {
			if l := C.sbx_layout_of(C.int(id)); l.count >= 0 {
				C.free(*(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(&s), l.field)))
			}
		}
	}()
	use(&s)
	return nil
}

// cDecode runs the C launchers' decoder on args, for the test that holds it
// to the Go definition in internal/vocab. It reads the decoded struct
// spec back through the option table: each option's values from the
// offsets the generated header gives (SBX_OPTIONS), stored as Decode
// stores them (vocab.Option.Put).
func cDecode(args []string) (vocab.Spec, error) {
	var spec vocab.Spec
	err := withCSpec(args, func(s *C.struct_spec) {
		base := unsafe.Pointer(s)
		for id := range vocab.Options {
			o := &vocab.Options[id]
			l := C.sbx_layout_of(C.int(id))
			field := unsafe.Add(base, l.field)
			if l.count < 0 {
				putCValue(&spec, o, field, uintptr(l.size), false)
				continue
			}
			values := *(*unsafe.Pointer)(field)
			n := int(*(*C.int)(unsafe.Add(base, l.count)))
			for i := 0; i < n; i++ {
				putCValue(&spec, o, unsafe.Add(values, i*int(l.size)), uintptr(l.size), true)
			}
		}
		if s.ncmd > 0 {
			spec.Argv = make([]string, s.ncmd)
			for i, c := range unsafe.Slice(s.cmd, s.ncmd) {
				spec.Argv[i] = C.GoString(c)
			}
		}
	})
	if err != nil {
		return vocab.Spec{}, err
	}
	return spec, nil
}

// putCValue stores in spec the value of o at p in struct spec, size bytes
// (a pointer to text, an int or a long long). A value of a repeatable
// option (given) is stored as it is; a single one only when the decoder
// set it (not NULL, not 0; a network mode always).
func putCValue(spec *vocab.Spec, o *vocab.Option, p unsafe.Pointer, size uintptr, given bool) {
	switch o.Value {
	case vocab.Flag, vocab.Number, vocab.NetModeWord:
		var n int64
		if size == unsafe.Sizeof(C.longlong(0)) {
			n = int64(*(*C.longlong)(p))
		} else {
			n = int64(*(*C.int)(p))
		}
		if given || n != 0 || o.Value == vocab.NetModeWord {
			o.Put(spec, "", n)
		}
	default:
		if c := *(**C.char)(p); c != nil || given {
			o.Put(spec, C.GoString(c), 0)
		}
	}
}
