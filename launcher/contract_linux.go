package launcher

// The launcher contract of the C starts is generated from package vocab
// (contract_linux.h), the metadata supervisor's rules from package
// metarules (metadata_rules_linux.h):
//
//go:generate go run ../internal/cheader .

// Every C file of this package builds without a warning (these flags
// apply to the whole package's C):

// #cgo CFLAGS: -Wall -Wextra -Werror
import "C"
