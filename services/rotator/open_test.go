package rotator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/services/rotator"
)

// TestStoppedBeforeJetStreamIsReady is the regression test for issue #23's
// panic: the rotator's context ended while it waited for JetStream (here:
// streams nobody set up, as `claimcheck up` stopping after a storage error
// leaves them), Open returned nil with no key registry, and Run went on to
// a pass that dereferenced the nil registry. Open must report the fault,
// Run must return without a pass, and a Pass without an Open must be an
// error, never a nil dereference.
func TestStoppedBeforeJetStreamIsReady(t *testing.T) {
	s := natstest.RunServer(t)
	nc, _ := natstest.Connect(t, s.ClientURL())
	// CheckStreams: wait for someone else to set the streams up; nobody does.
	set := service.Settings{Conn: nc, CheckStreams: true}

	t.Run("Open", func(t *testing.T) {
		svc, err := rotator.New(validConfig(t), set)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		err = svc.Open(ctx)
		if err == nil {
			t.Fatal("Open returned nil although its context ended before JetStream was ready (half-open: no key registry)")
		}
		if !strings.Contains(err.Error(), "JetStream") {
			t.Fatalf("Open's error does not name what it waited for: %v", err)
		}
		if _, err := svc.Pass(t.Context()); err == nil {
			t.Fatal("Pass after a failed Open returned nil")
		}
	})

	t.Run("Run", func(t *testing.T) {
		svc, err := rotator.New(validConfig(t), set)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- svc.Run(ctx) }()
		select {
		case err := <-done:
			// Stopping on request is not a failure of the rotator's.
			if err != nil {
				t.Fatalf("Run after its context ended before JetStream was ready: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return within 10s of its context ending")
		}
		if svc.Ready() == nil {
			t.Fatal("ready although it never ran")
		}
	})

	t.Run("PassWithoutOpen", func(t *testing.T) {
		svc, err := rotator.New(validConfig(t), set)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Pass(t.Context()); err == nil || !strings.Contains(err.Error(), "not open") {
			t.Fatalf("Pass without Open: %v, want an error saying the rotator is not open", err)
		}
	})
}
