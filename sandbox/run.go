package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Outcome kinds of a run that its context ended (Run).
const (
	// OutcomeTimeout: the context's deadline passed and the whole sandbox
	// was stopped; ExitCode is what the launcher then returned.
	OutcomeTimeout OutcomeKind = "timeout"
	// OutcomeCancelled: the context was cancelled and the whole sandbox
	// was stopped.
	OutcomeCancelled OutcomeKind = "cancelled"
)

// classifyLimit is how much of the command's stderr Run keeps for
// Classify: the launcher's own lines come first, so the start is enough.
const classifyLimit = 64 << 10

// runWaitDelay bounds how long Run waits for the command's streams once
// the launcher is gone.
const runWaitDelay = 5 * time.Second

// Run spawns the wrapped command with the given standard streams (nil
// means the null device), waits for it, and returns its classified
// outcome. When ctx ends first the whole sandbox is stopped, as Command's
// Cancel and WaitDelay do, and the outcome is OutcomeTimeout or
// OutcomeCancelled. The error is only for a command that could not be
// started at all; a command that ran and failed is an Outcome. Run may be
// called more than once; Cleanup is still the caller's.
func (w *Wrapped) Run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (Outcome, error) {
	if w == nil {
		return Outcome{}, errors.New("sandbox: Run of a nil Wrapped (check Wrap's error first)")
	}
	cmd := w.Command(ctx)
	if cmd.WaitDelay == 0 {
		// A process that escaped the kill while holding a stream must not
		// hold Run: the streams are closed this long after the launcher
		// was reaped or the context ended.
		cmd.WaitDelay = runWaitDelay
	}
	head := &headBuffer{limit: classifyLimit}
	cmd.Stdin, cmd.Stdout = stdin, stdout
	cmd.Stderr = head
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, head)
	}
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		return Outcome{}, fmt.Errorf("sandbox: start %s: %w", w.Path, err)
	}
	code := cmd.ProcessState.ExitCode()
	o := w.Classify(code, head.b)
	// A command that ended on its own, successfully or as the sandbox's
	// failure, says so even when the context ended meanwhile.
	if cerr := ctx.Err(); cerr != nil && code != 0 && o.Kind != OutcomeRunnerFailure {
		o.Kind, o.Reason = OutcomeCancelled, cerr.Error()
		if errors.Is(cerr, context.DeadlineExceeded) {
			o.Kind = OutcomeTimeout
		}
	}
	return o, nil
}

// headBuffer keeps the first limit bytes written to it and accepts the
// rest unkept.
type headBuffer struct {
	b     []byte
	limit int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.limit - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
