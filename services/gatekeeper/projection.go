package gatekeeper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/command"
	"github.com/claimcheck/claimcheck/pkg/evidence"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/watch"
)

// The projection is the gatekeeper's own view of LEDGER and ATTEST, built by
// replaying both streams from the start and then following them. Requests
// read it; they never scan the ledger.
type projection struct {
	mu       sync.RWMutex
	ctx      context.Context //nolint:containedctx // the follow loop's, for anchor reads
	anchors  *ledger.Anchors // where chains trimmed by the rotator begin
	sessions map[string]*sessionState
	atts     map[string]*storedAttestation
	// withEnvelope lists, oldest first, the attestations whose envelope is
	// kept in memory (at most maxEnvelopes); the others are read back from
	// ATTEST by sequence when a Stop cites them.
	withEnvelope []string
	maxEnvelopes int
	// attestSeq is the last ATTEST sequence applied; followsAttest says
	// the projection follows the whole stream (replay applies one
	// session's attestations only), so it will reach the stream's end.
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
}

type storedAttestation struct {
	session  string
	seq      uint64 // in ATTEST
	envelope []byte // nil once evicted (see projection.withEnvelope)
	storedAt time.Time
}

type pathAt struct {
	n    uint64
	path string
	// shell: a Bash command that writes files (written, or unknown ones);
	// such writes count only against a contract's named paths (see
	// evidence.EditOf).
	shell   bool
	command string
	written []string
	unknown bool
}

type runAt struct {
	n       uint64
	command string
	failed  bool
	summary string
}

type sessionState struct {
	// verifier is used by the goroutine following LEDGER alone (outside
	// p.mu); nil until that goroutine first sees the session.
	verifier  *chain.Verifier
	broken    error
	head      schemas.Position
	promptN   uint64
	promptID  string
	contract  *schemas.Contract
	contractN uint64
	contracts map[uint64]*schemas.Contract
	edits     []pathAt
	runs      []runAt
	// stops maps the event ids of recent Stop events to their position.
	stops     map[string]uint64
	stopOrder []string
	// Consecutive blocked stops since the last allowed stop or prompt.
	blocks    int
	decisions map[string]bool // decision ids already applied
	override  string          // pending override event id
	overrideR string
	// host is the token of the host whose hook published the session's
	// first event ("" before it, or for sessions recorded without origins).
	host string
}

func newProjection(maxTrail, maxEnvelopes int, w *watch.Watch) *projection {
	return &projection{
		sessions: map[string]*sessionState{}, atts: map[string]*storedAttestation{},
		changed: make(chan struct{}), ledgerCaught: make(chan struct{}), attestCaught: make(chan struct{}),
		maxTrail: maxTrail, maxEnvelopes: max(1, maxEnvelopes), watch: w,
	}
}

// session returns a session's state, creating it; call with p.mu held. It
// does no I/O: the chain verifier (which reads the session's anchor) is
// made by applyLedger, outside the lock.
func (p *projection) session(name string) *sessionState {
	s := p.sessions[name]
	if s == nil {
		s = &sessionState{contracts: map[uint64]*schemas.Contract{}, stops: map[string]uint64{}, decisions: map[string]bool{}}
		p.sessions[name] = s
	}
	return s
}

// notify wakes waiters; call with p.mu held.
func (p *projection) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// applyLedger applies one ledger message (a block of entries of one chain).
// Only the goroutine following LEDGER calls it (replay runs its own
// projection), and only it uses a session's chain verifier: verifying,
// hashing and decoding run outside p.mu, so requests, which read under
// p.mu, wait only for the state updates (with ingest chaining hundreds of
// records a second, holding the lock for the decoding too stretched the
// gatekeeper's p99).
func (p *projection) applyLedger(chainName string, data []byte) {
	p.mu.Lock()
	s := p.session(chainName)
	broken := s.broken != nil
	p.mu.Unlock()
	var items []prepared
	var fault error
	if !broken {
		if s.verifier == nil {
			s.verifier = chain.NewVerifierFrom(chainName, p.anchors.StartOf(p.ctx, chainName))
		}
		for _, raw := range ledger.SplitBlock(data) {
			if err := s.verifier.Next(raw); err != nil {
				fault = err
				break
			}
			var e schemas.Entry
			if err := json.Unmarshal(raw, &e, json.RejectUnknownMembers(false)); err != nil {
				n, _ := s.verifier.Head()
				fault = fmt.Errorf("entry after n=%d: %w", n-1, err)
				break
			}
			items = append(items, prepare(e))
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, it := range items {
		s.head = schemas.Position{N: it.e.N, Hash: it.e.Hash, EventID: it.e.EventID}
		p.applyEntry(s, it)
	}
	if fault != nil {
		s.broken = fault
	}
	p.notify()
}

// prepared is an entry with what applyEntry needs decoded (outside p.mu).
type prepared struct {
	e    schemas.Entry
	edit *pathAt
	// shellEdit marks a Bash command that writes files (the staleness
	// check asks command.Writes which, against the contract's paths).
	shellEdit *pathAt
	run       *runAt
	record    *schemas.GateRecord
	override  *schemas.GateOverride
}

func prepare(e schemas.Entry) prepared {
	pr := prepared{e: e}
	if e.Kind != schemas.EntryEvent {
		return pr
	}
	switch e.HookEvent {
	case "PostToolUse", "PostToolUseFailure":
		ev := evidence.Decode(e)
		switch {
		case evidence.IsEdit(ev.Tool) && !ev.Failed && ev.FilePath != "":
			pr.edit = &pathAt{n: e.N, path: ev.FilePath}
		case ev.Tool == "Bash" && ev.Command != "":
			sum := evidence.Summarize(ev.Output)
			failed := ev.Failed || (sum.Recognized && sum.Failed > 0)
			pr.run = &runAt{n: e.N, command: ev.Command, failed: failed, summary: firstLine(ev.Output)}
			if written, unknown := ev.Writes(); len(written) > 0 || unknown {
				pr.shellEdit = &pathAt{n: e.N, shell: true, command: ev.Command, written: written, unknown: unknown}
			}
		}
	case schemas.GateDecisionEvent:
		var r schemas.GateRecord
		if e.Payload != nil && json.Unmarshal([]byte(*e.Payload), &r, json.RejectUnknownMembers(false)) == nil {
			pr.record = &r
		}
	case schemas.GateOverrideEvent:
		var o schemas.GateOverride
		if e.Payload != nil && json.Unmarshal([]byte(*e.Payload), &o, json.RejectUnknownMembers(false)) == nil {
			pr.override = &o
		}
	}
	return pr
}

// applyEntry updates the session with a prepared entry; call with p.mu held.
func (p *projection) applyEntry(s *sessionState, pr prepared) {
	e := pr.e
	p.observe(e)
	if h, ok := strings.CutPrefix(e.Origin, subject.OriginHook+":"); ok && s.host == "" && e.Kind == schemas.EntryEvent {
		s.host = h
	}
	switch e.Kind {
	case schemas.EntryContract:
		if e.Contract == nil {
			return
		}
		s.contracts[e.N] = e.Contract
		if e.Contract.PromptEventID == s.promptID {
			s.contract, s.contractN = e.Contract, e.N
		}
		return
	case schemas.EntryEvent:
	default:
		return
	}
	switch e.HookEvent {
	case "UserPromptSubmit":
		s.promptN, s.promptID = e.N, e.EventID
		s.contract, s.contractN = nil, 0
		s.blocks = 0
	case "Stop", "SubagentStop":
		s.stops[e.EventID] = e.N
		s.stopOrder = append(s.stopOrder, e.EventID)
		if len(s.stopOrder) > 64 {
			delete(s.stops, s.stopOrder[0])
			s.stopOrder = s.stopOrder[1:]
		}
	case "PostToolUse", "PostToolUseFailure":
		switch {
		case pr.edit != nil:
			s.edits = appendBounded(s.edits, *pr.edit, p.maxTrail)
		case pr.run != nil:
			s.runs = appendBounded(s.runs, *pr.run, p.maxTrail)
		}
		if pr.shellEdit != nil {
			s.edits = appendBounded(s.edits, *pr.shellEdit, p.maxTrail)
		}
	case schemas.GateDecisionEvent:
		if pr.record != nil {
			p.applyDecision(s, pr.record.Decision)
		}
	case schemas.GateOverrideEvent:
		if pr.override != nil {
			s.override, s.overrideR = e.EventID, pr.override.Reason
		}
	}
}

// observe feeds the watchdogs: inputs claimcheck-hook rejected and its
// recorded failures count as hook crashes; override requests and raised
// alerts are counted for the once-per-day rule.
func (p *projection) observe(e schemas.Entry) {
	at, err := time.Parse(time.RFC3339Nano, e.ReceivedAt)
	if err != nil {
		if at, err = time.Parse(time.RFC3339Nano, e.IngestedAt); err != nil {
			return
		}
	}
	switch {
	case e.Kind == schemas.EntryRejected || e.Kind == schemas.EntryInvalid:
		p.watch.Crash(e.Host, e.HookEvent, e.EventID, at)
	case e.Kind != schemas.EntryEvent || e.Payload == nil:
	case e.HookEvent == schemas.HookCrashEvent:
		var c schemas.HookCrash
		if json.Unmarshal([]byte(*e.Payload), &c, json.RejectUnknownMembers(false)) == nil {
			p.watch.Crash(e.Host, c.Event, e.EventID, at)
		}
	case e.HookEvent == schemas.OverrideEvent:
		var o schemas.OverrideRequest
		if json.Unmarshal([]byte(*e.Payload), &o, json.RejectUnknownMembers(false)) == nil && o.PromptEvent != "" {
			p.watch.Override(o.Host, o.PromptEvent, at)
		}
	case e.HookEvent == schemas.GateAlertEvent:
		var a schemas.GateAlert
		if json.Unmarshal([]byte(*e.Payload), &a, json.RejectUnknownMembers(false)) == nil {
			p.watch.Raised(watch.Alert{Kind: a.Kind, Host: a.Host, Event: a.Event, Day: a.Day})
		}
	}
}

// applyDecision counts consecutive blocks. A decision is applied once, when
// it is made (by this gatekeeper) or when its record is read (made by
// another), whichever comes first.
func (p *projection) applyDecision(s *sessionState, d schemas.GateDecision) {
	if d.HookEvent != "Stop" || d.DecisionID == "" || s.decisions[d.DecisionID] {
		return
	}
	s.decisions[d.DecisionID] = true
	if len(s.decisions) > 256 {
		clear(s.decisions) // old ids never come back in practice; bound memory
		s.decisions[d.DecisionID] = true
	}
	switch d.Decision {
	case schemas.GateBlock:
		s.blocks++
	case schemas.GateAllow:
		s.blocks = 0
	}
	if d.Override != "" && d.Override == s.override {
		s.override, s.overrideR = "", ""
	}
}

func appendBounded[T any](list []T, v T, n int) []T {
	list = append(list, v)
	if len(list) > n {
		list = append(list[:0:0], list[len(list)-n:]...)
	}
	return list
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

func (p *projection) applyAttestation(subj string, seq uint64, data []byte, stored time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attestSeq = max(p.attestSeq, seq)
	defer p.notify()
	rest, ok := strings.CutPrefix(subj, subject.AttestPrefix+".")
	if !ok {
		return
	}
	session, attID, ok := strings.Cut(rest, ".")
	if !ok {
		return
	}
	if _, seen := p.atts[attID]; !seen {
		p.withEnvelope = append(p.withEnvelope, attID)
	}
	p.atts[attID] = &storedAttestation{session: session, seq: seq, envelope: data, storedAt: stored}
	if n := len(p.withEnvelope) - p.maxEnvelopes; n > 0 {
		for _, old := range p.withEnvelope[:n] {
			if a := p.atts[old]; a != nil {
				a.envelope = nil
			}
		}
		p.withEnvelope = append(p.withEnvelope[:0:0], p.withEnvelope[n:]...)
	}
}

// snapshot is what a Stop decision reads of one session.
type snapshot struct {
	known     bool
	broken    error
	head      schemas.Position
	contract  *schemas.Contract
	contractN uint64
	contracts map[uint64]*schemas.Contract
	edits     []pathAt
	runs      []runAt
	blocks    int
	override  string
	overrideR string
	stopSeen  bool
}

// waitStop waits until the Stop event eventID of session is in the
// projection (everything the agent did before it is then too), until the
// session's chain is found broken, or until ctx ends; then it returns the
// session's snapshot.
func (p *projection) waitStop(ctx context.Context, session, eventID string) snapshot {
	for {
		p.mu.RLock()
		s := p.sessions[session]
		seen := eventID == "" || (s != nil && s.stops[eventID] != 0)
		broken := s != nil && s.broken != nil // nothing more will be applied
		ch := p.changed
		if seen || broken || ctx.Err() != nil {
			snap := p.snapshotLocked(s)
			snap.stopSeen = seen
			p.mu.RUnlock()
			return snap
		}
		p.mu.RUnlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
}

func (p *projection) snapshotLocked(s *sessionState) snapshot {
	if s == nil {
		return snapshot{}
	}
	return snapshot{
		known: true, broken: s.broken, head: s.head, contract: s.contract, contractN: s.contractN,
		contracts: s.contracts, edits: s.edits, runs: s.runs, blocks: s.blocks,
		override: s.override, overrideR: s.overrideR,
	}
}

func (p *projection) head(session string) schemas.Position {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if s := p.sessions[session]; s != nil {
		return s.head
	}
	return schemas.Position{}
}

// owner is the token of the host a session's events came from ("" when
// unknown).
func (p *projection) owner(session string) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if s := p.sessions[session]; s != nil {
		return s.host
	}
	return ""
}

// attestation returns a copy of a stored attestation, its envelope read
// back from ATTEST when it is no longer kept in memory (fromStream). An id
// the projection does not know yet is looked up again once the projection
// has applied ATTEST up to the stream's last message: the verifier writes
// an attestation before it answers PASS, so one cited at a Stop is in the
// stream, but the projection follows ATTEST on its own and may not have
// applied it yet. Not found after that (or err) means no such attestation.
func (p *projection) attestation(ctx context.Context, id string) (a storedAttestation, ok, fromStream bool, err error) {
	p.mu.RLock()
	stored, ok := p.atts[id]
	if ok {
		a = *stored
	}
	js, follows := p.js, p.followsAttest
	p.mu.RUnlock()
	if !ok && js != nil && follows {
		if err := p.catchUpAttest(ctx, js); err != nil {
			return a, false, false, err
		}
		p.mu.RLock()
		if stored, ok = p.atts[id]; ok {
			a = *stored
		}
		p.mu.RUnlock()
	}
	if !ok || a.envelope != nil {
		return a, ok, false, nil
	}
	if js == nil {
		return a, true, true, errors.New("ATTEST is not being followed")
	}
	st, err := js.Stream(ctx, stream.Attest)
	if err != nil {
		return a, true, true, fmt.Errorf("read attestation %s: %w", id, err)
	}
	m, err := st.GetMsg(ctx, a.seq)
	if err != nil {
		return a, true, true, fmt.Errorf("read attestation %s (ATTEST seq %d): %w", id, a.seq, err)
	}
	if m.Subject != subject.AttestPrefix+"."+a.session+"."+id {
		return a, true, true, fmt.Errorf("ATTEST seq %d holds %s, not attestation %s", a.seq, m.Subject, id)
	}
	a.envelope = m.Data
	return a, true, true, nil
}

// catchUpAttest waits until the projection has applied ATTEST up to the
// stream's last message at the time of the call, or ctx ends.
func (p *projection) catchUpAttest(ctx context.Context, js jetstream.JetStream) error {
	st, err := js.Stream(ctx, stream.Attest)
	if err != nil {
		return fmt.Errorf("look up ATTEST's last message: %w", err)
	}
	last := st.CachedInfo().State.LastSeq
	for {
		p.mu.RLock()
		done, ch := p.attestSeq >= last, p.changed
		p.mu.RUnlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("the gatekeeper has not yet read ATTEST up to seq %d: %w", last, ctx.Err())
		}
	}
}

// decided applies a decision this gatekeeper made.
func (p *projection) decided(session string, d schemas.GateDecision) {
	p.mu.Lock()
	p.applyDecision(p.session(session), d)
	p.mu.Unlock()
}

// staleness says why an attested pass no longer counts, from the entries
// after its evidence range: a later successful edit of a bound path (the
// contract's paths; any path when it names none) or a later failing run of
// the same command. It returns the reason and the next step, or "".
func (sn snapshot) staleness(v schemas.Verdict, args map[string]any) (string, string) {
	switch v.Validator {
	case "test_pass", "command_zero_exit":
	default:
		return "", ""
	}
	cmd, _ := args["command_substring"].(string)
	var paths []string
	if v.Contract != nil {
		if c := sn.contracts[v.Contract.N]; c != nil {
			paths = c.TargetFields.Paths
		}
	}
	for _, e := range sn.edits {
		if e.n <= v.Range.To {
			continue
		}
		what, bound := "", false
		if e.shell {
			if len(paths) > 0 {
				what, bound = evidence.ShellEditOf(e.command, e.written, e.unknown, paths)
			}
		} else {
			what, bound = evidence.EditOf(evidence.Entry{Done: true, Tool: "Edit", FilePath: e.path}, paths)
		}
		if bound {
			return fmt.Sprintf("%s was edited at n=%d, after the evidence (n≤%d)", what, e.n, v.Range.To),
				fmt.Sprintf("re-run `%s` after your last edit, then `claimcheck claim --claim %s --validator %s --args '%s'` and cite the new attestation", cmd, v.Claim, v.Validator, v.Args)
		}
	}
	if cmd != "" {
		for _, r := range sn.runs {
			if r.n > v.Range.To && r.failed && command.Runs(r.command, cmd) {
				return fmt.Sprintf("a later run of `%s` failed at n=%d: %s", cmd, r.n, r.summary),
					fmt.Sprintf("fix the failure, re-run `%s`, then `claimcheck claim` again", cmd)
			}
		}
	}
	return "", ""
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

// start follows LEDGER and ATTEST.
func (p *projection) start(ctx context.Context, js jetstream.JetStream) error {
	p.mu.Lock()
	p.ctx, p.anchors, p.js, p.followsAttest = ctx, ledger.NewAnchors(js), js, true
	p.mu.Unlock()
	err := follow(ctx, js, stream.Ledger, p.ledgerCaught, func(m jetstream.Msg) {
		if c, ok := subject.ChainOf(m.Subject()); ok {
			p.applyLedger(c, m.Data())
		}
	})
	if err != nil {
		return err
	}
	return follow(ctx, js, stream.Attest, p.attestCaught, func(m jetstream.Msg) {
		var at time.Time
		var seq uint64
		if meta, err := m.Metadata(); err == nil {
			at, seq = meta.Timestamp, meta.Sequence.Stream
		}
		p.applyAttestation(m.Subject(), seq, m.Data(), at)
	})
}

// caughtUp waits for the initial replay.
func (p *projection) caughtUp(ctx context.Context) error {
	for _, ch := range []chan struct{}{p.ledgerCaught, p.attestCaught} {
		select {
		case <-ch:
		case <-ctx.Done():
			return errors.New("projection: replay did not finish")
		}
	}
	return nil
}
