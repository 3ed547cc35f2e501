package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/ingest/internal/record"
)

// partition consumes one intake partition, one batch at a time.
type partition struct {
	s         *Service
	n         int
	cons      jetstream.Consumer
	obj       jetstream.ObjectStore
	intake    jetstream.Stream
	contracts jetstream.KeyValue
}

// purgeLoop removes this partition's acknowledged (hence chained) messages
// from INTAKE in bulk, up to the consumer's ack floor.
func (p *partition) purgeLoop(ctx context.Context) {
	pg := stream.Purger{Stream: p.intake, Consumer: p.cons, Subject: subject.IntakePartition(p.n)}
	pg.Run(ctx, p.s.cfg.PurgeInterval, func(n uint64) { p.s.m.purged.Add(float64(n)) }, func(err error) {
		p.s.set.Logger.WarnContext(ctx, "ingest: purge intake", slog.Any("partition", p.n), slog.Any("err", err))
	})
}

func (p *partition) run(ctx context.Context) error {
	log := p.s.set.Logger.With(slog.Any("partition", p.n))
	msgs := make(chan jetstream.Msg, p.s.cfg.BatchSize)
	done := make(chan struct{})
	stop, err := stream.Consume(ctx, p.cons, func(m jetstream.Msg) {
		select {
		case msgs <- m:
		case <-done:
		}
	}, log, func(err error) { log.DebugContext(ctx, "ingest consume", slog.Any("err", err)) }, p.s.m.resubscribe.Inc,
		jetstream.PullMaxMessages(p.s.cfg.BatchSize),
		jetstream.PullPriorityGroup(subject.IntakeGroup),
	)
	if err != nil {
		return fmt.Errorf("ingest partition %d: consume: %w", p.n, err)
	}
	defer func() {
		stop()
		close(done)
	}()
	batch := make([]jetstream.Msg, 0, p.s.cfg.BatchSize)
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-msgs:
			batch = append(batch[:0], m)
		}
	fill:
		for len(batch) < p.s.cfg.BatchSize {
			select {
			case m := <-msgs:
				batch = append(batch, m)
			default:
				break fill
			}
		}
		if err := p.process(ctx, batch); err != nil {
			if ctx.Err() != nil {
				return nil // shutting down; unacknowledged messages are redelivered
			}
			return err
		}
	}
}

// process chains a batch and acknowledges it. It returns only when every
// message is chained (or ctx ends): transient failures are retried here,
// never by redelivery, so that a session's events cannot be reordered.
func (p *partition) process(ctx context.Context, batch []jetstream.Msg) error {
	start := time.Now()
	recs := p.build(batch)
	stopKeepAlive := p.keepAlive(batch)
	defer stopKeepAlive()

	for i := range recs {
		if recs[i].Artifact != nil {
			if err := retry(ctx, p.s,
				func() error { return p.putArtifact(ctx, recs[i].Entry.Artifact.Object, recs[i].Artifact) }); err != nil {
				return err
			}
			p.s.m.artifacts.Inc()
		}
	}

	// Flatten (a prompt may bring its contract) and group by chain, keeping
	// each chain's order.
	var entries []*schemas.Entry
	for _, r := range recs {
		entries = append(entries, r.Entry)
		if r.Contract != nil {
			entries = append(entries, r.Contract)
		}
	}
	order := []string{}
	byChain := map[string][]int{}
	for i, e := range entries {
		c := e.Chain
		if _, ok := byChain[c]; !ok {
			order = append(order, c)
		}
		byChain[c] = append(byChain[c], i)
	}
	// First every session's block in atomic batches (one fsync for many
	// sessions); what a batch could not take goes chain by chain below.
	single := p.appendAtomic(ctx, entries, order, byChain)
	var rejected []int // entries whose own chain cannot take them
	var mu sync.Mutex
	sem := make(chan struct{}, 256)
	var wg sync.WaitGroup
	var firstErr error
	for _, c := range single {
		idx := byChain[c]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := retry(ctx, p.s, func() error { return p.appendChain(ctx, c, entries, idx) })
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, ledger.ErrChainUnreadable):
				p.s.set.Logger.ErrorContext(ctx, "ingest: session chain head unreadable; recording its events in the _rejected chain",
					slog.String("chain", c), slog.Any("err", err))
				for _, i := range idx {
					entries[i] = redirect(entries[i], err)
				}
				rejected = append(rejected, idx...)
			case err != nil && firstErr == nil:
				firstErr = err
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	rejected = append(byChain[schemas.RejectedChain], rejected...)
	if len(rejected) > 0 {
		if err := retry(ctx, p.s, func() error { return p.appendChain(ctx, schemas.RejectedChain, entries, rejected) }); err != nil {
			return fmt.Errorf("ingest: the _rejected chain cannot be appended to: %w", err)
		}
	}
	// Chained: now index contracts and hand claims to the verifiers, before
	// the intake messages are acknowledged (a redelivery repeats both; the
	// contract put is idempotent and the verifiers answer a claim once).
	for _, e := range entries {
		switch {
		case e.Kind == schemas.EntryContract && e.Contract != nil:
			if err := retry(ctx, p.s, func() error { return p.putContract(ctx, e) }); err != nil {
				return err
			}
		case e.Kind == schemas.EntryClaim && e.Claim != nil:
			if err := retry(ctx, p.s, func() error { return p.forwardClaim(ctx, e) }); err != nil {
				return err
			}
		}
	}
	for _, r := range recs {
		if r.ReplyTo != "" {
			p.refuseClaim(r.ReplyTo, r.Entry.Reason)
		}
	}
	for _, m := range batch {
		if err := m.Ack(); err != nil {
			p.s.set.Logger.WarnContext(ctx, "ingest: ack", slog.Any("err", err))
		}
	}
	p.s.m.batchSize.Observe(float64(len(batch)))

	p.s.m.batchTime.Observe(time.Since(start).Seconds())
	return nil
}

// build turns messages into records, in parallel, keeping their order.
func (p *partition) build(batch []jetstream.Msg) []record.Record {
	recs := make([]record.Record, len(batch))
	workers := min(p.s.cfg.Workers, len(batch))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(batch); i += workers {
				m := batch[i]
				in := record.Input{Subject: m.Subject(), Data: m.Data(), Now: p.s.set.Clock.Now()}
				if meta, err := m.Metadata(); err == nil {
					in.Seq, in.Time = meta.Sequence.Stream, meta.Timestamp
				}
				recs[i] = p.s.builder.Build(in)
			}
		})
	}
	wg.Wait()
	return recs
}

// appendAtomic chains the sessions of order (but _rejected) with atomic
// batches and returns the chains left to append one by one.
func (p *partition) appendAtomic(ctx context.Context, all []*schemas.Entry, order []string, byChain map[string][]int) []string {
	var groups []ledger.Group
	var left []string
	for _, c := range order {
		if c == schemas.RejectedChain {
			continue // appended last, together with anything redirected to it
		}
		idx := byChain[c]
		g := ledger.Group{Chain: c, Entries: make([]*schemas.Entry, len(idx))}
		for k, i := range idx {
			g.Entries[k] = all[i]
		}
		groups = append(groups, g)
	}
	res, err := p.s.appender.AppendBatch(ctx, groups)
	if err != nil {
		// Expected now and then (a verifier or gatekeeper appended to one
		// of the sessions); those chains go one by one.
		p.s.set.Logger.DebugContext(ctx, "ingest: atomic batch not committed; appending its sessions one by one", slog.Any("err", err))
	}
	for i, r := range res {
		if !r.Done {
			left = append(left, groups[i].Chain)
			continue
		}
		p.s.m.appends.WithLabelValues("atomic").Inc()
		p.count(r.Appended)
	}
	return left
}

func (p *partition) count(res ledger.Appended) {
	for _, e := range res.Entries {
		p.s.m.records.WithLabelValues(e.Kind).Inc()
		p.s.m.redactions.Add(float64(len(e.Redactions)))
	}
	p.s.m.duplicates.Add(float64(res.Duplicates))
}

// appendChain appends the entries at idx to chain c.
func (p *partition) appendChain(ctx context.Context, c string, all []*schemas.Entry, idx []int) error {
	entries := make([]*schemas.Entry, len(idx))
	for k, i := range idx {
		entries[k] = all[i]
	}
	res, err := p.s.appender.Append(ctx, c, entries)
	if c != schemas.RejectedChain && len(res.Entries) > 0 {
		p.s.m.appends.WithLabelValues("single").Inc()
	}
	p.count(res)
	return err
}

// redirect turns an entry whose session chain is unusable into a rejected
// entry that keeps its attribution.
func redirect(orig *schemas.Entry, cause error) *schemas.Entry {
	e := *orig
	e.Kind = schemas.EntryRejected
	e.Contract, e.Claim = nil, nil
	e.Chain = schemas.RejectedChain
	reason := fmt.Sprintf("session chain %s cannot be extended (%v)", e.SessionID, cause)
	if e.Reason != "" {
		reason += "; " + e.Reason
	}
	e.Reason = reason
	return &e
}

// putContract indexes a chained contract in the contracts bucket.
func (p *partition) putContract(ctx context.Context, e *schemas.Entry) error {
	b, err := json.Marshal(e.Contract)
	if err != nil {
		return err
	}
	_, err = p.contracts.Put(ctx, subject.ContractKey(e.Chain, e.Contract.PromptEventID), b)
	return err
}

// forwardClaim queues a chained claim for the verifiers.
func (p *partition) forwardClaim(ctx context.Context, e *schemas.Entry) error {
	b, err := json.Marshal(
		schemas.ClaimWork{V: 1, SessionID: e.Chain, ClaimEventID: e.EventID, RequestID: e.Claim.RequestID, ReplyTo: e.Claim.ReplyTo})
	if err != nil {
		return err
	}
	m := nats.NewMsg(subject.Claims(e.Chain))
	m.Data = b
	m.Header.Set(jetstream.MsgIDHeader, e.EventID)
	_, err = p.s.js.PublishMsg(ctx, m)
	if err == nil {
		p.s.m.claims.Inc()
	}
	return err
}

// refuseClaim tells the requester of a claim request ingest could not
// accept why, so `claimcheck claim` fails at once with the reason instead of
// waiting for a verdict that will never come. Best effort: the request is
// recorded as invalid either way.
func (p *partition) refuseClaim(replyTo, reason string) {
	b, err := json.Marshal(schemas.ClaimError{Error: "claim request rejected by ingest: " + reason})
	if err == nil {
		_ = p.s.set.Conn.Publish(replyTo, b)
	}
}

func (p *partition) putArtifact(ctx context.Context, name string, data []byte) error {
	if _, err := p.obj.GetInfo(ctx, name); err == nil {
		return nil // content-addressed: already stored
	} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return err
	}
	_, err := p.obj.Put(ctx, jetstream.ObjectMeta{Name: name, Description: "scrubbed hook payload"}, bytes.NewReader(data))
	return err
}

// keepAlive tells the server the batch is still being worked on while
// transient failures are retried, so it is not redelivered meanwhile.
func (p *partition) keepAlive(batch []jetstream.Msg) func() {
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(p.s.cfg.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				for _, m := range batch {
					_ = m.InProgress()
				}
			}
		}
	}()
	return func() { close(stop) }
}

// retry runs op until it succeeds, fails permanently, or ctx ends. Transient
// errors (timeouts, lost connection, JetStream unavailable) back off from
// 50ms to 5s.
func retry(ctx context.Context, s *Service, op func() error) error {
	backoff := 50 * time.Millisecond
	for {
		err := op()
		if err == nil || !transient(err) {
			return err
		}
		s.m.retries.Inc()
		s.set.Logger.WarnContext(ctx, "ingest: transient failure, retrying", slog.Any("err", err), slog.Duration("backoff", backoff))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func transient(err error) bool {
	if errors.Is(err, ledger.ErrChainUnreadable) || errors.Is(err, context.Canceled) {
		return false
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// 503 and 10077 (resources exceeded) and 500 (internal) may pass,
		// and so does an earlier attempt of the same message still in
		// process; other 4xx configuration errors will not.
		return apiErr.Code >= 500 || apiErr.Code == 0 || stream.InProcess(err)
	}
	return true // timeouts, no responders, connection problems
}
