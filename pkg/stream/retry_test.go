package stream_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// A service starting before its server serves JetStream waits for it
// instead of exiting: EnsureRetry keeps trying, logging why, and creates
// the streams once JetStream is there.
func TestEnsureRetryWaitsForJetStream(t *testing.T) {
	srv := natstest.RunWithOptions(t, &server.Options{}) // JetStream off for now
	_, js := natstest.Connect(t, srv.ClientURL())
	var logs natstest.SyncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stream.EnsureRetry(ctx, js, stream.DefaultOptions(), log) }()

	natstest.Eventually(t, 10*time.Second, func() error {
		if n := strings.Count(logs.String(), "retrying"); n < 2 {
			return errors.New("no retries logged yet")
		}
		return nil
	})
	select {
	case err := <-done:
		t.Fatalf("EnsureRetry returned before JetStream was enabled: %v", err)
	default:
	}
	if err := srv.EnableJetStream(&server.JetStreamConfig{StoreDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("EnsureRetry: %v\n%s", err, logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("EnsureRetry did not finish after JetStream was enabled\n%s", logs.String())
	}
	for _, name := range []string{stream.Intake, stream.Ledger, stream.Claims, stream.Attest} {
		if _, err := js.Stream(ctx, name); err != nil {
			t.Errorf("stream %s: %v", name, err)
		}
	}
	if !strings.Contains(logs.String(), "JetStream streams ready") {
		t.Errorf("no ready line in the log:\n%s", logs.String())
	}
}

// A failure retrying cannot cure is returned at once.
func TestEnsureRetryReturnsPermanentErrors(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	opts := stream.DefaultOptions()
	opts.Partitions = 0 // invalid
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	err := stream.EnsureRetry(ctx, js, opts, slog.New(slog.DiscardHandler))
	if err == nil || stream.Transient(err) {
		t.Fatalf("EnsureRetry with 0 partitions = %v, want a permanent error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a permanent error took %v: it was retried", d)
	}
	// So is an INTAKE made with another partition count.
	opts = stream.DefaultOptions()
	natstest.Bootstrap(t, js, &opts)
	if err := stream.EnsureRetry(ctx, js, opts, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("EnsureRetry on a bootstrapped server: %v", err)
	}
	opts.Partitions *= 2
	start = time.Now()
	err = stream.EnsureRetry(ctx, js, opts, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "partition count") {
		t.Fatalf("EnsureRetry with another partition count = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a permanent error took %v: it was retried", d)
	}
}

// Ending the context ends the wait with the context's error and the last
// failure.
func TestEnsureRetryStopsWithTheContext(t *testing.T) {
	srv := natstest.RunWithOptions(t, &server.Options{})
	_, js := natstest.Connect(t, srv.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	err := stream.EnsureRetry(ctx, js, stream.DefaultOptions(), slog.New(slog.DiscardHandler))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("EnsureRetry after the deadline = %v, want the deadline", err)
	}
	if !strings.Contains(err.Error(), "jetstream") && !strings.Contains(err.Error(), "responders") {
		t.Errorf("the error does not say what failed: %v", err)
	}
}
