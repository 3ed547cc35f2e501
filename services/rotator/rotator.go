// Package rotator archives LEDGER and ATTEST to blob storage, trims the hot
// ledger behind verified archive copies, deletes archive segments past
// their retention, and rotates the signing keys on a schedule.
//
// One pass (Pass) does, in order: scheduled key rotation; for each stream,
// archive the messages past the last checkpointed segment (upload segment
// and manifest, read both back and compare with the stream, sign and
// upload the checkpoint, read it back); trim LEDGER (anchor, then purge by
// chain below a sequence, never a chain's last message, never an active
// chain, only archived entries older than the hot window); delete segments
// older than the archive retention (ledger record first, then tombstone,
// then the objects). Each step is safe to repeat after a crash at any point.
// Time comes from the injected clock; entry ages from the entries'
// ingested_at, so tests drive many simulated days in seconds.
package rotator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/claimcheck/claimcheck/pkg/archive"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/telemetry"
	"github.com/claimcheck/claimcheck/pkg/transparency"
)

// Config tunes the rotator. Durations use Go syntax (30s, 720h).
type Config struct {
	// ArchiveURL is the blob bucket (file:///dir, s3://, gs://, azblob://).
	// Empty: <data dir>/archive, set by `claimcheck up`; required otherwise.
	ArchiveURL string `mapstructure:"archive_url"`
	// Interval between passes.
	Interval time.Duration `mapstructure:"interval"`
	// HotWindow: archived entries younger than this stay in LEDGER.
	HotWindow time.Duration `mapstructure:"hot_window"`
	// ProtectWindow: a chain with an entry younger than this is not trimmed.
	ProtectWindow time.Duration `mapstructure:"protect_window"`
	// ArchiveRetention: segments whose newest message is older are deleted.
	ArchiveRetention time.Duration `mapstructure:"archive_retention"`
	// KeyRotationPeriod: a new signing key when the newest is this old (0: never).
	KeyRotationPeriod time.Duration `mapstructure:"key_rotation_period"`
	// KeyOverlap: the old key keeps signing beside the new one this long.
	KeyOverlap time.Duration `mapstructure:"key_overlap"`
	// KeyAlgorithm of scheduled new keys.
	KeyAlgorithm string `mapstructure:"key_algorithm"`
	// KeyDir holds the private signing keys.
	KeyDir string `mapstructure:"key_dir"`
	// SegmentMessages and SegmentBytes bound one segment.
	SegmentMessages int `mapstructure:"segment_messages"`
	SegmentBytes    int `mapstructure:"segment_bytes"`
	// CheckpointEvery and CheckpointInterval: a checkpoint of the ledger's
	// Merkle tree every that many entries, or that long after an entry when
	// fewer came (docs/transparency.md).
	CheckpointEvery    int           `mapstructure:"checkpoint_every"`
	CheckpointInterval time.Duration `mapstructure:"checkpoint_interval"`
	// Witnesses cosign every checkpoint (c2sp.org/tlog-witness).
	Witnesses []Witness `mapstructure:"witnesses"`

	// Streams is the process-wide stream layout (set by the composer).
	Streams stream.Options `mapstructure:"-"`
}

// Witness is a witness the log asks to cosign its checkpoints: its
// submission URL and its cosignature/v1 verifier key.
type Witness struct {
	URL string `mapstructure:"url"`
	Key string `mapstructure:"key"`
}

// DefaultConfig returns the defaults: hourly passes, 30 days hot, 1 hour
// protection, 365 days of archive, a new key every 90 days with 24 hours
// of overlap.
func DefaultConfig() Config {
	return Config{
		Interval: time.Hour, HotWindow: 30 * 24 * time.Hour, ProtectWindow: time.Hour,
		ArchiveRetention: 365 * 24 * time.Hour, KeyRotationPeriod: 90 * 24 * time.Hour, KeyOverlap: 24 * time.Hour,
		KeyAlgorithm: keyring.ECDSA, SegmentMessages: 10000, SegmentBytes: 64 << 20,
		CheckpointEvery: 1000, CheckpointInterval: 10 * time.Second,
		Streams: stream.DefaultOptions(),
	}
}

// Validate reports every problem.
func (c Config) Validate() error {
	var errs []error
	if c.ArchiveURL == "" {
		errs = append(errs, errors.New("rotator.archive_url: required (file:///dir, s3://bucket, gs://bucket or azblob://container)"))
	}
	if c.KeyDir == "" {
		errs = append(errs, errors.New("rotator.key_dir: required (where the private signing keys are)"))
	}
	pos := func(name string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("rotator.%s %s: must be positive", name, d))
		}
	}
	pos("interval", c.Interval)
	pos("hot_window", c.HotWindow)
	pos("protect_window", c.ProtectWindow)
	pos("archive_retention", c.ArchiveRetention)
	pos("checkpoint_interval", c.CheckpointInterval)
	if c.CheckpointEvery < 1 {
		errs = append(errs, fmt.Errorf("rotator.checkpoint_every %d: must be at least 1", c.CheckpointEvery))
	}
	for i, w := range c.Witnesses {
		if _, err := transparency.NewWitnessClient(w.URL, w.Key); err != nil {
			errs = append(errs, fmt.Errorf("rotator.witnesses[%d]: key %q: a cosignature/v1 verifier key (claimcheck witness key): %w",
				i, w.Key, err))
		}
		if !strings.HasPrefix(w.URL, "http://") && !strings.HasPrefix(w.URL, "https://") {
			errs = append(errs, fmt.Errorf("rotator.witnesses[%d]: url %q: an http:// or https:// URL", i, w.URL))
		}
	}
	if c.KeyRotationPeriod < 0 {
		errs = append(errs,
			fmt.Errorf("rotator.key_rotation_period %s: must not be negative (0 turns scheduled rotation off)", c.KeyRotationPeriod))
	}
	if c.KeyOverlap < 0 || (c.KeyRotationPeriod > 0 && c.KeyOverlap >= c.KeyRotationPeriod) {
		errs = append(errs, fmt.Errorf("rotator.key_overlap %s: must be 0 or more and shorter than key_rotation_period", c.KeyOverlap))
	}
	if c.ArchiveRetention < c.HotWindow {
		errs = append(errs, fmt.Errorf(
			"rotator.archive_retention %s: shorter than hot_window %s (entries would leave the archive while still hot)", c.ArchiveRetention, c.HotWindow))
	}
	if c.KeyAlgorithm != keyring.ECDSA && c.KeyAlgorithm != keyring.Ed25519 {
		errs = append(errs, fmt.Errorf("rotator.key_algorithm %q: %s or %s", c.KeyAlgorithm, keyring.ECDSA, keyring.Ed25519))
	}
	if c.SegmentMessages < 1 {
		errs = append(errs, fmt.Errorf("rotator.segment_messages %d: must be at least 1", c.SegmentMessages))
	}
	if c.SegmentBytes < 1<<10 || c.SegmentBytes > archive.MaxSegmentBytes/2 {
		errs = append(errs, fmt.Errorf("rotator.segment_bytes %d: must be 1 KiB..%d", c.SegmentBytes, archive.MaxSegmentBytes/2))
	}
	errs = append(errs, c.Streams.Validate())
	return errors.Join(errs...)
}

// Service is a running rotator.
type Service struct {
	cfg   Config
	set   service.Settings
	ready service.Readiness
	m     *metrics

	js      jetstream.JetStream
	store   *archive.Store
	reg     *keyring.Registry
	anchors *ledger.Anchors
	rec     *recorder
	tlog    *transparency.Log
	// keysMu serialises registry changes (scheduled and requested).
	keysMu sync.Mutex

	// crashAt names a step at which the process kills itself with SIGKILL
	// (CLAIMCHECK_ROTATOR_CRASH_AT, for the crash tests only).
	crashAt string
}

// New checks the configuration and settings.
func New(cfg Config, set service.Settings) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	set, err := set.Check("rotator")
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, set: set, m: newMetrics(set.Metrics), crashAt: os.Getenv("CLAIMCHECK_ROTATOR_CRASH_AT")}
	s.ready.NotReady("starting")
	return s, nil
}

// Ready returns nil once the service runs.
func (s *Service) Ready() error { return s.ready.Err() }

// ErrNotOpen is returned by Pass before a successful Open: the rotator has
// no streams, archive or key registry to work with. Open (or Run) first.
var ErrNotOpen = errors.New("rotator: not open (no streams, archive or key registry yet)")

// Open connects the service's parts (streams, archive, key registry)
// without running passes: Run calls it; tests call it and then Pass. It
// either opens every part or returns an error naming the one that failed
// (a context that ended while it waited for JetStream included): it never
// leaves the service half-open.
func (s *Service) Open(ctx context.Context) error {
	js, err := jetstream.New(s.set.Conn)
	if err != nil {
		return fmt.Errorf("rotator: %w", err)
	}
	if err := s.set.Streams(ctx, js, s.cfg.Streams); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("rotator: stopped while waiting for JetStream to be ready: %w", err)
		}
		return fmt.Errorf("rotator: %w", err)
	}
	st, err := archive.Open(ctx, s.cfg.ArchiveURL)
	if err != nil {
		return fmt.Errorf("rotator: %w", err)
	}
	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		_ = st.Close()
		return fmt.Errorf("rotator: %w", err)
	}
	// The registry's writer creates its first key (a deployment without
	// `claimcheck up`); a no-op when there is one.
	if k, created, err := keyring.EnsureFirst(ctx, reg, keyring.Dir{Path: s.cfg.KeyDir}, s.cfg.KeyAlgorithm,
		s.set.Clock.Now()); err != nil {
		_ = st.Close()
		return fmt.Errorf("rotator: first signing key: %w", err)
	} else if created {
		s.set.Logger.InfoContext(ctx, "rotator: created the first signing key", slog.String("keyid", k.KeyID),
			slog.String("algorithm", k.Algorithm), slog.Any("dir", s.cfg.KeyDir))
	}
	tl, err := s.openLog(ctx, js)
	if err != nil {
		_ = st.Close()
		return err
	}
	s.js, s.store, s.reg, s.anchors = js, st, reg, ledger.NewAnchors(js)
	s.rec, s.tlog = newRecorder(js), tl
	return nil
}

// Close releases what Open opened.
func (s *Service) Close() error {
	if s.store != nil {
		return s.store.Close()
	}
	return nil
}

// Run opens, then runs a pass at once and every Interval until ctx ends.
// A failed pass is logged and counted; the next one retries.
func (s *Service) Run(ctx context.Context) error {
	if err := s.Open(ctx); err != nil {
		if ctx.Err() != nil {
			// Asked to stop before it could start: not a failure of its own.
			s.set.Logger.InfoContext(ctx, "rotator stopped before it was open", slog.Any("err", err))
			return nil
		}
		return err
	}
	defer s.Close() //nolint:errcheck // nothing to do about it at shutdown
	sub, err := s.serveKeys(ctx)
	if err != nil {
		return fmt.Errorf("rotator: %w", err)
	}
	defer sub.Unsubscribe() //nolint:errcheck // the connection may be gone at shutdown
	logCtx, stopLog := context.WithCancel(ctx)
	logDone := make(chan struct{})
	go func() { defer close(logDone); s.runLog(logCtx) }()
	defer func() { stopLog(); <-logDone }()
	s.ready.SetReady()
	s.set.Logger.InfoContext(ctx, "rotator running", slog.String("archive", s.cfg.ArchiveURL), slog.Duration("interval", s.cfg.Interval),
		slog.Duration("hot_window", s.cfg.HotWindow), slog.Duration("protect_window", s.cfg.ProtectWindow), slog.Duration(
			"archive_retention", s.cfg.ArchiveRetention), slog.Duration("key_rotation_period", s.cfg.KeyRotationPeriod))
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	warned := false
	for {
		if rep, err := s.Pass(ctx); err != nil {
			if ctx.Err() != nil {
				break
			}
			s.m.passErrors.Inc()
			s.set.Logger.ErrorContext(ctx, "rotator pass failed; the next pass retries", slog.Any("err", err))
		} else {
			if !rep.empty() {
				s.set.Logger.InfoContext(ctx, "rotator pass", rep.logAttrs()...)
			}
			if rep.TrimDisabled != "" && !warned {
				s.set.Logger.WarnContext(ctx, "rotator: hot retention is off", slog.Any("why", rep.TrimDisabled))
				warned = true
			}
		}
		select {
		case <-ctx.Done():
		case <-t.C:
			continue
		}
		break
	}
	s.ready.NotReady("stopped")
	s.set.Logger.InfoContext(ctx, "rotator stopped")
	return nil
}

// PassReport says what one pass did.
type PassReport struct {
	Rotated       string   // the new key id, when one was made
	Segments      []string // segments archived, as stream/name
	Messages      int
	TrimmedChains int
	TrimmedMsgs   uint64
	Deleted       []string // segments deleted by retention
	TrimDisabled  string   // why LEDGER is not trimmed, when it is not
}

func (r PassReport) empty() bool {
	return r.Rotated == "" && len(r.Segments) == 0 && r.TrimmedChains == 0 && len(r.Deleted) == 0
}

func (r PassReport) logAttrs() []any {
	return []any{
		slog.Any("rotated", r.Rotated), slog.Int("segments", len(r.Segments)), slog.Any("messages", r.Messages),
		slog.Any("trimmed_chains", r.TrimmedChains), slog.Any("trimmed_messages", r.TrimmedMsgs), slog.Int(
			"deleted_segments", len(r.Deleted)),
	}
}

// Pass runs one rotation pass at the clock's time.
func (s *Service) Pass(ctx context.Context) (PassReport, error) {
	var rep PassReport
	if s.reg == nil || s.store == nil || s.js == nil {
		return rep, ErrNotOpen
	}
	now := s.set.Clock.Now()
	start := time.Now()
	defer func() { s.m.passSeconds.Observe(time.Since(start).Seconds()) }()
	s.keysMu.Lock()
	k, err := s.rotateKeys(ctx, now)
	s.keysMu.Unlock()
	if err != nil {
		return rep, err
	}
	rep.Rotated = k
	for _, name := range []string{stream.Ledger, stream.Attest} {
		if err := s.archiveStream(ctx, name, now, &rep); err != nil {
			return rep, err
		}
	}
	if err := s.trim(ctx, now, &rep); err != nil {
		return rep, err
	}
	for _, name := range []string{stream.Ledger, stream.Attest} {
		if err := s.expire(ctx, name, now, &rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// crash kills the process at a named step when the crash tests ask for it:
// a real SIGKILL, so nothing after this point runs (no deferred cleanup).
func (s *Service) crash(step string) {
	if s.crashAt == step {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

type metrics struct {
	passErrors  prometheus.Counter
	passSeconds prometheus.Histogram
	archived    *prometheus.CounterVec
	trimmed     prometheus.Counter
	deleted     prometheus.Counter
	checkpoints prometheus.Counter
	logged      prometheus.Gauge
	logErrors   prometheus.Counter
	// witnessErrors: checkpoints a witness did not cosign.
	witnessErrors prometheus.Counter
	// tlogRollbacks: passes stopped because the log does not extend the
	// checkpoint kept in the archive.
	tlogRollbacks prometheus.Counter
	// anchorRepairs: chain anchors put back from the archive;
	// anchorUnrepaired: missing ones the archive did not vouch for.
	anchorRepairs, anchorUnrepaired prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	f := telemetry.NewMetrics(reg, "rotator")
	return &metrics{
		passErrors:  f.Counter("pass_errors_total", "Rotator passes that failed."),
		passSeconds: f.Histogram("pass_seconds", "Duration of rotator passes.", prometheus.ExponentialBuckets(0.01, 4, 8)),
		archived:    f.CounterVec("archived_messages_total", "Messages archived and verified, by stream.", "stream"),
		trimmed:     f.Counter("trimmed_messages_total", "LEDGER messages removed from the hot stream after archiving."),
		deleted:     f.Counter("deleted_segments_total", "Archive segments deleted by retention."),
		checkpoints: f.Counter("checkpoints_total", "Checkpoints of the ledger's Merkle tree issued."),
		logged:      f.Gauge("logged_entries", "LEDGER entries the newest checkpoint covers."),
		logErrors:   f.Counter("log_errors_total", "Times the ledger's Merkle tree log stopped on an error."),
		witnessErrors: f.Counter("witness_errors_total",
			"Checkpoints a witness did not cosign (down, or refused; see the log)."),
		tlogRollbacks: f.Counter("tlog_archive_mismatch_total",
			"Passes stopped before trimming: the log does not extend the checkpoint kept in the archive (a rolled-back store)."),
		anchorRepairs: f.Counter("anchor_repairs_total",
			"Chain anchors put back from the verified archive (lost by the NATS store after the trim that wrote them)."),
		anchorUnrepaired: f.Counter("anchor_unrepaired_total",
			"Chains whose first hot entry follows an entry their anchor does not name and the archive does not vouch for."),
	}
}
