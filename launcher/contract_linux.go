package launcher

// The launcher contract of the C starts is generated from package vocab:
//
//go:generate go run ../internal/vocab/cheader contract_linux.h

// Every C file of this package builds without a warning (these flags
// apply to the whole package's C):

// #cgo CFLAGS: -Wall -Wextra -Werror
import "C"
