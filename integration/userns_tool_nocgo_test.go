//go:build linux && !cgo

package integration

// diagnoseWithoutUserns needs libseccomp (cgo) to build its filter; this
// suite needs a cgo build anyway (no Linux runner works without one).
func diagnoseWithoutUserns() string {
	return "error: built with CGO_ENABLED=0: no libseccomp to refuse user namespaces with"
}
