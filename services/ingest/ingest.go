// Package ingest is the claimcheck service that turns raw hook events into
// the ledger: it consumes INTAKE, validates and scrubs each event, chains it
// onto its session, and acknowledges the intake message only after the
// ledger append is acknowledged.
//
// Ordering: INTAKE is partitioned by session; each partition has one durable
// consumer used through a pinned-client priority group, so at any time one
// ingest process owns a partition and handles its messages strictly in
// stream order, one batch at a time. Within a batch, sessions are appended
// concurrently, each session's events in order, packed into one message per
// session (group commit). Idempotency: an event id already in a chain is
// never chained again, so redelivery, restarts and late spool flushes are
// harmless.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/pkg/scrub"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/pkg/telemetry"
	"github.com/claimcheck/claimcheck/schemas/validation"
	"github.com/claimcheck/claimcheck/services/ingest/internal/record"
)

// Config tunes ingest. Keys live under "ingest." in files and CLAIMCHECK_INGEST_* in the environment.
type Config struct {
	// BatchSize is the most intake messages handled per batch (and the
	// consumer's prefetch).
	BatchSize int `mapstructure:"batch_size"`
	// InlineMaxBytes: a scrubbed payload larger than this is elided in the
	// entry and stored whole in the artifacts object store.
	InlineMaxBytes int `mapstructure:"inline_max_bytes"`
	// MaxBlockBytes bounds one ledger message (several entries of a session).
	MaxBlockBytes int `mapstructure:"max_block_bytes"`
	// MaxChains bounds the sessions whose head and event ids stay cached.
	MaxChains int `mapstructure:"max_chains"`
	// AtomicBatch bounds the sessions' blocks committed together in one
	// JetStream atomic batch (one fsync for all of them); 0 turns batching
	// off (one publish, one fsync, per session of a batch).
	AtomicBatch int `mapstructure:"atomic_batch"`
	// MaxDepth bounds payload nesting.
	MaxDepth int `mapstructure:"max_depth"`
	// AckWait is how long a delivered intake message may stay unacknowledged
	// before the server redelivers it.
	AckWait time.Duration `mapstructure:"ack_wait"`
	// PinnedTTL is how long a silent ingest keeps its partitions before
	// another takes over. It must exceed AckWait so that messages delivered
	// to a dead process are redelivered before newer ones.
	PinnedTTL time.Duration `mapstructure:"pinned_ttl"`
	// Takeover: on start, take the partitions at once (unpin and rewind the
	// consumers to their ack floor) instead of waiting PinnedTTL. Right for a
	// single ingest (claimcheck up); turn it off when several replicas run.
	Takeover bool `mapstructure:"takeover"`
	// Workers build records in parallel (0 = GOMAXPROCS).
	Workers int `mapstructure:"workers"`
	// PurgeInterval: how often each partition's chained events are removed
	// from INTAKE (up to its consumer's ack floor).
	PurgeInterval time.Duration `mapstructure:"purge_interval"`

	// Streams is the process-wide stream layout (set by the composer).
	Streams stream.Options `mapstructure:"-"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		BatchSize:      1000,
		InlineMaxBytes: 32 << 10,
		MaxBlockBytes:  512 << 10,
		MaxChains:      10000,
		AtomicBatch:    500,
		MaxDepth:       payload.DefaultMaxDepth,
		AckWait:        30 * time.Second,
		PinnedTTL:      45 * time.Second,
		Takeover:       true,
		PurgeInterval:  time.Second,
		Streams:        stream.DefaultOptions(),
	}
}

// Validate reports every problem.
func (c Config) Validate() error {
	var errs []error
	if c.BatchSize < 1 || c.BatchSize > 10000 {
		errs = append(errs, fmt.Errorf("ingest.batch_size %d: must be 1..10000", c.BatchSize))
	}
	if c.InlineMaxBytes < 1024 {
		errs = append(errs, fmt.Errorf("ingest.inline_max_bytes %d: must be at least 1024", c.InlineMaxBytes))
	}
	if c.MaxBlockBytes < c.InlineMaxBytes+16<<10 || c.MaxBlockBytes > int(c.Streams.MaxMsgSize)-4096 {
		errs = append(errs, fmt.Errorf(
			"ingest.max_block_bytes %d: must be at least inline_max_bytes+16KiB and leave 4 KiB below streams.max_msg_size (%d)", c.MaxBlockBytes, c.Streams.MaxMsgSize))
	}
	if c.MaxChains < 1 {
		errs = append(errs, fmt.Errorf("ingest.max_chains %d: must be positive", c.MaxChains))
	}
	if c.AtomicBatch != 0 && (c.AtomicBatch < 2 || c.AtomicBatch > ledger.MaxAtomicBatch) {
		errs = append(errs, fmt.Errorf("ingest.atomic_batch %d: must be 0 (off) or 2..%d", c.AtomicBatch, ledger.MaxAtomicBatch))
	}
	if c.MaxDepth < 2 || c.MaxDepth > 10000 {
		errs = append(errs, fmt.Errorf("ingest.max_depth %d: must be 2..10000", c.MaxDepth))
	}
	if c.AckWait < time.Second {
		errs = append(errs, fmt.Errorf("ingest.ack_wait %s: must be at least 1s", c.AckWait))
	}
	if c.PinnedTTL <= c.AckWait {
		errs = append(errs, fmt.Errorf(
			"ingest.pinned_ttl %s: must exceed ingest.ack_wait %s (so a dead ingest's messages are redelivered in order)", c.PinnedTTL, c.AckWait))
	}
	if c.PurgeInterval < 10*time.Millisecond {
		errs = append(errs, fmt.Errorf("ingest.purge_interval %s: must be at least 10ms", c.PurgeInterval))
	}
	if c.Workers < 0 {
		errs = append(errs, fmt.Errorf("ingest.workers %d: must not be negative", c.Workers))
	}
	if err := c.Streams.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Bundle identifies the record format and scrub rules; it is stored in every entry.
const Bundle = "claimcheck-ingest/v1+" + scrub.RuleSet

// Service is a running ingest.
type Service struct {
	cfg      Config
	set      service.Settings
	js       jetstream.JetStream
	builder  *record.Builder
	appender *ledger.Appender
	m        *metrics
	ready    service.Readiness
}

// New checks cfg and prepares the service (loading schemas and scrub rules).
func New(cfg Config, set service.Settings) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	set, err := set.Check("ingest")
	if err != nil {
		return nil, err
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	js, err := jetstream.New(set.Conn)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	sc, err := scrub.New()
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	v, err := validation.New()
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	m, err := newMetrics(set.Metrics)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	s := &Service{
		cfg: cfg,
		set: set,
		js:  js,
		builder: &record.Builder{
			Scrub: sc, Schemas: v, InlineMax: cfg.InlineMaxBytes, MaxDepth: cfg.MaxDepth, Bundle: Bundle,
		},
		m: m,
	}
	atomicBatch := cfg.AtomicBatch
	if atomicBatch == 0 {
		atomicBatch = -1 // off
	}
	s.appender = ledger.NewAppender(js, ledger.AppenderConfig{
		AtomicBatch:   atomicBatch,
		AtomicMin:     stream.MinAtomicBatchFor(cfg.Streams.Replicas),
		MaxBlockBytes: cfg.MaxBlockBytes,
		MaxChains:     cfg.MaxChains,
		Logger:        set.Logger,
		OnFault:       func(*chain.Fault) { m.chainFaults.Inc() },
	})
	s.ready.NotReady("starting")
	return s, nil
}

// Ready returns nil once every partition is being consumed.
func (s *Service) Ready() error { return s.ready.Err() }

// ConsumerName is the durable consumer of intake partition p.
func ConsumerName(p int) string { return fmt.Sprintf("ingest-p%d", p) }

// Run consumes until ctx ends, then stops taking messages, finishes the
// batch in hand and returns.
func (s *Service) Run(ctx context.Context) error {
	log := s.set.Logger
	if err := s.set.Streams(ctx, s.js, s.cfg.Streams); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before JetStream was there
		}
		return fmt.Errorf("ingest: %w", err)
	}
	obj, err := s.js.ObjectStore(ctx, stream.ObjectArtifacts)
	if err != nil {
		return fmt.Errorf("ingest: artifacts store: %w", err)
	}
	intake, err := s.js.Stream(ctx, stream.Intake)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	contracts, err := s.js.KeyValue(ctx, stream.BucketContracts)
	if err != nil {
		return fmt.Errorf("ingest: contracts bucket: %w", err)
	}
	parts := make([]*partition, s.cfg.Streams.Partitions)
	for p := range parts {
		cons, err := intake.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:        ConsumerName(p),
			Description:    fmt.Sprintf("claimcheck ingest, intake partition %d", p),
			FilterSubject:  subject.IntakePartition(p),
			AckPolicy:      jetstream.AckExplicitPolicy,
			AckWait:        s.cfg.AckWait,
			MaxDeliver:     -1,
			MaxAckPending:  4 * s.cfg.BatchSize,
			PriorityPolicy: jetstream.PriorityPolicyPinned,
			PinnedTTL:      s.cfg.PinnedTTL,
			PriorityGroups: []string{subject.IntakeGroup},
		})
		if err != nil {
			return fmt.Errorf("ingest: consumer for partition %d: %w", p, err)
		}
		if s.cfg.Takeover {
			// Take over from a previous (dead) process at once: drop its pin
			// and rewind delivery to the first unacknowledged message, so
			// that everything it held comes back first, in order.
			if err := intake.UnpinConsumer(ctx, ConsumerName(p), subject.IntakeGroup); err != nil && !isNotPinned(err) {
				log.WarnContext(ctx, "ingest: unpin", slog.Any("partition", p), slog.Any("err", err))
			}
			if _, err := intake.ResetConsumer(ctx, ConsumerName(p)); err != nil {
				return fmt.Errorf("ingest: rewind partition %d: %w", p, err)
			}
		}
		parts[p] = &partition{s: s, n: p, cons: cons, obj: obj, intake: intake, contracts: contracts}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, len(parts))
	for _, p := range parts {
		wg.Go(func() {
			if err := p.run(runCtx); err != nil {
				errs <- err
				cancel()
			}
		})
		wg.Go(func() { p.purgeLoop(runCtx) })
	}
	s.ready.SetReady()
	log.InfoContext(ctx, "ingest running", slog.Int("partitions", len(parts)), slog.Any("batch_size", s.cfg.BatchSize),
		slog.Any("takeover", s.cfg.Takeover))
	wg.Wait()
	s.ready.NotReady("stopped")
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	// Let a successor take the partitions at once.
	uctx, ucancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer ucancel()
	for p := range parts {
		_ = intake.UnpinConsumer(uctx, ConsumerName(p), subject.IntakeGroup)
	}
	log.InfoContext(ctx, "ingest stopped")
	return nil
}

func isNotPinned(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code == 404
}

type metrics struct {
	records     *prometheus.CounterVec
	duplicates  prometheus.Counter
	redactions  prometheus.Counter
	artifacts   prometheus.Counter
	chainFaults prometheus.Counter
	retries     prometheus.Counter
	purged      prometheus.Counter
	claims      prometheus.Counter
	batchSize   prometheus.Histogram
	batchTime   prometheus.Histogram
	appends     *prometheus.CounterVec
	resubscribe prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	f := telemetry.NewMetrics(reg, "ingest")
	m := &metrics{
		records:     f.CounterVec("records_total", "Ledger records written, by outcome (event, invalid, rejected).", "outcome"),
		duplicates:  f.Counter("duplicates_total", "Intake messages whose event was already chained (redelivery, late spool flush)."),
		redactions:  f.Counter("redactions_total", "Secrets removed from payloads."),
		artifacts:   f.Counter("artifacts_total", "Payloads stored in the artifacts object store."),
		chainFaults: f.Counter("chain_faults_total", "Defects found in stored chains while loading them."),
		retries:     f.Counter("append_retries_total", "Ledger appends retried after a transient error."),
		purged:      f.Counter("intake_purged_total", "Chained events removed from INTAKE."),
		claims:      f.Counter("claims_forwarded_total", "Claim requests queued on CLAIMS for the verifiers."),
		resubscribe: f.Counter("consume_resubscribed_total",
			"Intake consumer subscriptions made again after the server ended one (a cluster recovering its quorum)."),
		batchSize: f.Histogram("batch_messages", "Intake messages per batch.", prometheus.ExponentialBuckets(1, 4, 7)),
		batchTime: f.Histogram("batch_seconds", "Time to chain and acknowledge one batch.", prometheus.ExponentialBuckets(0.0005, 4, 9)),
		appends: f.CounterVec("chain_appends_total",
			"Session chains appended to, by path: atomic (in a JetStream atomic batch with other sessions) or single (one publish of its own).", "path"),
	}
	return m, f.Err()
}
