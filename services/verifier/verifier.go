// Package verifier answers claim requests. Any number of verifier processes
// share one durable consumer on CLAIMS. For each request a verifier reads the
// session's ledger up to the claim (ingest chained the claim after everything
// the agent did before it), decides PASS, FAIL or REFUSED under the policy,
// appends the verdict to the session's chain, and for a PASS writes a signed
// DSSE/in-toto attestation to ATTEST; then it replies to the requester and
// acknowledges.
//
// Exactly once, even when a verifier dies mid-request: the verdict entry's
// event id is derived from the request id, so the ledger takes it once (a
// redelivered request finds the recorded verdict and replies with it); the
// attestation id too, and ATTEST accepts one message per attestation
// subject.
package verifier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/policy"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/pkg/telemetry"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
	"github.com/claimcheck/claimcheck/services/verifier/internal/validate"
)

// Config tunes the verifier. Keys live under "verifier." in files and
// CLAIMCHECK_VERIFIER_* in the environment.
type Config struct {
	// PolicyFile is a policy.v1 JSON file; empty uses the built-in policy.
	PolicyFile string `mapstructure:"policy_file"`
	// KeyDir holds the private signing keys (<keyid>.pem).
	KeyDir string `mapstructure:"key_dir"`
	// ID names this verifier in verdicts (default host-pid).
	ID string `mapstructure:"id"`
	// Workers decide requests concurrently; their verdicts and attestations
	// are committed together (group commit), so more workers also mean
	// fewer fsyncs per attestation under load.
	Workers int `mapstructure:"workers"`
	// AckWait: a request not acknowledged within it goes to another verifier.
	AckWait time.Duration `mapstructure:"ack_wait"`
	// MaxSessions bounds the sessions whose ledger is cached.
	MaxSessions int `mapstructure:"max_sessions"`
	// PurgeInterval: how often answered requests are removed from CLAIMS
	// (everything below the shared consumer's ack floor, see
	// stream.ClaimsConfig).
	PurgeInterval time.Duration `mapstructure:"purge_interval"`

	// Streams is the process-wide stream layout (set by the composer).
	Streams stream.Options `mapstructure:"-"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Workers: 128, AckWait: 30 * time.Second, MaxSessions: 1000, PurgeInterval: time.Second, Streams: stream.DefaultOptions()}
}

// Validate reports every problem.
func (c Config) Validate() error {
	var errs []error
	if c.KeyDir == "" {
		errs = append(errs, errors.New("verifier.key_dir: required (where the private signing keys are)"))
	}
	if c.Workers < 1 || c.Workers > 256 {
		errs = append(errs, fmt.Errorf("verifier.workers %d: must be 1..256", c.Workers))
	}
	if c.AckWait < time.Second {
		errs = append(errs, fmt.Errorf("verifier.ack_wait %s: must be at least 1s", c.AckWait))
	}
	if c.MaxSessions < 1 {
		errs = append(errs, fmt.Errorf("verifier.max_sessions %d: must be positive", c.MaxSessions))
	}
	if c.PurgeInterval < 10*time.Millisecond {
		errs = append(errs, fmt.Errorf("verifier.purge_interval %s: must be at least 10ms", c.PurgeInterval))
	}
	if err := c.Streams.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ConsumerName is the durable consumer every verifier shares.
const ConsumerName = "verifier"

// Bundle is recorded in every verdict entry.
const Bundle = "claimcheck-verifier/v1"

// Service is a running verifier.
type Service struct {
	cfg      Config
	set      service.Settings
	js       jetstream.JetStream
	policy   *policy.Policy
	appender *ledger.Appender
	sessions *sessionCache
	signer   *keyring.Signer // the key follower's
	attestS  jetstream.Stream
	m        *metrics
	ready    service.Readiness

	// Group commit of the workers' writes (see batcher).
	verdictQ        *batcher[verdictAppend, appendResult]
	attestQ         *batcher[*nats.Msg, attestResult]
	attestAtomicOff atomic.Bool
}

// New checks the configuration, loads the policy and prepares the service.
func New(cfg Config, set service.Settings) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	set, err := set.Check("verifier")
	if err != nil {
		return nil, err
	}
	cfg.ID = service.InstanceID(cfg.ID)
	v, err := validation.New()
	if err != nil {
		return nil, err
	}
	var p *policy.Policy
	if cfg.PolicyFile != "" {
		p, err = policy.LoadFile(cfg.PolicyFile, v)
	} else {
		p, err = policy.Default(v)
	}
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(set.Conn)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(set.Metrics)
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, set: set, js: js, policy: p, m: m}
	s.appender = ledger.NewAppender(js,
		ledger.AppenderConfig{MaxChains: cfg.MaxSessions, Logger: set.Logger, AtomicMin: stream.MinAtomicBatchFor(cfg.Streams.Replicas)})
	s.sessions = newSessionCache(ledger.NewReader(js, stream.Ledger), ledger.NewAnchors(js), cfg.MaxSessions)
	observe := func(h prometheus.Observer) func(int) { return func(n int) { h.Observe(float64(n)) } }
	s.verdictQ = newBatcher(cfg.Workers, s.commitVerdicts, observe(m.batch.WithLabelValues("verdicts")))
	s.attestQ = newBatcher(cfg.Workers, s.commitAttestations, observe(m.batch.WithLabelValues("attestations")))
	s.ready.NotReady("starting")
	return s, nil
}

// Ready returns nil once requests are being consumed.
func (s *Service) Ready() error { return s.ready.Err() }

// Policy returns the loaded policy.
func (s *Service) Policy() *policy.Policy { return s.policy }

// Run consumes claim requests until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	log := s.set.Logger
	if err := s.set.Streams(ctx, s.js, s.cfg.Streams); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before JetStream was there
		}
		return fmt.Errorf("verifier: %w", err)
	}
	if err := RegisterPolicy(ctx, s.js, s.policy); err != nil {
		return fmt.Errorf("verifier: %w", err)
	}
	attestS, err := s.js.Stream(ctx, stream.Attest)
	if err != nil {
		return fmt.Errorf("verifier: %w", err)
	}
	s.attestS = attestS
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	keys, err := s.followKeys(runCtx)
	if err != nil {
		return err
	}
	defer func() { cancel(); keys.Wait() }()
	claims, err := s.js.Stream(ctx, stream.Claims)
	if err != nil {
		return fmt.Errorf("verifier: %w", err)
	}
	cons, err := claims.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       ConsumerName,
		Description:   "claimcheck verifiers (shared)",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       s.cfg.AckWait,
		MaxDeliver:    -1,
		MaxAckPending: 64 * s.cfg.Workers,
	})
	if err != nil {
		return fmt.Errorf("verifier: consumer: %w", err)
	}
	work := make(chan jetstream.Msg)
	stopConsume, err := stream.Consume(runCtx, cons, func(m jetstream.Msg) {
		select {
		case work <- m:
		case <-runCtx.Done():
		}
	}, log, nil, s.m.resubscribe.Inc, jetstream.PullMaxMessages(2*s.cfg.Workers))
	if err != nil {
		return fmt.Errorf("verifier: consume: %w", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { s.purgeLoop(runCtx, claims, cons) })
	wg.Go(func() { s.verdictQ.run(runCtx) })
	wg.Go(func() { s.attestQ.run(runCtx) })
	for range s.cfg.Workers {
		wg.Go(func() {
			for {
				select {
				case <-runCtx.Done():
					return
				case m := <-work:
					s.handle(runCtx, m)
				}
			}
		})
	}
	s.ready.SetReady()
	log.InfoContext(ctx, "verifier running", slog.String("id", s.cfg.ID), slog.String("policy", s.policy.Version),
		slog.String("policy_digest", s.policy.Digest), slog.Any("keys", s.signer.KeyIDs()), slog.Any("workers", s.cfg.Workers))
	<-ctx.Done()
	s.ready.NotReady("stopped")
	stopConsume()
	cancel()
	wg.Wait()
	log.InfoContext(ctx, "verifier stopped")
	return nil
}

// followKeys loads the signing keys and keeps them current with the
// registry until ctx (Run's) ends.
func (s *Service) followKeys(ctx context.Context) (*keyring.Follower, error) {
	reg, err := keyring.OpenRegistry(ctx, s.js)
	if err != nil {
		return nil, fmt.Errorf("verifier: %w", err)
	}
	keys, err := keyring.Follow(ctx, keyring.FollowConfig{Registry: reg, Dir: keyring.Dir{Path: s.cfg.KeyDir},
		Clock: s.set.Clock, Logger: s.set.Logger})
	if errors.Is(err, keyring.ErrNoKeys) {
		return nil, fmt.Errorf("verifier: %w (register a key with `claimcheck keys rotate`)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("verifier: %w", err)
	}
	s.signer = keys.Signer()
	return keys, nil
}

// purgeLoop removes answered requests from CLAIMS. Every verifier runs it;
// purging below an ack floor twice is harmless.
func (s *Service) purgeLoop(ctx context.Context, claims jetstream.Stream, cons jetstream.Consumer) {
	p := stream.Purger{Stream: claims, Consumer: cons}
	p.Run(ctx, s.cfg.PurgeInterval, func(n uint64) { s.m.purged.Add(float64(n)) }, func(err error) {
		s.set.Logger.WarnContext(ctx, "verifier: purge answered requests", slog.Any("err", err))
	})
}

// RegisterPolicy records a policy in the policies bucket, write-once by
// digest and by version. A second, different policy under a version already
// registered is refused: a changed policy must carry a new version.
func RegisterPolicy(ctx context.Context, js jetstream.JetStream, p *policy.Policy) error {
	kv, err := js.KeyValue(ctx, stream.BucketPolicies)
	if err != nil {
		return fmt.Errorf("policies bucket: %w", err)
	}
	if _, err := kv.Create(ctx, "digest."+digest.Hex(p.Digest), p.Canonical); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("register policy: %w", err)
	}
	if _, err := kv.Create(ctx, "version."+p.Version, []byte(p.Digest)); err != nil {
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("register policy: %w", err)
		}
		e, err := kv.Get(ctx, "version."+p.Version)
		if err != nil {
			return fmt.Errorf("register policy: %w", err)
		}
		if string(e.Value()) != p.Digest {
			return fmt.Errorf(
				"policy %s (%s) has version %q, which is already registered with digest %s: a changed policy needs a new version", p.Source, p.Digest, p.Version, e.Value())
		}
	}
	return nil
}

// handle decides one request; errors that another try might fix leave the
// request unacknowledged (it comes back), others terminate it.
func (s *Service) handle(ctx context.Context, m jetstream.Msg) {
	start := time.Now()
	if meta, err := m.Metadata(); err == nil && meta.NumDelivered > 1 {
		s.m.redelivered.Inc()
	}
	err := s.process(ctx, m)
	switch {
	case err == nil:
		_ = m.Ack()
		s.m.latency.Observe(time.Since(start).Seconds())
	case errors.Is(err, errUnknownSession):
		s.set.Logger.WarnContext(ctx, "verifier: claim for an unknown session", slog.String("subject", m.Subject()), slog.Any("err", err))
		s.m.dropped.Inc()
		s.replyError(m.Data(), err)
		_ = m.Term()
	case errors.Is(err, errPermanent) || errors.Is(err, chain.ErrFault):
		s.set.Logger.ErrorContext(ctx, "verifier: claim request cannot be decided",
			slog.String("subject", m.Subject()), slog.Any("err", err))
		s.m.dropped.Inc()
		s.replyError(m.Data(), err)
		_ = m.Term()
	case ctx.Err() != nil:
		// Shutting down: the request comes back to a verifier.
	default:
		s.set.Logger.WarnContext(ctx, "verifier: claim request will be retried", slog.String("subject", m.Subject()), slog.Any("err", err))
		_ = m.NakWithDelay(time.Second)
	}
}

var (
	errPermanent      = errors.New("permanent")
	errUnknownSession = errors.New("unknown session")
)

// replyError tells a requester why its request will never get a verdict.
func (s *Service) replyError(work []byte, cause error) {
	var w schemas.ClaimWork
	if json.Unmarshal(work, &w, json.RejectUnknownMembers(false)) != nil || !subject.ValidReply(w.ReplyTo) {
		return
	}
	msg := cause.Error()
	if errors.Is(cause, chain.ErrFault) {
		msg = "the session's ledger chain is broken, so no verdict can be given: " + msg + " (run claimcheck ledger verify)"
	}
	if b, err := json.Marshal(schemas.ClaimError{Error: msg}); err == nil {
		_ = s.set.Conn.Publish(w.ReplyTo, b)
	}
}

func (s *Service) process(ctx context.Context, m jetstream.Msg) error {
	var w schemas.ClaimWork
	if err := json.Unmarshal(m.Data(), &w, json.RejectUnknownMembers(true)); err != nil {
		return fmt.Errorf("%w: malformed claim work item: %w", errPermanent, err)
	}
	if id.CheckSession(w.SessionID) != nil || !id.ValidULID(w.ClaimEventID) {
		return fmt.Errorf("%w: claim work item with session %s and claim %s", errPermanent, id.Quote(w.SessionID), id.Quote(w.ClaimEventID))
	}
	return s.sessions.with(ctx, w.SessionID, w.ClaimEventID, func(view *sessionView) error {
		claimAt := view.index[w.ClaimEventID]
		claim := view.claims[w.ClaimEventID]
		if claim == nil {
			return fmt.Errorf("%w: entry %s is not a claim", errPermanent, w.ClaimEventID)
		}
		if claimAt == 0 && view.entries[0].N == 1 {
			// Nothing of the session came before its claim: a session id
			// the hook never recorded (the requester, with a hook's
			// credentials, may not read the ledger to find out itself).
			return fmt.Errorf(
				"%w %s: nothing of it is in the ledger before this claim (is claimcheck-hook installed? see `claimcheck hooks install` and `claimcheck ledger sessions`)", errUnknownSession, w.SessionID)
		}
		verdict, entryPos := s.recordedVerdict(claim.RequestID, view)
		fresh := false // this delivery chained the verdict
		if verdict != nil {
			s.m.reused.Inc()
		} else {
			v := s.decide(w.SessionID, claim, view, claimAt)
			vEntry := &schemas.Entry{
				V: 1, Kind: schemas.EntryVerdict, Chain: w.SessionID, SessionID: w.SessionID,
				EventID:    verdictEventID(claim.RequestID),
				IngestedAt: s.set.Clock.Now().UTC().Format(time.RFC3339Nano),
				Bundle:     Bundle, Verdict: &v,
			}
			// The view has just read and verified the chain: the appender
			// need not read it again.
			n, h := view.head()
			s.appender.Prime(w.SessionID, n, h, view.lastSeq, view.eventIDs)
			r, err := s.verdictQ.do(ctx, verdictAppend{chain: w.SessionID, entry: vEntry})
			if err == nil {
				err = r.err
			}
			res := r.res
			s.m.conflicts.Add(float64(res.Conflicts))
			if err != nil {
				return fmt.Errorf("record verdict: %w", err)
			}
			if len(res.Entries) == 1 {
				verdict, entryPos, fresh = &v, &schemas.Position{N: vEntry.N, Hash: vEntry.Hash, EventID: vEntry.EventID}, true
				s.m.verdicts.WithLabelValues(v.Verdict).Inc()
			} else {
				// Another verifier recorded it first: answer with that one.
				if err := view.refresh(ctx, s.sessions.r, s.sessions.anchors); err != nil {
					return err
				}
				if verdict, entryPos = s.recordedVerdict(claim.RequestID, view); verdict == nil {
					return fmt.Errorf("verdict for %s recorded elsewhere but not readable yet", claim.RequestID)
				}
				s.m.reused.Inc()
			}
		}
		if verdict.Verdict == schemas.Pass {
			if err := s.attest(ctx, verdict, entryPos, fresh); err != nil {
				return err
			}
		}
		reply, err := json.Marshal(verdict)
		if err != nil {
			return err
		}
		if err := s.set.Conn.Publish(claim.ReplyTo, reply); err != nil {
			return fmt.Errorf("reply: %w", err)
		}
		return nil
	})
}

// verdictEventID is the event id of the verdict for a request: the same on
// every verifier and every redelivery.
func verdictEventID(requestID string) string {
	t := time.Now()
	if u, err := ulid.ParseStrict(requestID); err == nil {
		t = ulid.Time(u.Time())
	}
	return id.Derived(t, []byte("verdict\x00"+requestID))
}

// recordedVerdict finds the verdict already chained for a request.
func (s *Service) recordedVerdict(requestID string, view *sessionView) (*schemas.Verdict, *schemas.Position) {
	eid := verdictEventID(requestID)
	i, ok := view.index[eid]
	if !ok || view.verdicts[eid] == nil {
		return nil, nil
	}
	e := view.entries[i]
	return view.verdicts[eid], &schemas.Position{N: e.N, Hash: e.Hash, EventID: eid}
}

// decide evaluates the claim at position claimAt of the view.
func (s *Service) decide(session string, claim *schemas.Claim, view *sessionView, claimAt int) schemas.Verdict {
	r := validate.Evaluate(validate.Input{Entries: view.entries[:claimAt], Claim: *claim, Policy: s.policy})
	head := digest.Zero
	if claimAt > 0 {
		head = view.entries[claimAt-1].Hash
	}
	v := schemas.Verdict{
		V: 1, RequestID: claim.RequestID, SessionID: session, Claim: claim.Claim, Validator: claim.Validator,
		Args: claim.Args, Verdict: r.Verdict, Reasons: r.Reasons, NextStep: r.NextStep, Matched: r.Matched,
		Range:    schemas.Range{From: 1, To: uint64(claimAt), HeadHash: head},
		Contract: r.Contract, Policy: schemas.PolicyRef{Version: s.policy.Version, Digest: s.policy.Digest},
		Verifier: s.cfg.ID,
	}
	// Notes (the session's edits of tests and of what runs them, …) are
	// part of every verdict, a PASS's only reasons.
	for _, n := range r.Notes {
		v.Reasons = append(v.Reasons, "note: "+n)
	}
	if v.Reasons == nil {
		v.Reasons = []string{}
	}
	if len(v.Args) == 0 {
		v.Args = []byte("{}")
	}
	if v.Verdict == schemas.Pass {
		v.AttestationID, _ = attest.ID(claim.RequestID)
	}
	return v
}

// attest writes the attestation of a PASS verdict once: its subject in
// ATTEST accepts a first message only. fresh says the verdict was chained
// by this delivery, so no attestation of it can exist yet (one is written
// only after its verdict is chained) and the look-up is skipped; the
// expected-last-sequence check keeps it exactly once either way.
func (s *Service) attest(ctx context.Context, v *schemas.Verdict, entry *schemas.Position, fresh bool) error {
	subj := subject.Attestation(v.SessionID, v.AttestationID)
	if !fresh {
		if _, err := s.attestS.GetLastMsgForSubject(ctx, subj); err == nil {
			return nil // written by an earlier delivery
		} else if !errors.Is(err, jetstream.ErrMsgNotFound) {
			return err
		}
	}
	env, _, err := attest.Sign(ctx, s.signer, attest.Statement(*v, entry, s.set.Clock.Now()))
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	msg := nats.NewMsg(subj)
	msg.Data = env
	msg.Header.Set(jetstream.MsgIDHeader, v.AttestationID)
	msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	r, err := s.attestQ.do(ctx, msg)
	if err == nil {
		err = r.err
	}
	if err != nil {
		return err
	}
	if r.written {
		s.m.attestations.Inc()
	}
	return nil
}

type metrics struct {
	verdicts     *prometheus.CounterVec
	attestations prometheus.Counter
	dropped      prometheus.Counter
	redelivered  prometheus.Counter
	reused       prometheus.Counter
	purged       prometheus.Counter
	resubscribe  prometheus.Counter
	conflicts    prometheus.Counter
	appends      *prometheus.CounterVec
	batch        *prometheus.HistogramVec
	latency      prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	f := telemetry.NewMetrics(reg, "verifier")
	m := &metrics{
		verdicts:     f.CounterVec("verdicts_total", "Verdicts recorded, by outcome.", "verdict"),
		attestations: f.Counter("attestations_total", "Attestations written to ATTEST."),
		dropped:      f.Counter("dropped_total", "Malformed claim work items terminated."),
		redelivered:  f.Counter("redelivered_total", "Claim requests delivered again (a verifier died or was too slow)."),
		reused: f.Counter("verdicts_reused_total",
			"Requests answered with a verdict already in the ledger (a redelivery after it was recorded)."),
		purged: f.Counter("claims_purged_total", "Answered requests removed from CLAIMS."),
		resubscribe: f.Counter("consume_resubscribed_total",
			"Claim consumer subscriptions made again after the server ended one (a cluster recovering its quorum)."),
		conflicts: f.Counter("append_conflicts_total",
			"Verdict appends whose compare-and-set failed because another writer had moved the session's head (retried after reading it)."),
		appends: f.CounterVec("verdict_appends_total",
			"Verdicts chained, by path: atomic (in a batch with other sessions' verdicts) or single.", "path"),
		batch: f.HistogramVec("commit_batch_size",
			"Writes gathered into one commit (group commit of the workers' verdicts and attestations).", prometheus.ExponentialBuckets(1, 2, 9), "kind"),
		latency: f.Histogram("request_seconds", "Time to decide, record and answer one request.",
			prometheus.ExponentialBuckets(0.0005, 3, 10)),
	}
	return m, f.Err()
}
