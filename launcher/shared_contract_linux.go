package launcher

// The C headers generated from Go (internal/cheader): the launcher
// contract of both C launchers from package vocab
// (shared_contract_linux.h); the landlock launcher's rights from package
// llrights (landlock_rights_linux.h) and its metadata supervisor's rules
// from package metarules (landlock_metadata_rules_linux.h):
//
//go:generate go run ../internal/cheader .

// Every C file of this package builds without a warning (these flags
// apply to the whole package's C):

// #cgo CFLAGS: -Wall -Wextra -Werror
import "C"
