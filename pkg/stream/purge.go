package stream

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Purger removes from a limits-retention queue the messages its consumer
// has acknowledged: everything below the consumer's ack floor, in one purge
// (one fsync with sync_interval always) instead of one tombstone per
// acknowledgement as work-queue retention would write. INTAKE (ingest) and
// CLAIMS (verifier) are drained this way. Several processes may run a
// Purger over the same consumer: purging below a floor is idempotent.
type Purger struct {
	Stream   jetstream.Stream
	Consumer jetstream.Consumer
	// Subject limits the purge (an INTAKE partition); "" purges the stream.
	Subject string

	to    uint64 // stream sequence purged up to (exclusive of the floor's next)
	acked uint64 // consumer ack floor at the last purge
}

// Step purges up to the consumer's current ack floor. It returns how many
// acknowledged deliveries the purge covered since the previous Step (0 when
// the floor has not moved).
func (p *Purger) Step(ctx context.Context) (uint64, error) {
	info, err := p.Consumer.Info(ctx)
	if err != nil {
		return 0, err
	}
	floor := info.AckFloor.Stream
	if floor <= p.to {
		return 0, nil
	}
	opts := []jetstream.StreamPurgeOpt{jetstream.WithPurgeSequence(floor + 1)}
	if p.Subject != "" {
		opts = append(opts, jetstream.WithPurgeSubject(p.Subject))
	}
	if err := p.Stream.Purge(ctx, opts...); err != nil {
		return 0, err
	}
	n := info.AckFloor.Consumer - min(info.AckFloor.Consumer, p.acked)
	p.to, p.acked = floor, info.AckFloor.Consumer
	return n, nil
}

// Run calls Step every interval until ctx ends, reporting each purge's
// count to purged and each failure to failed (not called once ctx ended).
func (p *Purger) Run(ctx context.Context, interval time.Duration, purged func(n uint64), failed func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := p.Step(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			failed(err)
		case err == nil:
			purged(n)
		}
	}
}
