//go:build linux && cgo && sandbox_ctest

package launcher

/*
#include <stdlib.h>
#include "shared_spec_linux.h"
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
		C.free(unsafe.Pointer(s.writable))
		C.free(unsafe.Pointer(s.ro))
		C.free(unsafe.Pointer(s.guard))
		C.free(unsafe.Pointer(s.deny))
		C.free(unsafe.Pointer(s.unixsock))
		C.free(unsafe.Pointer(s.cgroups))
		C.free(unsafe.Pointer(s.ports))
	}()
	use(&s)
	return nil
}

// cDecode runs the C launchers' decoder on args, for the test that holds it
// to the Go definition in internal/vocab.
func cDecode(args []string) (vocab.Spec, error) {
	var spec vocab.Spec
	err := withCSpec(args, func(s *C.struct_spec) {
		list := func(p **C.char, n C.int) []string {
			if n == 0 {
				return nil
			}
			out := make([]string, n)
			for i, c := range unsafe.Slice(p, n) {
				out[i] = C.GoString(c)
			}
			return out
		}
		spec = vocab.Spec{
			Writable:    list(s.writable, s.nwritable),
			ReadOnly:    list(s.ro, s.nro),
			Guarded:     list(s.guard, s.nguard),
			DenyRead:    list(s.deny, s.ndeny),
			UnixSockets: list(s.unixsock, s.nunixsock),
			Argv:        list(s.cmd, s.ncmd),
			Network:     vocab.NetMode(s.net),
			RequireFull: s.require_full != 0,
			Probe:       s.probe != 0,
			Limits:      vocab.Limits{Cgroups: list(s.cgroups, s.ncgroups), MaxProcesses: int(s.nproc), MaxAddressSpace: int64(s.as), TempSize: int64(s.tmpsize)},
		}
		if s.tempdir != nil {
			spec.TempDir = C.GoString(s.tempdir)
		}
		if s.dir != nil {
			spec.Dir = C.GoString(s.dir)
		}
		if s.seccomp != nil {
			spec.Seccomp = C.GoString(s.seccomp)
		}
		if s.bridge != nil {
			spec.Bridge = C.GoString(s.bridge)
		}
		if s.notice != nil {
			spec.Notice = C.GoString(s.notice)
		}
		if s.overlay != nil {
			spec.Overlay = C.GoString(s.overlay)
		}
		if s.overlay_dir != nil {
			spec.OverlayDir = C.GoString(s.overlay_dir)
		}
		spec.LandlockABI = int(s.abi)
		for _, port := range unsafe.Slice(s.ports, s.nports) {
			spec.Ports = append(spec.Ports, int(port))
		}
	})
	if err != nil {
		return vocab.Spec{}, err
	}
	return spec, nil
}
