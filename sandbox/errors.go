package sandbox

import (
	"errors"
	"fmt"
)

// Error codes carried by [Error].
const (
	// CodeUnavailable: no runner can confine the command here; do not run it.
	CodeUnavailable = "SANDBOX_UNAVAILABLE"
	// CodeInvalidPolicy: the request or policy is malformed; nothing was spawned or changed.
	CodeInvalidPolicy = "INVALID_POLICY"
)

// Sentinels for errors.Is: every *Error matches the sentinel of its code.
var (
	ErrUnavailable   = errors.New(CodeUnavailable)
	ErrInvalidPolicy = errors.New(CodeInvalidPolicy)
)

// Error is the error type of every failed Wrap.
type Error struct {
	// Code is CodeUnavailable or CodeInvalidPolicy.
	Code string `json:"code"`
	// Runner is the runner concerned, if any.
	Runner string `json:"runner,omitempty"`
	// Reason is a human-readable explanation.
	Reason string `json:"reason"`
	// Err is the underlying error, if any.
	Err error `json:"-"`
}

func (e *Error) Error() string {
	s := e.Code + ": "
	if e.Runner != "" {
		s += e.Runner + ": "
	}
	s += e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the sentinel of the code and the underlying error.
func (e *Error) Unwrap() []error {
	errs := []error{}
	switch e.Code {
	case CodeUnavailable:
		errs = append(errs, ErrUnavailable)
	case CodeInvalidPolicy:
		errs = append(errs, ErrInvalidPolicy)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

func invalidf(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidPolicy, Reason: fmt.Sprintf(format, args...)}
}

func unavailable(runner, reason string, err error) *Error {
	return &Error{Code: CodeUnavailable, Runner: runner, Reason: reason, Err: err}
}
