//go:build unix

package main

import (
	"os/signal"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSignalBeforeStart: a signal sandbox-run receives once it catches
// them and before the command started is the one it dies of; none
// received, none returned.
func TestSignalBeforeStart(t *testing.T) {
	s := catchSignals()
	<-s.ready
	t.Cleanup(func() { signal.Stop(s.c) })
	if sig, ok := s.beforeStart(); ok {
		t.Fatalf("no signal sent, got %v", sig)
	}
	if err := unix.Kill(unix.Getpid(), unix.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	// Delivered by the runtime's signal loop: wait for it.
	sig := <-s.c
	s.c <- sig
	got, ok := s.beforeStart()
	if !ok || got != unix.SIGUSR1 {
		t.Fatalf("beforeStart = %v %v, want SIGUSR1", got, ok)
	}
}
