package sandbox

import (
	"context"
	"testing"
)

// TestRunOfANilWrap: a consumer that skipped Wrap's error gets an error,
// not a panic.
func TestRunOfANilWrap(t *testing.T) {
	var w *Wrapped
	if _, err := w.Run(context.Background(), nil, nil, nil); err == nil {
		t.Error("Run of a nil *Wrapped returned no error")
	}
}
