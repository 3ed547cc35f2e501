package stream_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// A CLAIMS stream created as a work queue by an earlier version is kept:
// Ensure neither fails nor tries to change its retention.
func TestEnsureKeepsAnOlderWorkQueueClaims(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	ctx := t.Context()
	cfg := stream.ClaimsConfig(stream.DefaultOptions())
	cfg.Retention = jetstream.WorkQueuePolicy
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := stream.Ensure(ctx, js, stream.DefaultOptions()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	c, _ := js.Stream(ctx, stream.Claims)
	if r := c.CachedInfo().Config.Retention; r != jetstream.WorkQueuePolicy {
		t.Fatalf("retention %v after Ensure", r)
	}
	// A new one is a limits-retention queue.
	s2 := natstest.RunServer(t)
	_, js2 := natstest.Connect(t, s2.ClientURL())
	if err := stream.Ensure(ctx, js2, stream.DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	c2, _ := js2.Stream(ctx, stream.Claims)
	if r := c2.CachedInfo().Config.Retention; r != jetstream.LimitsPolicy {
		t.Fatalf("new CLAIMS retention %v, want limits", r)
	}
}

// The purger removes exactly what the consumer acknowledged: below the ack
// floor, never an unacknowledged message or one above it.
func TestPurgerRemovesOnlyAcknowledged(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	ctx := t.Context()
	if err := stream.Ensure(ctx, js, stream.DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	claims, err := js.Stream(ctx, stream.Claims)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := js.Publish(ctx, subject.Claims(fmt.Sprintf("s%d", i)), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := claims.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "c", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cons.Fetch(10, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []jetstream.Msg
	for m := range b.Messages() {
		got = append(got, m)
	}
	if len(got) != 10 {
		t.Fatalf("fetched %d", len(got))
	}
	// Acknowledge 1..4 and 6: the floor is 4 (5 is pending).
	for i, m := range got {
		if i < 4 || i == 5 {
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := stream.Purger{Stream: claims, Consumer: cons}
	n, err := p.Step(ctx)
	if err != nil || n != 4 {
		t.Fatalf("Step = %d, %v; want 4 purged", n, err)
	}
	info, err := claims.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.FirstSeq != 5 || info.State.Msgs != 6 {
		t.Fatalf("after purge first=%d msgs=%d, want first 5 and 6 left", info.State.FirstSeq, info.State.Msgs)
	}
	if n, err := p.Step(ctx); err != nil || n != 0 {
		t.Fatalf("second Step without progress = %d, %v", n, err)
	}
	// The pending message is still delivered after the purge.
	if err := got[4].Nak(); err != nil {
		t.Fatal(err)
	}
	b, err = cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range b.Messages() {
		md, _ := m.Metadata()
		if md.Sequence.Stream != 5 {
			t.Fatalf("redelivered seq %d, want 5", md.Sequence.Stream)
		}
		_ = m.DoubleAck(ctx)
	}
	if n, err := p.Step(ctx); err != nil || n != 2 {
		t.Fatalf("Step after acking 5 = %d, %v; want 2 (5 and 6)", n, err)
	}
	info, _ = claims.Info(ctx)
	if info.State.FirstSeq != 7 || info.State.Msgs != 4 {
		t.Fatalf("after second purge first=%d msgs=%d", info.State.FirstSeq, info.State.Msgs)
	}
}
