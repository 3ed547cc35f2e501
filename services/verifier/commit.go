package verifier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
)

// batcher is group commit for the workers: one goroutine commits a batch at
// a time, and whatever the workers submit meanwhile forms the next batch.
// Under sync_interval always every JetStream write costs an fsync, and the
// disk's flush rate (not CPU) bounds a verifier that writes each verdict
// and each attestation on its own; a batch shares one fsync per stream.
// Alone, an item is committed at once (a batch of one).
type batcher[T, R any] struct {
	max    int
	commit func(context.Context, []T) []R // one result per item, in order
	in     chan batchCall[T, R]
	sizes  func(int) // observes each batch's size (may be nil)
}

type batchCall[T, R any] struct {
	item T
	out  chan R
}

func newBatcher[T, R any](max int, commit func(context.Context, []T) []R, sizes func(int)) *batcher[T, R] {
	return &batcher[T, R]{max: max, commit: commit, in: make(chan batchCall[T, R]), sizes: sizes}
}

// run commits batches until ctx ends.
func (b *batcher[T, R]) run(ctx context.Context) {
	var calls []batchCall[T, R]
	var items []T
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-b.in:
			calls = append(calls[:0], c)
		}
	gather:
		for len(calls) < b.max {
			select {
			case c := <-b.in:
				calls = append(calls, c)
			default:
				break gather
			}
		}
		items = items[:0]
		for _, c := range calls {
			items = append(items, c.item)
		}
		if b.sizes != nil {
			b.sizes(len(items))
		}
		for i, r := range b.commit(ctx, items) {
			calls[i].out <- r
		}
		clear(calls)
		clear(items)
	}
}

// do submits item and waits for its result. When ctx ends first the item
// may still be committed; callers make that safe (derived event ids,
// compare-and-set) and the request comes back.
func (b *batcher[T, R]) do(ctx context.Context, item T) (R, error) {
	var zero R
	c := batchCall[T, R]{item: item, out: make(chan R, 1)}
	select {
	case b.in <- c:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	select {
	case r := <-c.out:
		return r, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// verdictAppend is one verdict entry for its session's chain.
type verdictAppend struct {
	chain string
	entry *schemas.Entry
}

type appendResult struct {
	res ledger.Appended
	err error
}

// commitVerdicts chains verdicts of several sessions: as many as one atomic
// batch takes (each session's block under its own compare-and-set), the
// rest (a session's head moved, a second verdict for one session in this
// batch, fewer than stream.MinAtomicBatchFor the replicas) one session at a time,
// concurrently.
func (s *Service) commitVerdicts(ctx context.Context, items []verdictAppend) []appendResult {
	out := make([]appendResult, len(items))
	var groups []ledger.Group
	var at, rest []int
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		if seen[it.chain] {
			rest = append(rest, i)
			continue
		}
		seen[it.chain] = true
		groups = append(groups, ledger.Group{Chain: it.chain, Entries: []*schemas.Entry{it.entry}})
		at = append(at, i)
	}
	res, err := s.appender.AppendBatch(ctx, groups)
	if err != nil {
		s.set.Logger.DebugContext(ctx, "verifier: verdicts left to single appends", slog.Any("err", err))
	}
	for k, r := range res {
		if r.Done {
			out[at[k]] = appendResult{res: r.Appended}
			if len(r.Entries) > 0 {
				s.m.appends.WithLabelValues("atomic").Inc()
			}
		} else {
			rest = append(rest, at[k])
		}
	}
	var wg sync.WaitGroup
	for _, i := range rest {
		wg.Go(func() {
			r, err := s.appender.Append(ctx, items[i].chain, []*schemas.Entry{items[i].entry})
			out[i] = appendResult{res: r, err: err}
			if err == nil && len(r.Entries) > 0 {
				s.m.appends.WithLabelValues("single").Inc()
			}
		})
	}
	wg.Wait()
	return out
}

type attestResult struct {
	written bool // false: another verifier had written it
	err     error
}

// commitAttestations stores attestations in ATTEST: as many as one atomic
// batch takes, each with expected last subject sequence 0, so an
// attestation is still written once; what a batch did not store (another
// verifier wrote one of them first, fewer than stream.MinAtomicBatchFor, a
// stream without allow_atomic) one at a time, concurrently. An unknown outcome fails the items (their
// requests come back and look the attestation up first).
func (s *Service) commitAttestations(ctx context.Context, msgs []*nats.Msg) []attestResult {
	out := make([]attestResult, len(msgs))
	var single []int
	minBatch := stream.MinAtomicBatchFor(s.cfg.Streams.Replicas)
	if len(msgs) < minBatch || s.attestAtomicOff.Load() {
		for i := range msgs {
			single = append(single, i)
		}
	} else {
		stream.AtomicBatches(ctx, s.set.Conn, msgs, minBatch, stream.MaxAtomicBatch, 10*time.Second,
			func(idx []int, _ stream.AtomicAck) {
				for _, i := range idx {
					out[i].written = true
				}
			},
			func(idx []int, err error) {
				var apiErr *jetstream.APIError
				refused := errors.As(err, &apiErr)
				if refused && apiErr.ErrorCode == stream.ErrCodeAtomicDisabled && !s.attestAtomicOff.Swap(true) {
					s.set.Logger.WarnContext(ctx,
						"verifier: ATTEST does not allow atomic batches (allow_atomic); storing attestations one at a time", slog.Any("err", err))
				}
				if err != nil && !refused {
					for _, i := range idx {
						out[i].err = fmt.Errorf("store attestation: %w", err)
					}
					return
				}
				single = append(single, idx...)
			})
	}
	var wg sync.WaitGroup
	for _, i := range single {
		wg.Go(func() { out[i] = s.storeAttestation(ctx, msgs[i]) })
	}
	wg.Wait()
	return out
}

// storeAttestation publishes one attestation.
func (s *Service) storeAttestation(ctx context.Context, msg *nats.Msg) attestResult {
	ack, err := s.js.PublishMsg(ctx, msg)
	if err != nil {
		if stream.IsWrongLastSequence(err) {
			return attestResult{} // another verifier wrote it first
		}
		return attestResult{err: fmt.Errorf("store attestation: %w", err)}
	}
	return attestResult{written: !ack.Duplicate}
}
