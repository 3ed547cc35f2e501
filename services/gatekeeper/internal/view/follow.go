package view

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// Follow replays LEDGER and ATTEST from their first messages into the view
// and keeps applying new ones until ctx ends. It returns once both
// consumers run; CaughtUp waits for the replay.
func (v *View) Follow(ctx context.Context, js jetstream.JetStream) error {
	v.mu.Lock()
	v.anchors, v.js, v.followsAttest = ledger.NewAnchors(js), js, true
	v.mu.Unlock()
	err := follow(ctx, js, stream.Ledger, v.ledgerCaught, func(m jetstream.Msg) {
		if c, ok := subject.ChainOf(m.Subject()); ok {
			var seq uint64
			if meta, err := m.Metadata(); err == nil {
				seq = meta.Sequence.Stream
			}
			v.applyLedger(ctx, c, seq, m.Data())
		}
	})
	if err != nil {
		return err
	}
	return follow(ctx, js, stream.Attest, v.attestCaught, func(m jetstream.Msg) {
		var at time.Time
		var seq uint64
		if meta, err := m.Metadata(); err == nil {
			at, seq = meta.Timestamp, meta.Sequence.Stream
		}
		v.applyAttestation(m.Subject(), seq, m.Data(), at)
	})
}

// CaughtUp waits until Follow's replay has applied the messages both
// streams held when it started, or ctx ends.
func (v *View) CaughtUp(ctx context.Context) error {
	for _, ch := range []chan struct{}{v.ledgerCaught, v.attestCaught} {
		select {
		case <-ch:
		case <-ctx.Done():
			return errors.New("projection: replay did not finish")
		}
	}
	return nil
}

// follow replays a stream from its first message and keeps applying new
// ones until ctx ends. caught is closed once the messages present at start
// were applied.
func follow(ctx context.Context, js jetstream.JetStream, streamName string, caught chan struct{}, apply func(jetstream.Msg)) error {
	s, err := js.Stream(ctx, streamName)
	if err != nil {
		return fmt.Errorf("projection: %w", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("projection: %w", err)
	}
	last := info.State.LastSeq
	if info.State.Msgs == 0 {
		close(caught)
		last = 0
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return fmt.Errorf("projection: %w", err)
	}
	once := sync.OnceFunc(func() {
		if last != 0 {
			close(caught)
		}
	})
	cc, err := cons.Consume(func(m jetstream.Msg) {
		apply(m)
		if meta, err := m.Metadata(); err == nil && last != 0 && meta.Sequence.Stream >= last {
			once()
		}
	})
	if err != nil {
		return fmt.Errorf("projection: %w", err)
	}
	go func() {
		<-ctx.Done()
		cc.Stop()
	}()
	return nil
}
