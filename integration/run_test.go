//go:build linux

package integration

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bo-agent/sandbox-local/sandbox"
)

// TestRunOutcomes: Wrapped.Run passes the streams, returns the command's
// classified outcome (its status; a refusal as likely-denied, with the
// write absent), and tells a run its context ended (timeout, cancelled)
// from one that ended by itself, with every process of the command gone.
func TestRunOutcomes(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		ctx := context.Background()
		var out, errb bytes.Buffer
		w := s.wrap(s.policy(), "/bin/sh", "-c", "cat; echo err >&2; exit 3")
		o, err := w.Run(ctx, strings.NewReader("in\n"), &out, &errb)
		if err != nil || o.Kind != sandbox.OutcomeChild || o.ExitCode != 3 || out.String() != "in\n" || !strings.HasSuffix(errb.String(), "err\n") {
			t.Errorf("ran: %+v %v, stdout %q stderr %q; want child 3, in, err", o, err, out.String(), errb.String())
		}

		escape := filepath.Join(s.base, "escape")
		w = s.wrap(s.policy(), "/bin/sh", "-c", "echo x > "+escape)
		if o, err := w.Run(ctx, nil, nil, nil); err != nil || o.Kind != sandbox.OutcomeDenied || o.ExitCode == 0 {
			t.Errorf("refused write: %+v %v; want likely-denied", o, err)
		}
		wantAbsent(t, escape)
		// Control: the same write inside the workspace.
		inside := filepath.Join(s.ws, "inside")
		w = s.wrap(s.policy(), "/bin/sh", "-c", "echo x > "+inside)
		if o, err := w.Run(ctx, nil, nil, nil); err != nil || o.Kind != sandbox.OutcomeChild || o.ExitCode != 0 {
			t.Errorf("allowed write: %+v %v; want child 0", o, err)
		}
		wantContent(t, inside, "x\n")

		for _, kind := range []sandbox.OutcomeKind{sandbox.OutcomeTimeout, sandbox.OutcomeCancelled} {
			marker := newMarker(t)
			w := s.wrap(s.policy(), "/bin/sh", "-c", markedScript(t, "SLEEPER & echo ready; wait", marker))
			ctx, cancel := context.WithCancel(context.Background())
			if kind == sandbox.OutcomeTimeout {
				ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
			}
			seen := make(chan bool, 1)
			go func() {
				deadline := time.Now().Add(2 * time.Second)
				for time.Now().Before(deadline) && !sleeperStillAlive(marker) {
					time.Sleep(10 * time.Millisecond)
				}
				seen <- sleeperStillAlive(marker)
				if kind == sandbox.OutcomeCancelled {
					cancel()
				}
			}()
			o, err := w.Run(ctx, nil, &bytes.Buffer{}, nil)
			stop := time.Now()
			cancel()
			if !<-seen {
				t.Fatalf("%s: the sleeper was not seen running before the context ended: the case proves nothing", kind)
			}
			if err != nil || o.Kind != kind {
				t.Errorf("%s: %+v %v; want %s", kind, o, err, kind)
			}
			waitGone(t, marker, stop)
		}
	})
}
