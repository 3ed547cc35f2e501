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

	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/dialect"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/policy"
	"github.com/claimcheck/claimcheck/pkg/transparency"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/finalblock"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/stopgate"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/view"
)

// decideStop answers a Stop (or SubagentStop).
func (s *Service) decideStop(ctx context.Context, req schemas.GateRequest) schemas.GateDecision {
	d := s.base(req)
	var p stopPayload
	if err := json.Unmarshal(req.Payload, &p, json.RejectUnknownMembers(false)); err != nil {
		d.Decision, d.Rule, d.Reason = schemas.GateBlock, "request.invalid", "claimcheck could not read the Stop payload: "+err.Error()
		return d
	}
	wctx, cancel := context.WithTimeout(ctx, s.cfg.StopWait)
	snap := s.view.WaitStop(wctx, req.SessionID, req.EventID)
	cancel()
	return s.judgeStop(ctx, d, req, snap, p)
}

// stopPayload is what the Stop gate reads of a Stop event.
type stopPayload struct {
	LastAssistantMessage *string `json:"last_assistant_message"`
	StopHookActive       bool    `json:"stop_hook_active"`
	Agent                string  `json:"agent"` // the dialect's name, set by the hook for agents other than Claude Code
}

func (p stopPayload) message() string {
	if p.LastAssistantMessage == nil {
		return ""
	}
	return *p.LastAssistantMessage
}

// noMessage says the agent's stop event carries no final message at all
// (not an empty one): Cursor's stop and Copilot's agentStop.
func (p stopPayload) noMessage() bool {
	return p.LastAssistantMessage == nil && !dialect.StopCarriesMessage(dialect.Agent(p.Agent))
}

// shellWord quotes s for a POSIX shell unless it needs no quoting.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// judgeStop decides a Stop against a snapshot of its session; ctx bounds
// the look-ups of the attestations it cites.
func (s *Service) judgeStop(ctx context.Context, d schemas.GateDecision, req schemas.GateRequest, snap view.Snapshot,
	p stopPayload) schemas.GateDecision {
	message, stopHookActive := p.message(), p.StopHookActive
	d.LedgerHead = snap.Head
	switch {
	case snap.Broken != nil:
		// Checked first: nothing after the fault is applied, so the stop
		// event itself would never be seen.
		d.Decision, d.Rule = schemas.GateBlock, "stop.ledger_broken"
		d.Reason = "claimcheck blocked this stop: this session's ledger chain does not verify (" + snap.Broken.Error() +
			"); no evidence in it can be trusted\nNext step: tell the human; an operator must investigate (`claimcheck ledger verify`) " +
			"and may override (`claimcheck gate override`)"
		return d
	case !snap.StopSeen:
		d.Decision, d.Rule = schemas.GateBlock, "stop.evidence_not_recorded"
		d.Reason = fmt.Sprintf(
			"claimcheck blocked this stop: the stop event %s did not reach the ledger within %s, so the evidence cannot be checked (fail closed)\nNext step: stop again in a moment; if this repeats, check that claimcheck ingest is running", req.EventID, s.cfg.StopWait)
		return d
	}
	in := stopgate.Input{
		Message:  finalblock.Parse(message),
		Contract: snap.Contract, ContractN: snap.ContractN,
		Evidence:       &sessionEvidence{s: s, session: req.SessionID, snap: snap},
		StopHookActive: stopHookActive, ConsecutiveBlocks: snap.Blocks, Cap: s.cfg.StopBlockCap,
		Override: snap.Override, OverrideReason: snap.OverrideReason, Policy: s.claims,
	}
	if !dialect.CommandsKnowSession(dialect.Agent(p.Agent)) {
		in.ClaimCommand = "claimcheck claim --session " + shellWord(req.SessionID)
	}
	if p.noMessage() {
		in.NoMessage = true
		for _, pass := range snap.Passes(snap.ContractN) {
			in.Passes = append(in.Passes, stopgate.Pass{ID: pass.ID, Claim: pass.Claim})
		}
	}
	if c := snap.Contract; c != nil {
		if what, n, ok := snap.Changed(snap.ContractN, c.TargetFields.Paths); ok {
			in.Changed = fmt.Sprintf("%s at n=%d", what, n)
		}
	}
	if f, ok := snap.FailingRun(); ok {
		in.FailingRun = &stopgate.Run{N: f.N, Command: f.Command, Summary: f.Summary}
	}
	r := stopgate.Decide(ctx, in)
	d.Decision, d.Rule, d.Reasons, d.NextStep = r.Decision, r.Rule, r.Reasons, r.NextStep
	d.Reason, d.SystemMessage, d.Capped, d.Override = r.Reason(), r.SystemMessage, r.Capped, r.Override
	d.ConsecutiveBlocks = snap.Blocks
	if r.Decision == schemas.GateBlock {
		d.ConsecutiveBlocks++
	}
	return d
}

// countAttRead counts where a cited attestation's envelope came from (the
// replay command runs without metrics).
func (s *Service) countAttRead(from string) {
	if s.m != nil {
		s.m.attReads.WithLabelValues(from).Inc()
	}
}

// sessionEvidence looks up cited attestations for one Stop.
type sessionEvidence struct {
	s       *Service
	session string
	snap    view.Snapshot
}

// Attestation looks a cited attestation up (within 2 s of ctx: the view may
// wait to catch up with ATTEST, or read the envelope back) and checks it.
func (e *sessionEvidence) Attestation(ctx context.Context, attID string) (stopgate.Attestation, error) {
	var a stopgate.Attestation
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	stored, ok, err := e.s.view.Attestation(lctx, attID)
	switch {
	case !ok && err != nil:
		e.s.countAttRead("failed")
		return a, fmt.Errorf("it could not be looked up: %w", err)
	case !ok:
		return a, errors.New("no such attestation in ATTEST (use the id `claimcheck claim` printed with PASS)")
	case err != nil:
		e.s.countAttRead("failed")
		return a, fmt.Errorf("it could not be read back: %w", err)
	case stored.FromStream:
		e.s.countAttRead("stream")
	default:
		e.s.countAttRead("memory")
	}
	if stored.Session != e.session {
		return a, errors.New("it belongs to another session")
	}
	c, err := attest.Verify(e.s.keySet(), stored.Envelope, stored.StoredAt)
	if err != nil {
		return a, fmt.Errorf("it does not verify: %w", err)
	}
	v := c.Statement.Predicate.Verdict
	if v.SessionID != e.session || v.Verdict != schemas.Pass || c.Statement.Predicate.AttestationID != attID {
		return a, errors.New("its statement does not attest a PASS of this session under this id")
	}
	pol, err := e.s.policies.get(ctx, v.Policy.Digest)
	if err != nil {
		return a, fmt.Errorf("its policy %s (%s): %w", v.Policy.Version, v.Policy.Digest, err)
	}
	if ok, allowed := pol.Allowed(v.Claim, v.Validator); !ok {
		return a, fmt.Errorf("policy %s does not let %s back a %s claim (allowed: %s)", pol.Version, v.Validator, v.Claim,
			strings.Join(allowed, ", "))
	}
	if e.s.cfg.RequireCheckpoint {
		if err := e.s.covered(ctx, attID); err != nil {
			return a, err
		}
	}
	a = stopgate.Attestation{ID: attID, Claim: v.Claim, Validator: v.Validator, Args: string(v.Args)}
	if v.Contract != nil {
		a.Contract = v.Contract.N
	}
	a.Stale, a.NextStep = e.snap.Staleness(v)
	return a, nil
}

// covered reports whether a checkpoint of the ledger's Merkle tree covers
// the verdict of attestation attID (gatekeeper.require_checkpoint). The
// checkpoint is read as the rotator stored it (only the rotator writes the
// bucket); ledger verify checks its signatures and the ledger against it.
func (s *Service) covered(ctx context.Context, attID string) error {
	seq, ok := s.view.VerdictSeq(attID)
	if !ok {
		return errors.New("its verdict is not in this gatekeeper's view of the ledger yet; stop again in a moment")
	}
	origin, err := transparency.ReadOrigin(ctx, s.tlog)
	if err != nil {
		return fmt.Errorf("no checkpoint of the ledger's Merkle tree yet (gatekeeper.require_checkpoint): %w", err)
	}
	signed, _, err := transparency.Latest(ctx, s.tlog)
	if err != nil {
		return fmt.Errorf("no checkpoint of the ledger's Merkle tree yet (gatekeeper.require_checkpoint): %w", err)
	}
	cp, err := transparency.ParseUnverified(signed, origin)
	if err != nil {
		return fmt.Errorf("the newest checkpoint: %w", err)
	}
	if int64(seq) > cp.Tree.N {
		return fmt.Errorf("its verdict (LEDGER message %d) is not covered by a checkpoint of the ledger's Merkle tree yet "+
			"(the newest covers %d; gatekeeper.require_checkpoint): stop again after the next checkpoint", seq, cp.Tree.N)
	}
	return nil
}

// policyCache holds registered claim policies by digest (write-once in the
// policies bucket, so a cached entry never changes).
type policyCache struct {
	kv jetstream.KeyValue
	mu sync.Mutex
	m  map[string]*policy.Policy
	v  *validation.Validator
}

func newPolicyCache(kv jetstream.KeyValue) *policyCache {
	v, _ := validation.New()
	return &policyCache{kv: kv, m: map[string]*policy.Policy{}, v: v}
}

func (c *policyCache) get(ctx context.Context, dig string) (*policy.Policy, error) {
	c.mu.Lock()
	p := c.m[dig]
	c.mu.Unlock()
	if p != nil {
		return p, nil
	}
	e, err := c.kv.Get(ctx, "digest."+digest.Hex(dig))
	if err != nil {
		return nil, fmt.Errorf("not registered: %w", err)
	}
	p, err = policy.Load("registered policy "+dig, e.Value(), c.v)
	if err != nil {
		return nil, err
	}
	if p.Digest != dig {
		return nil, fmt.Errorf("registered bytes have digest %s", p.Digest)
	}
	c.mu.Lock()
	c.m[dig] = p
	c.mu.Unlock()
	return p, nil
}

// stopAtLevel lets a stop through at CONTAIN and HALT: the agent may not
// use tools any more, so a block (keep working) cannot be acted on; the
// turn ends, and the user is told why and that its claims are NOT
// verified. A stop the gate could not judge (its event not yet in the
// view, a broken chain, an unreadable request) stays blocked, as at any
// level: nothing is allowed on a head that does not hold its own event.
func (s *Service) stopAtLevel(d *schemas.GateDecision, lv effective) {
	l := lv.level()
	if lv.unavailable != nil || (l != schemas.LevelContain && l != schemas.LevelHalt) {
		return
	}
	switch d.Rule {
	case "stop.evidence_not_recorded", "stop.ledger_broken", "request.invalid":
		return
	}
	d.Decision, d.Rule, d.Reason, d.Reasons, d.NextStep = schemas.GateAllow, schemas.RuleLevelEnforced, "", nil, ""
	d.SystemMessage = addLine(d.SystemMessage, changeMessage(lv.LevelState)+
		" The agent was stopped: this turn ends here and its claims are NOT verified.")
}
