package launcher

/*
#include <stdlib.h>
#include "ns_linux.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// cDecode runs the C stage's decoder (ns_decode_linux.c) on args, for the
// test that holds it to the Go definition in internal/vocab.
func cDecode(args []string) (vocab.Spec, error) {
	cargs := make([]*C.char, len(args)+1)
	for i, a := range args {
		cargs[i] = C.CString(a)
	}
	defer func() {
		for _, p := range cargs[:len(args)] {
			C.free(unsafe.Pointer(p))
		}
	}()
	var s C.struct_spec
	var errbuf [256]C.char
	var argv **C.char
	if len(args) > 0 {
		argv = &cargs[0]
	}
	if C.sbx_decode(C.int(len(args)), argv, &s, &errbuf[0], C.size_t(len(errbuf))) != 0 {
		return vocab.Spec{}, errors.New(C.GoString(&errbuf[0]))
	}
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
	spec := vocab.Spec{
		Writable:     list(s.writable, s.nwritable),
		ReadOnly:     list(s.ro, s.nro),
		Guarded:      list(s.guard, s.nguard),
		DenyRead:     list(s.deny, s.ndeny),
		UnixSockets:  list(s.unixsock, s.nunixsock),
		Argv:         list(s.cmd, s.ncmd),
		AllowNetwork: s.allow_net != 0,
		Proxied:      s.proxied != 0,
		RequireFull:  s.require_full != 0,
		Probe:        s.probe != 0,
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
	for _, port := range unsafe.Slice(s.ports, s.nports) {
		spec.Ports = append(spec.Ports, int(port))
	}
	C.free(unsafe.Pointer(s.writable))
	C.free(unsafe.Pointer(s.ro))
	C.free(unsafe.Pointer(s.deny))
	C.free(unsafe.Pointer(s.unixsock))
	C.free(unsafe.Pointer(s.ports))
	return spec, nil
}
