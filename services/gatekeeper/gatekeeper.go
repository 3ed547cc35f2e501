// Package gatekeeper answers the agent's synchronous Stop and PreToolUse
// hooks. Any number of gatekeepers share the gate subjects through a NATS
// queue group. Each answers from its own view of LEDGER and ATTEST
// (internal/view: rebuilt by replay at start, then followed), signs every
// decision with a key from the registry over {session, event, nonce,
// decision, ledger head, expiry}, replies, and records the decision in the
// session's chain.
package gatekeeper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/inject"
	"github.com/claimcheck/claimcheck/pkg/intake"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/policy"
	"github.com/claimcheck/claimcheck/pkg/scrub"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/pkg/telemetry"
	"github.com/claimcheck/claimcheck/pkg/transparency"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/anomaly"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/level"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/pretool"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/view"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/watch"
)

// Config tunes the gatekeeper. Keys live under "gatekeeper." in files and
// CLAIMCHECK_GATEKEEPER_* in the environment.
type Config struct {
	// KeyDir holds the private signing keys (<keyid>.pem), as for the verifier.
	KeyDir string `mapstructure:"key_dir"`
	// ID names this gatekeeper in decisions (default host-pid).
	ID string `mapstructure:"id"`
	// PretoolPolicyFile is a pretool.v1 file; empty uses the built-in policy.
	PretoolPolicyFile string `mapstructure:"pretool_policy_file"`
	// PolicyFile is a policy.v1 claim policy whose scopes and change_verbs
	// the Stop gate applies (which attestations back which claims); empty
	// uses the built-in policy. Give it the verifier's policy_file.
	PolicyFile string `mapstructure:"policy_file"`
	// ProtectedPaths are added to the policy's protected paths (the data
	// dir, hook state, the ledger's store).
	ProtectedPaths []string `mapstructure:"protected_paths"`
	// ConfigPaths configure claimcheck or the agent's hooks: the agent may
	// read them but not write them (claimcheck's configuration file and
	// binary, $CODEX_HOME's hook files, …), beside the policy's
	// paths.configuration.
	ConfigPaths []string `mapstructure:"config_paths"`
	// HookBinaries are claimcheck-hook's executables: the agent may
	// neither run nor write them.
	HookBinaries []string `mapstructure:"hook_binaries"`
	// Home is the agent user's home directory, for ~ and $HOME in commands
	// (default: this process's home; set it when the gatekeeper runs as
	// another user or on another host).
	Home string `mapstructure:"home"`
	// DecisionTTL is how long a signed decision stays valid.
	DecisionTTL time.Duration `mapstructure:"decision_ttl"`
	// StopWait bounds how long a Stop waits for its own event to reach the
	// projection (so that everything the agent did before is in it).
	StopWait time.Duration `mapstructure:"stop_wait"`
	// StopBlockCap lets a stop through after this many consecutive blocks
	// (Claude Code ends the turn at its own cap, 8, anyway); 0 never.
	StopBlockCap int `mapstructure:"stop_block_cap"`
	// MaxInFlight bounds requests decided concurrently.
	MaxInFlight int `mapstructure:"max_in_flight"`
	// MaxTrail bounds the edits and runs kept per session for freshness.
	MaxTrail int `mapstructure:"max_trail"`
	// MaxEnvelopes bounds the attestation envelopes kept in memory (the
	// newest; ~2 KB each); an older one a Stop cites is read back from
	// ATTEST by sequence.
	MaxEnvelopes int `mapstructure:"max_attestation_envelopes"`
	// RequireCheckpoint: a Stop's cited attestation counts only once a
	// checkpoint of the ledger's Merkle tree covers its verdict (off by
	// default: every Stop right after a claim would wait up to
	// rotator.checkpoint_interval, and a witness down would hold every
	// Stop; see docs/transparency.md).
	RequireCheckpoint bool `mapstructure:"require_checkpoint"`
	// OverrideThreshold prompts asking to bypass the gate from one host
	// within OverrideWindow raise an alert (once per day).
	OverrideThreshold int           `mapstructure:"override_threshold"`
	OverrideWindow    time.Duration `mapstructure:"override_window"`
	// CrashThreshold failures of claimcheck-hook for one hook event on one
	// host within CrashWindow raise an alert (once per day).
	CrashThreshold int           `mapstructure:"crash_threshold"`
	CrashWindow    time.Duration `mapstructure:"crash_window"`
	// UngatedAfter: a session whose events stopped this long ago, before
	// its turn or the session ended, while a later session of its host
	// started, is recorded as ungated (a signed finding; see findings.go).
	UngatedAfter time.Duration `mapstructure:"ungated_after"`

	// HTTPListen serves POST /v1/hooks/claude for Claude Code's http hook
	// type (empty: off). A non-loopback address needs HTTPToken.
	HTTPListen string `mapstructure:"http_listen"`
	// HTTPToken, when set, is required as "Authorization: Bearer <token>".
	HTTPToken string `mapstructure:"http_token"`

	// Firewall says what a flagged tool result does.
	Firewall FirewallConfig `mapstructure:"firewall"`
	// Levels holds the degradation levels' escalation thresholds.
	Levels level.Config `mapstructure:"levels"`

	// Streams is the process-wide stream layout (set by the composer).
	Streams stream.Options `mapstructure:"-"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	w := watch.DefaultConfig()
	return Config{DecisionTTL: 30 * time.Second, StopWait: 2 * time.Second, StopBlockCap: 8, MaxInFlight: 256,
		MaxTrail: 4096, MaxEnvelopes: 16384,
		OverrideThreshold: w.OverrideThreshold, OverrideWindow: w.OverrideWindow,
		CrashThreshold: w.CrashThreshold, CrashWindow: w.CrashWindow, UngatedAfter: w.UngatedAfter,
		Firewall: DefaultFirewallConfig(), Levels: level.DefaultConfig(),
		Streams: stream.DefaultOptions()}
}

// Validate reports every problem.
func (c Config) Validate() error {
	var errs []error
	if c.KeyDir == "" {
		errs = append(errs, errors.New("gatekeeper.key_dir: required (where the private signing keys are)"))
	}
	if c.DecisionTTL < time.Second || c.DecisionTTL > time.Hour {
		errs = append(errs, fmt.Errorf("gatekeeper.decision_ttl %s: must be 1s..1h", c.DecisionTTL))
	}
	if c.StopWait < 0 || c.StopWait > time.Minute {
		errs = append(errs, fmt.Errorf("gatekeeper.stop_wait %s: must be 0..1m", c.StopWait))
	}
	if c.StopBlockCap < 0 {
		errs = append(errs, fmt.Errorf("gatekeeper.stop_block_cap %d: must be ≥ 0", c.StopBlockCap))
	}
	if c.MaxInFlight < 1 {
		errs = append(errs, fmt.Errorf("gatekeeper.max_in_flight %d: must be positive", c.MaxInFlight))
	}
	if c.MaxTrail < 16 {
		errs = append(errs, fmt.Errorf("gatekeeper.max_trail %d: must be at least 16", c.MaxTrail))
	}
	if c.MaxEnvelopes < 1 {
		errs = append(errs, fmt.Errorf("gatekeeper.max_attestation_envelopes %d: must be at least 1", c.MaxEnvelopes))
	}
	if c.OverrideThreshold < 1 || c.CrashThreshold < 1 {
		errs = append(errs,
			fmt.Errorf("gatekeeper.override_threshold %d, gatekeeper.crash_threshold %d: must be positive",
				c.OverrideThreshold, c.CrashThreshold))
	}
	if c.OverrideWindow < time.Minute || c.CrashWindow < time.Minute {
		errs = append(errs,
			fmt.Errorf("gatekeeper.override_window %s, gatekeeper.crash_window %s: must be at least 1m", c.OverrideWindow, c.CrashWindow))
	}
	if c.UngatedAfter < time.Minute {
		errs = append(errs, fmt.Errorf("gatekeeper.ungated_after %s: must be at least 1m", c.UngatedAfter))
	}
	if c.HTTPListen != "" && c.HTTPToken == "" && !loopback(c.HTTPListen) {
		errs = append(errs, fmt.Errorf(
			"gatekeeper.http_listen %s: not a loopback address; set gatekeeper.http_token so that only your hooks can post", c.HTTPListen))
	}
	if err := c.Firewall.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Levels.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Streams.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// QueueGroup is the NATS queue group every gatekeeper joins.
const QueueGroup = "gatekeeper"

// Service is a running gatekeeper.
type Service struct {
	cfg     Config
	set     service.Settings
	js      jetstream.JetStream
	pretool *pretool.Policy
	claims  *policy.Policy // the claim policy: scopes of prose claims (Stop)
	runtime pretool.Runtime
	view    *view.View
	watch   *watch.Watch
	signer  *keyring.Signer
	// keySet returns the keys attestations are verified with: the
	// follower's current set, or Replay's.
	keySet   func() *keyring.Set
	policies *policyCache
	tlog     jetstream.KeyValue // the Merkle tree's bucket, with require_checkpoint
	levels   jetstream.KeyValue // the degradation levels
	// anomalies is the activity monitor (nil when gatekeeper.levels.anomaly.enabled is off).
	anomalies *anomaly.Monitor
	// secrets finds secrets in tool results with ingest's rules.
	secrets  *scrub.Scrubber
	gen      *id.Generator
	m        *metrics
	ready    service.Readiness
	inflight chan struct{}
	records  sync.WaitGroup
	reqCtx   context.Context // what requests are decided under (Run's, without its cancellation)
	httpAddr atomic.Value
}

// New checks the configuration, loads the pre-tool policy and prepares the
// service.
func New(cfg Config, set service.Settings) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	set, err := set.Check("gatekeeper")
	if err != nil {
		return nil, err
	}
	cfg.ID = service.InstanceID(cfg.ID)
	if cfg.Home == "" {
		cfg.Home, _ = os.UserHomeDir()
	}
	inject.Prepare() // not in the first request with a non-ASCII result
	p, err := loadPretool(cfg.PretoolPolicyFile)
	if err != nil {
		return nil, err
	}
	claims, err := loadClaimPolicy(cfg.PolicyFile)
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
	w := watch.New(watch.Config{OverrideThreshold: cfg.OverrideThreshold, OverrideWindow: cfg.OverrideWindow,
		CrashThreshold: cfg.CrashThreshold, CrashWindow: cfg.CrashWindow, UngatedAfter: cfg.UngatedAfter})
	sc, err := scrub.New()
	if err != nil {
		return nil, err
	}
	var mon *anomaly.Monitor
	if cfg.Levels.Anomaly.Enabled {
		mon = anomaly.New(cfg.Levels.Anomaly)
	}
	s := &Service{
		cfg: cfg, set: set, js: js, pretool: p, claims: claims,
		runtime: cfg.runtime(),
		view:    view.New(view.Config{MaxTrail: cfg.MaxTrail, MaxEnvelopes: cfg.MaxEnvelopes, Watch: w, Anomaly: mon}), watch: w, m: m,
		anomalies: mon, secrets: sc,
		gen: id.NewGenerator(set.Clock, id.FastEntropy{}), inflight: make(chan struct{}, cfg.MaxInFlight),
	}
	s.ready.NotReady("starting")
	return s, nil
}

// runtime is what the pre-tool gate knows only at run time.
func (c Config) runtime() pretool.Runtime {
	return pretool.Runtime{ProtectedPaths: c.ProtectedPaths, ConfigPaths: c.ConfigPaths, HookBinaries: c.HookBinaries, Home: c.Home}
}

// loadPretool loads a pretool.v1 file, or the built-in policy for "".
func loadPretool(file string) (*pretool.Policy, error) {
	return load(file, pretool.LoadFile, pretool.Default)
}

// loadClaimPolicy loads a policy.v1 file, or the built-in policy for "".
func loadClaimPolicy(file string) (*policy.Policy, error) {
	return load(file, policy.LoadFile, policy.Default)
}

// load loads a policy file, or the built-in policy for "".
func load[P any](file string, fromFile func(string, *validation.Validator) (P, error),
	builtIn func(*validation.Validator) (P, error)) (P, error) {
	v, err := validation.New()
	if err != nil {
		var zero P
		return zero, err
	}
	if file != "" {
		return fromFile(file, v)
	}
	return builtIn(v)
}

// Ready returns nil once the gate subjects are served.
func (s *Service) Ready() error { return s.ready.Err() }

// Run serves the gate until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	log := s.set.Logger
	if err := s.set.Streams(ctx, s.js, s.cfg.Streams); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before JetStream was there
		}
		return fmt.Errorf("gatekeeper: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	keys, err := s.followKeys(runCtx)
	if err != nil {
		return err
	}
	defer func() { cancel(); keys.Wait() }()
	pkv, err := s.js.KeyValue(ctx, stream.BucketPolicies)
	if err != nil {
		return fmt.Errorf("gatekeeper: %w", err)
	}
	s.policies = newPolicyCache(pkv)
	if s.levels, err = openLevels(ctx, s.js); err != nil {
		return fmt.Errorf("gatekeeper: %w", err)
	}
	if s.cfg.RequireCheckpoint {
		if s.tlog, err = transparency.OpenBucket(ctx, s.js); err != nil {
			return fmt.Errorf("gatekeeper: gatekeeper.require_checkpoint: %w", err)
		}
	}
	if err := s.view.Follow(runCtx, s.js); err != nil {
		return fmt.Errorf("gatekeeper: %w", err)
	}
	start := time.Now()
	if err := s.view.CaughtUp(ctx); err != nil {
		return fmt.Errorf("gatekeeper: %w", err)
	}
	log.InfoContext(ctx, "gatekeeper: projection replayed", slog.Duration("took", time.Since(start).Round(time.Millisecond)))
	findingsDone := make(chan struct{})
	go func() { defer close(findingsDone); s.watchFindings(runCtx) }()
	stopFindings := sync.OnceFunc(func() { cancel(); <-findingsDone })
	defer stopFindings()
	// Requests are decided under Run's context without its cancellation: a
	// request received before shutdown is still answered (Run drains the
	// subscriptions, then waits for the requests in flight), and what a
	// request waits for is bounded on its own (stop_wait, the attestation
	// look-up's 2 s).
	s.reqCtx = context.WithoutCancel(ctx)
	subs, err := s.subscribe(s.serve(s.reqCtx))
	drain := func() {
		for _, sub := range subs {
			_ = sub.Drain()
		}
	}
	if err != nil {
		drain()
		return err
	}
	stopHTTP := func() {}
	if s.cfg.HTTPListen != "" {
		if stopHTTP, err = s.serveHTTP(ctx); err != nil {
			drain()
			return err
		}
	}
	s.ready.SetReady()
	log.InfoContext(ctx, "gatekeeper running", slog.String("id", s.cfg.ID), slog.String("pretool_policy", s.pretool.Version),
		slog.String("pretool_digest", s.pretool.Digest), slog.Any("keys", s.signer.KeyIDs()))
	<-ctx.Done()
	stopFindings() // before the records are waited for
	s.ready.NotReady("stopped")
	stopHTTP()
	drain()
	// Let in-flight requests finish and their records go out.
	for range cap(s.inflight) {
		s.inflight <- struct{}{}
	}
	s.records.Wait()
	log.InfoContext(ctx, "gatekeeper stopped")
	return nil
}

// followKeys loads the signing and verification keys and keeps them
// current with the registry until ctx (Run's) ends.
func (s *Service) followKeys(ctx context.Context) (*keyring.Follower, error) {
	reg, err := keyring.OpenRegistry(ctx, s.js)
	if err != nil {
		return nil, fmt.Errorf("gatekeeper: %w", err)
	}
	keys, err := keyring.Follow(ctx, keyring.FollowConfig{Registry: reg, Dir: keyring.Dir{Path: s.cfg.KeyDir}, Verify: true,
		Clock: s.set.Clock, Logger: s.set.Logger})
	if errors.Is(err, keyring.ErrNoKeys) {
		return nil, fmt.Errorf("gatekeeper: %w (register a key with `claimcheck keys rotate`)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("gatekeeper: %w", err)
	}
	s.signer, s.keySet = keys.Signer(), keys.Set
	return keys, nil
}

// subscribe joins the gate subjects' queue group.
func (s *Service) subscribe(serve nats.MsgHandler) ([]*nats.Subscription, error) {
	var subs []*nats.Subscription
	for _, kind := range []string{subject.GateStop, subject.GatePreTool, subject.GatePrompt, subject.GatePostTool, subject.GatePing} {
		handler := serve
		if kind == subject.GatePing {
			handler = func(m *nats.Msg) { _ = m.Respond([]byte("ok " + s.cfg.ID)) }
		}
		subj := subject.GateAll(kind)
		sub, err := s.set.Conn.QueueSubscribe(subj, QueueGroup, handler)
		if err != nil {
			return subs, fmt.Errorf("gatekeeper: subscribe %s: %w", subj, err)
		}
		subs = append(subs, sub)
	}
	sub, err := s.set.Conn.QueueSubscribe(subject.GateLevel, QueueGroup, s.serveLevel(s.reqCtx))
	if err != nil {
		return subs, fmt.Errorf("gatekeeper: subscribe %s: %w", subject.GateLevel, err)
	}
	subs = append(subs, sub)
	if err := s.set.Conn.Flush(); err != nil {
		return subs, fmt.Errorf("gatekeeper: %w", err)
	}
	return subs, nil
}

// serve returns the NATS handler: bounded concurrency, one goroutine per
// request (a Stop may wait for its event to reach the view), each decided
// under ctx.
func (s *Service) serve(ctx context.Context) nats.MsgHandler {
	return func(m *nats.Msg) {
		s.inflight <- struct{}{}
		go func() {
			defer func() { <-s.inflight }()
			env, _ := s.Handle(ctx, m.Subject, m.Data)
			if env != nil {
				_ = m.Respond(env)
			}
		}()
	}
}

// ErrBadRequest is wrapped by errors about the request itself; the reply is
// then a signed refusal (block or deny) naming the problem.
var ErrBadRequest = errors.New("bad gate request")

// Handle decides one request received on subj (cc.gate.<host>.<kind>) and
// returns the signed decision envelope. The host is the one whose
// credentials sent it (NATS permissions bind a host's credentials to its
// own gate subjects): the request must name that host, and a session
// whose events came from another host is not that host's to ask about.
func (s *Service) Handle(ctx context.Context, subj string, data []byte) ([]byte, error) {
	started := time.Now()
	req, host, post, err := decodeRequest(subj, data)
	if err == nil {
		if owner := s.view.Owner(req.SessionID); owner != "" && owner != host {
			err = fmt.Errorf("%w: session %s is host %s's; host %s may not ask about it", ErrBadRequest, req.SessionID, owner, host)
		}
	}
	var d schemas.GateDecision
	if err != nil {
		d = s.refusal(req, err)
	} else {
		d = s.decide(ctx, req, post)
	}
	return s.finish(ctx, &d, started)
}

// decide decides a request at the degradation level of its session, host
// and the fleet, read afresh for every request. post is a tool result's
// payload as decodeRequest read it (nil: read it from req.Payload).
func (s *Service) decide(ctx context.Context, req schemas.GateRequest, post *postRead) schemas.GateDecision {
	if post != nil && post.err == nil && (req.HookEvent == schemas.HookPostToolUse || req.HookEvent == schemas.HookPostToolUseFailure) {
		post.offered = s.offerInspection(post.text) // the scans run while the level reads wait (offer)
	}
	lv := s.effectiveLevel(ctx, req.SessionID, req.Host)
	var d schemas.GateDecision
	switch req.HookEvent {
	case schemas.HookPreToolUse:
		return s.decidePreTool(ctx, req, &lv)
	case schemas.HookUserPromptSubmit:
		d = s.decidePrompt(ctx, req)
		s.promptAtLevel(&d, lv)
	case schemas.HookPostToolUse, schemas.HookPostToolUseFailure:
		d = s.decidePostTool(ctx, req, &lv, post)
	default:
		d = s.decideStop(ctx, req)
		s.stopAtLevel(&d, lv)
	}
	s.applyLevel(ctx, &d, lv, "")
	return d
}

// finish signs a decision, counts it and records it.
func (s *Service) finish(ctx context.Context, d *schemas.GateDecision, started time.Time) ([]byte, error) {
	env, err := s.sign(ctx, d)
	if err != nil {
		s.m.failures.WithLabelValues("sign").Inc()
		s.set.Logger.ErrorContext(ctx, "gatekeeper: cannot sign a decision; the hook will fail closed", slog.Any("err", err))
		return nil, err
	}
	s.m.latency.WithLabelValues(d.HookEvent).Observe(time.Since(started).Seconds())
	s.m.decisions.WithLabelValues(d.HookEvent, d.Decision, d.Rule).Inc()
	// Prompt and tool-result answers are recorded only when they carry an
	// alert or a finding (the override requests, alerts and findings
	// behind them are recorded anyway).
	quiet := d.HookEvent == schemas.HookUserPromptSubmit || d.HookEvent == schemas.HookPostToolUse ||
		d.HookEvent == schemas.HookPostToolUseFailure
	if id.CheckSession(d.SessionID) == nil && (!quiet || d.SystemMessage != "" || d.Decision != schemas.GateAllow) {
		if d.HookEvent == schemas.HookStop {
			s.view.Decided(d.SessionID, *d)
		}
		s.record(*d, env)
	}
	return env, nil
}

// postRead is a tool result's payload as read while its request was
// decoded.
type postRead struct {
	in      inject.Inspection
	text    string
	err     error       // it wraps inject.ErrNotPostTool: the payload is JSON, but no tool result
	offered *inspection // the text's scans, once offered
}

// decodeRequest reads a gate request and the host token of its subject. A
// tool result's payload is read for its inspection as it is decoded (post),
// in the one pass that validates it, and req.Payload holds its bytes in
// data (not a copy).
func decodeRequest(subj string, data []byte) (req schemas.GateRequest, host string, post *postRead, err error) {
	host, kind, ok := subject.ParseGate(subj)
	if !ok {
		return req, "", nil, fmt.Errorf("%w: subject %s is not cc.gate.<host>.<kind>", ErrBadRequest, id.Quote(subj))
	}
	opts := []json.Options{json.RejectUnknownMembers(true)}
	if kind == subject.GatePostTool {
		opts = append(opts, json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *jsontext.Value) error {
			start := dec.InputOffset() // after the member's name
			in, text, err := inject.ReadValue(dec)
			if err != nil && !errors.Is(err, inject.ErrNotPostTool) {
				return err // not JSON
			}
			*v = jsontext.Value(bytes.TrimLeft(data[start:dec.InputOffset()], " \t\r\n:"))
			post = &postRead{in: in, text: text, err: err}
			return nil
		})))
	}
	if err := json.Unmarshal(data, &req, opts...); err != nil {
		return req, host, nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	req, host, err = checkRequest(subj, kind, host, req)
	return req, host, post, err
}

// checkRequest checks a decoded request's members against its subject.
func checkRequest(subj, kind, host string, req schemas.GateRequest) (schemas.GateRequest, string, error) {
	want := map[string]string{subject.GateStop: schemas.HookStop, subject.GatePreTool: schemas.HookPreToolUse,
		subject.GatePrompt: schemas.HookUserPromptSubmit, subject.GatePostTool: schemas.HookPostToolUse}[kind]
	tok, herr := id.HostToken(req.Host)
	switch {
	case req.V != 1:
		return req, host, fmt.Errorf("%w: v %d, want 1", ErrBadRequest, req.V)
	case len(req.Nonce) < 16 || len(req.Nonce) > 128:
		return req, host, fmt.Errorf("%w: nonce of %d characters, want 16..128", ErrBadRequest, len(req.Nonce))
	case id.CheckSession(req.SessionID) != nil:
		return req, host, fmt.Errorf("%w: session_id: %w", ErrBadRequest, id.CheckSession(req.SessionID))
	case want == "":
		return req, host, fmt.Errorf("%w: no gate decides %s requests", ErrBadRequest, id.Quote(kind))
	case req.HookEvent != want && (want != schemas.HookStop || req.HookEvent != schemas.HookSubagentStop) &&
		(want != schemas.HookPostToolUse || req.HookEvent != schemas.HookPostToolUseFailure):
		return req, host, fmt.Errorf("%w: hook_event_name %q on %s", ErrBadRequest, req.HookEvent, subj)
	case len(req.Payload) == 0:
		return req, host, fmt.Errorf("%w: no payload", ErrBadRequest)
	case herr != nil || tok != host:
		return req, host, fmt.Errorf("%w: the request names host %s but came with the credentials of host %s", ErrBadRequest,
			id.Quote(req.Host), host)
	}
	return req, host, nil
}

// refusal answers a request that could not be understood: fail closed.
func (s *Service) refusal(req schemas.GateRequest, err error) schemas.GateDecision {
	d := s.base(req)
	d.Decision, d.Rule = schemas.GateBlock, "request.invalid"
	if req.HookEvent == schemas.HookPreToolUse {
		d.Decision = schemas.GateDeny
	}
	d.Reason = "claimcheck could not check this request: " + err.Error()
	return d
}

func (s *Service) base(req schemas.GateRequest) schemas.GateDecision {
	now := s.set.Clock.Now()
	did, _ := s.gen.New()
	return schemas.GateDecision{
		V: 1, DecisionID: did, SessionID: req.SessionID, HookEvent: req.HookEvent, EventID: req.EventID, Nonce: req.Nonce,
		Source: schemas.SourceGatekeeper, Gatekeeper: s.cfg.ID,
		IssuedAt: now.UTC().Format(time.RFC3339Nano), ExpiresAt: now.Add(s.cfg.DecisionTTL).UTC().Format(time.RFC3339Nano),
	}
}

func (s *Service) decidePreTool(ctx context.Context, req schemas.GateRequest, lv *effective) schemas.GateDecision {
	d := s.base(req)
	var p struct {
		AgentType string         `json:"agent_type"`
		AgentID   string         `json:"agent_id"`
		ToolName  string         `json:"tool_name"`
		ToolInput jsontext.Value `json:"tool_input"`
		Cwd       string         `json:"cwd"`
	}
	if err := json.Unmarshal(req.Payload, &p, json.RejectUnknownMembers(false)); err != nil {
		d.Decision, d.Rule, d.Reason = schemas.GateDeny, "request.invalid", "claimcheck could not read the PreToolUse payload: "+err.Error()
		return d
	}
	r := s.pretool.Decide(pretool.Input{AgentType: p.AgentType, ToolName: p.ToolName, ToolInput: p.ToolInput, Cwd: p.Cwd}, s.runtime)
	d.Decision, d.Rule, d.Reason = r.Decision, r.Rule, r.Reason
	d.Policy = &schemas.PolicyRef{Version: s.pretool.Version, Digest: s.pretool.Digest}
	d.LedgerHead = s.view.Head(req.SessionID)
	if d.Decision == schemas.GateDeny && lv.unavailable == nil && !lv.replay {
		// A denial of the policy's counts towards the session's level.
		msg, st := s.escalate(ctx, schemas.ScopeSession, req.SessionID, req.SessionID, req.Host,
			level.Event{Kind: level.Denial, Agent: p.AgentID, Detail: p.ToolName + " denied by " + d.Rule})
		if msg != "" {
			d.SystemMessage = addLine(d.SystemMessage, msg)
			lv.raised(st)
		}
	}
	s.applyLevel(ctx, &d, *lv, p.ToolName)
	return d
}

func (s *Service) sign(ctx context.Context, d *schemas.GateDecision) ([]byte, error) {
	payload, err := json.Marshal(d, json.Deterministic(true))
	if err != nil {
		return nil, err
	}
	return s.signer.Sign(ctx, schemas.GateDecisionType, payload)
}

// record puts the decision into the session's chain through INTAKE. It does
// not delay the reply: the hook records the decision it acted on too (with
// the same event id, so the ledger holds it once).
func (s *Service) record(d schemas.GateDecision, env []byte) {
	raw, err := RecordPayload(d, env, "")
	if err != nil {
		return
	}
	s.recordEvent(d.SessionID, schemas.GateDecisionEvent, d.DecisionID, d.DecisionID, raw)
}

// recordEvent publishes a record of the gatekeeper's own into a session's
// chain through INTAKE, asynchronously. msgID is the JetStream dedupe id.
func (s *Service) recordEvent(session, hookEvent, eventID, msgID string, raw []byte) {
	data, err := envelope.Event(eventID, session, hookEvent, 0, s.set.Clock.Now(),
		envelope.Source{Host: hostname(), AgentType: "claimcheck-gatekeeper", AgentID: s.cfg.ID}, raw)
	if err != nil {
		s.set.Logger.Warn("gatekeeper: cannot build a record", slog.String("event", hookEvent),
			slog.String("session", session), slog.Any("err", err))
		return
	}
	pub := intake.Publisher{JS: s.js, Origin: subject.OriginGatekeeper, Name: s.set.Name}
	fut, err := pub.PublishAsync(session, hookEvent, msgID, data)
	if err != nil {
		s.m.failures.WithLabelValues("record").Inc()
		return
	}
	s.records.Go(func() {
		// A decision's record is also published by the hook, with the same
		// dedupe id: while the stream's leader holds the other copy
		// uncommitted, this one is refused "in process" and settled later.
		ctx, cancel := context.WithTimeout(context.Background(), recordSettle)
		defer cancel()
		if err := pub.Settle(ctx, fut, session, hookEvent, msgID, data); err != nil {
			s.m.failures.WithLabelValues("record").Inc()
			s.set.Logger.Warn("gatekeeper: a record was not written", slog.String("event", hookEvent), slog.String("id", eventID),
				slog.String("session", session), slog.Any("err", err))
		}
	})
}

// recordSettle bounds how long a record is retried (intake.Publisher.Settle);
// a stopping gatekeeper waits for its records up to it.
const recordSettle = 10 * time.Second

// RecordPayload is the payload of a GateDecisionEvent record: the decision
// and, when env is its signed envelope, the envelope's signatures
// (decision.Ref; the record does not repeat the base64 payload).
func RecordPayload(d schemas.GateDecision, env []byte, why string) ([]byte, error) {
	rec := schemas.GateRecord{SessionID: d.SessionID, HookEvent: schemas.GateDecisionEvent, Decision: d, Error: why}
	if env != nil {
		ref, err := decision.Ref(env, d)
		if err != nil {
			return nil, err
		}
		rec.Signed = ref
	}
	return json.Marshal(rec, json.Deterministic(true))
}

var hostname = sync.OnceValue(func() string { h, _ := os.Hostname(); return h })

// ---- metrics -------------------------------------------------------------------

type metrics struct {
	decisions *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	failures  *prometheus.CounterVec
	attReads  *prometheus.CounterVec
	findings  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	f := telemetry.NewMetrics(reg, "gatekeeper")
	m := &metrics{
		decisions: f.CounterVec("decisions_total", "Gate decisions by event, decision and rule.", "event", "decision", "rule"),
		latency: f.HistogramVec("decision_seconds", "Time from request to signed decision.",
			[]float64{.0001, .00025, .0005, .001, .0025, .005, .01, .05, .25, 1, 2.5}, "event"),
		failures: f.CounterVec("failures_total", "Signing and recording failures.", "what"),
		attReads: f.CounterVec("attestation_reads_total",
			"Attestations cited at Stop, by where their envelope came from (memory, stream, failed).", "from"),
		findings: f.CounterVec("findings_total", "Findings recorded, by kind (hook_config_drift, ungated_session).", "kind"),
	}
	return m, f.Err()
}
