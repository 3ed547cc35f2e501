// Package view is the gatekeeper's view of LEDGER and ATTEST: for every
// session its head, contract, recent edits and runs, recent Stop events,
// consecutive blocks and pending override, and an index of every
// attestation. The gatekeeper builds it by replaying both streams from the
// start and then following them (Follow); `claimcheck gate replay` builds
// one of a single recorded session (Session, Walk). Requests read it; they
// never scan the ledger.
//
// What needs no I/O is pure: decoding an entry (prepare), a session's state
// changes (session.go) and the freshness of an attested pass
// (Snapshot.Staleness). The View adds the locking, the waiting and the
// streams.
package view

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/anomaly"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/watch"
)

// Config sizes a View.
type Config struct {
	// MaxTrail bounds the edits and runs kept per session for freshness.
	MaxTrail int
	// MaxEnvelopes bounds the attestation envelopes kept in memory (the
	// newest); an older one is read back from ATTEST by sequence.
	MaxEnvelopes int
	// Watch is fed the override requests, hook failures and raised alerts
	// the ledger holds.
	Watch *watch.Watch
	// Anomaly, when set, is fed each session's tool calls, denials and
	// tool output sizes.
	Anomaly *anomaly.Monitor
}

// View is the gatekeeper's view of LEDGER and ATTEST. It is safe for
// concurrent use: one goroutine per stream applies messages, any number of
// requests read.
type View struct {
	mu       sync.RWMutex
	anchors  *ledger.Anchors // where chains trimmed by the rotator begin
	sessions map[string]*sessionState
	atts     map[string]*stored
	// verdictSeq is, per attestation id, the LEDGER sequence of the
	// message holding its verdict (for the checkpoint a Stop may require).
	verdictSeq map[string]uint64
	// withEnvelope lists, oldest first, the attestations whose envelope is
	// kept in memory (at most maxEnvelopes); the others are read back from
	// ATTEST by sequence when a Stop cites them.
	withEnvelope []string
	maxEnvelopes int
	// attestSeq is the last ATTEST sequence applied; followsAttest says
	// the view follows the whole stream (Session applies one session's
	// attestations only), so it will reach the stream's end.
	attestSeq     uint64
	followsAttest bool
	js            jetstream.JetStream
	// changed is closed (and replaced) whenever entries were applied, so
	// waiters can re-check.
	changed chan struct{}
	// caught is closed once the replay reached the streams' ends at start.
	ledgerCaught, attestCaught chan struct{}
	maxTrail                   int
	// watch counts override prompts and hook failures across sessions.
	watch *watch.Watch
	// anomaly, when set, keeps the activity baselines.
	anomaly *anomaly.Monitor
}

// stored is an attestation as the view indexes it.
type stored struct {
	session  string
	seq      uint64 // in ATTEST
	envelope []byte // nil once evicted (see View.withEnvelope)
	storedAt time.Time
}

// New returns an empty view; Follow fills it.
func New(cfg Config) *View {
	w := cfg.Watch
	if w == nil {
		w = watch.New(watch.DefaultConfig())
	}
	return &View{
		sessions: map[string]*sessionState{}, atts: map[string]*stored{}, verdictSeq: map[string]uint64{},
		changed: make(chan struct{}), ledgerCaught: make(chan struct{}), attestCaught: make(chan struct{}),
		maxTrail: cfg.MaxTrail, maxEnvelopes: max(1, cfg.MaxEnvelopes), watch: w, anomaly: cfg.Anomaly,
	}
}

// session returns a session's state, creating it; call with v.mu held. It
// does no I/O: the chain verifier (which reads the session's anchor) is
// made by applyLedger, outside the lock.
func (v *View) session(name string) *sessionState {
	s := v.sessions[name]
	if s == nil {
		s = newSessionState()
		v.sessions[name] = s
	}
	return s
}

// notify wakes waiters; call with v.mu held.
func (v *View) notify() {
	close(v.changed)
	v.changed = make(chan struct{})
}

// applyLedger applies one ledger message (a block of entries of one chain).
// Only the goroutine following LEDGER calls it (Session builds a view of
// its own), and only it uses a session's chain verifier: verifying,
// hashing and decoding run outside v.mu, so requests, which read under
// v.mu, wait only for the state updates (with ingest chaining hundreds of
// records a second, holding the lock for the decoding too stretched the
// gatekeeper's p99). ctx is the follower's: the verifier reads the chain's
// anchor with it.
func (v *View) applyLedger(ctx context.Context, chainName string, seq uint64, data []byte) {
	v.mu.Lock()
	s := v.session(chainName)
	broken := s.broken != nil
	v.mu.Unlock()
	var items []prepared
	var fault error
	if !broken {
		if s.verifier == nil {
			s.verifier = chain.NewVerifierFrom(chainName, v.anchors.StartOf(ctx, chainName))
		}
		items, fault = verifyBlock(s.verifier, data)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, it := range items {
		v.observe(it.e)
		s.apply(it, v.maxTrail)
		if it.e.Kind == schemas.EntryVerdict && it.e.Verdict != nil && it.e.Verdict.AttestationID != "" && seq != 0 {
			v.verdictSeq[it.e.Verdict.AttestationID] = seq
		}
	}
	if fault != nil {
		s.broken = fault
	}
	v.notify()
}

// VerdictSeq returns the LEDGER sequence of the message holding the
// verdict of attestation id, when the view has seen it.
func (v *View) VerdictSeq(id string) (uint64, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	seq, ok := v.verdictSeq[id]
	return seq, ok
}

// verifyBlock checks a block's entries against the chain and decodes them,
// up to the first fault.
func verifyBlock(cv *chain.Verifier, data []byte) ([]prepared, error) {
	var items []prepared
	for _, raw := range ledger.SplitBlock(data) {
		if err := cv.Next(raw); err != nil {
			return items, err
		}
		var e schemas.Entry
		if err := json.Unmarshal(raw, &e, json.RejectUnknownMembers(false)); err != nil {
			n, _ := cv.Head()
			return items, fmt.Errorf("entry after n=%d: %w", n-1, err)
		}
		items = append(items, prepare(e))
	}
	return items, nil
}

// observe feeds the watchdogs: inputs claimcheck-hook rejected and its
// recorded failures count as hook crashes; override requests and raised
// alerts are counted for the once-per-day rule; the agent's events (and a
// SessionStart's hook configuration) and recorded findings feed the
// findings.
func (v *View) observe(e schemas.Entry) {
	at, err := time.Parse(time.RFC3339Nano, e.ReceivedAt)
	if err != nil {
		if at, err = time.Parse(time.RFC3339Nano, e.IngestedAt); err != nil {
			return
		}
	}
	if e.Kind == schemas.EntryEvent && agentOrigin(e.Origin) {
		v.watch.Event(e.Host, e.SessionID, e.HookEvent, e.EventID, at, e.HookConfig)
	}
	v.observeActivity(e, at)
	switch {
	case e.Kind == schemas.EntryRejected || e.Kind == schemas.EntryInvalid:
		v.watch.Crash(e.Host, e.HookEvent, e.EventID, at)
	case e.Kind != schemas.EntryEvent || e.Payload == nil:
	case e.HookEvent == schemas.GateFindingEvent:
		if !strings.HasPrefix(e.Origin, subject.OriginGatekeeper+":") {
			return // a host cannot mark its own sessions as already found
		}
		var f schemas.FindingRecord
		if json.Unmarshal([]byte(*e.Payload), &f, json.RejectUnknownMembers(false)) == nil {
			v.watch.Found(f.Finding.Kind, e.SessionID)
		}
	case e.HookEvent == schemas.HookCrashEvent:
		var c schemas.HookCrash
		if json.Unmarshal([]byte(*e.Payload), &c, json.RejectUnknownMembers(false)) == nil {
			v.watch.Crash(e.Host, c.Event, e.EventID, at)
		}
	case e.HookEvent == schemas.OverrideEvent:
		var o schemas.OverrideRequest
		if json.Unmarshal([]byte(*e.Payload), &o, json.RejectUnknownMembers(false)) == nil && o.PromptEvent != "" {
			v.watch.Override(o.Host, o.PromptEvent, at)
		}
	case e.HookEvent == schemas.GateAlertEvent:
		var a schemas.GateAlert
		if json.Unmarshal([]byte(*e.Payload), &a, json.RejectUnknownMembers(false)) == nil {
			v.watch.Raised(watch.Alert{Kind: a.Kind, Host: a.Host, Event: a.Event, Day: a.Day})
		}
	}
}

// observeActivity feeds the anomaly monitor: an agent's PreToolUse is a
// tool call, its PostToolUse(Failure) the size of a tool's output, and a
// recorded PreToolUse decision that denied (by the policy, not by a
// level) a denial.
func (v *View) observeActivity(e schemas.Entry, at time.Time) {
	if v.anomaly == nil || e.Kind != schemas.EntryEvent {
		return
	}
	switch {
	case !agentOrigin(e.Origin) && e.HookEvent == schemas.GateDecisionEvent && e.Payload != nil:
		var r schemas.GateRecord
		if json.Unmarshal([]byte(*e.Payload), &r, json.RejectUnknownMembers(false)) == nil &&
			r.Decision.HookEvent == schemas.HookPreToolUse && r.Decision.Decision == schemas.GateDeny &&
			!strings.HasPrefix(r.Decision.Rule, "level.") {
			v.anomaly.Observe("", e.SessionID, anomaly.Denials, 1, at)
		}
	case !agentOrigin(e.Origin):
	case e.HookEvent == schemas.HookPreToolUse:
		v.anomaly.Observe(e.AgentType, e.SessionID, anomaly.ToolCalls, 1, at)
	case e.HookEvent == schemas.HookPostToolUse || e.HookEvent == schemas.HookPostToolUseFailure:
		v.anomaly.Observe(e.AgentType, e.SessionID, anomaly.OutputBytes, float64(e.PayloadSize), at)
	}
}

// agentOrigin reports an entry published for the agent (its hook, or the
// gatekeeper's http endpoint), not a record of claimcheck's own.
func agentOrigin(origin string) bool {
	kind, _, _ := strings.Cut(origin, ":")
	return origin == "" || kind == subject.OriginHook || kind == subject.OriginHTTP
}

// applyAttestation indexes one ATTEST message (subject
// cc.attest.<session>.<id>), keeping the newest envelopes in memory.
func (v *View) applyAttestation(subj string, seq uint64, data []byte, storedAt time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.attestSeq = max(v.attestSeq, seq)
	defer v.notify()
	rest, ok := strings.CutPrefix(subj, subject.AttestPrefix+".")
	if !ok {
		return
	}
	session, attID, ok := strings.Cut(rest, ".")
	if !ok {
		return
	}
	if _, seen := v.atts[attID]; !seen {
		v.withEnvelope = append(v.withEnvelope, attID)
	}
	v.atts[attID] = &stored{session: session, seq: seq, envelope: data, storedAt: storedAt}
	if n := len(v.withEnvelope) - v.maxEnvelopes; n > 0 {
		for _, old := range v.withEnvelope[:n] {
			if a := v.atts[old]; a != nil {
				a.envelope = nil
			}
		}
		v.withEnvelope = append(v.withEnvelope[:0:0], v.withEnvelope[n:]...)
	}
}

// WaitStop waits until the Stop event eventID of session is in the view
// (everything the agent did before it is then too), until the session's
// chain is found broken, or until ctx ends; then it returns the session's
// snapshot, StopSeen saying whether the event was seen.
func (v *View) WaitStop(ctx context.Context, session, eventID string) Snapshot {
	for {
		v.mu.RLock()
		s := v.sessions[session]
		seen := eventID == "" || (s != nil && s.stops[eventID] != 0)
		broken := s != nil && s.broken != nil // nothing more will be applied
		ch := v.changed
		if seen || broken || ctx.Err() != nil {
			snap := s.snapshot()
			snap.StopSeen = seen
			v.mu.RUnlock()
			return snap
		}
		v.mu.RUnlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
}

// Head is the position of the last entry of a session's chain in the view
// (zero when the session is unknown).
func (v *View) Head(session string) schemas.Position {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if s := v.sessions[session]; s != nil {
		return s.head
	}
	return schemas.Position{}
}

// Owner is the token of the host a session's events came from ("" when
// unknown).
func (v *View) Owner(session string) string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if s := v.sessions[session]; s != nil {
		return s.host
	}
	return ""
}

// Decided applies a Stop decision this gatekeeper made, before its record
// comes back through the ledger (it is counted once either way).
func (v *View) Decided(session string, d schemas.GateDecision) {
	v.mu.Lock()
	v.session(session).decided(d)
	v.mu.Unlock()
}
