// Package outcome tells how a session's last turn ended, from its ledger
// chain: whether the gate let its last stop through because the claims
// were backed, or for another reason (the block cap, an operator's
// override, an unreachable gate), or never decided it. The agent CLI's own
// exit status cannot tell: Claude Code ends a turn "success" whatever the
// gate said.
package outcome

import (
	"slices"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/subject"

	"github.com/claimcheck/claimcheck/schemas"
)

// Kind names an outcome.
type Kind string

// The outcomes, best first.
const (
	// Verified: the gate let the last stop through on its own terms (its
	// claims backed, or no claims made).
	Verified Kind = "verified"
	// Overridden: an operator's override let the last stop through.
	Overridden Kind = "overridden"
	// Capped: the gate had blocked the turn's stops up to its cap and let
	// the last one through, NOT verified.
	Capped Kind = "not verified (capped)"
	// Blocked: the last stop was blocked and the turn ended anyway (the
	// agent CLI's own cap, or the user).
	Blocked Kind = "not verified (blocked)"
	// Unreachable: the gate could not be reached for the last stop; the
	// hook blocked it, let it through at its cap, or (fail-open) allowed it.
	Unreachable Kind = "gate unreachable"
	// Ungated: the last stop has no gate decision recorded (the hook runs
	// without the gate, or its decision never reached the ledger).
	Ungated Kind = "ungated"
	// Open: no stop is recorded yet.
	Open Kind = "no stop yet"
)

// Outcome is how a session's last turn ended.
type Outcome struct {
	Kind Kind `json:"outcome"`
	// Verified is true for Verified only.
	Verified bool `json:"verified"`
	// StopN is the ledger position of the last Stop event (0: none).
	StopN uint64 `json:"stop_n,omitempty"`
	// DecisionN is the position of its decision record (0: none).
	DecisionN uint64 `json:"decision_n,omitempty"`
	// Rule and Why come from the decision: its rule, and its reason or,
	// for a stop let through, its systemMessage.
	Rule string `json:"rule,omitempty"`
	Why  string `json:"why,omitempty"`
	// Findings are the kinds of the gatekeeper's findings about the
	// session (schemas.FindingHookConfigDrift, schemas.FindingUngated), in
	// the order recorded. They do not change Kind: a session can be
	// verified turn by turn and still have started without all its hooks.
	Findings []string `json:"findings,omitempty"`
}

// Tracker follows a session's chain, entry by entry in order.
type Tracker struct {
	stopN     uint64
	stopEvent string
	decision  *schemas.GateDecision
	decisionN uint64
	findings  []string
}

// Observe takes the next entry of the chain.
func (t *Tracker) Observe(e schemas.Entry) {
	if e.Kind != schemas.EntryEvent {
		return
	}
	switch e.HookEvent {
	case schemas.GateFindingEvent:
		var r schemas.FindingRecord
		if e.Payload == nil || !strings.HasPrefix(e.Origin, subject.OriginGatekeeper+":") ||
			json.Unmarshal([]byte(*e.Payload), &r, json.RejectUnknownMembers(false)) != nil {
			return
		}
		if k := r.Finding.Kind; k != "" && !slices.Contains(t.findings, k) {
			t.findings = append(t.findings, k)
		}
	case schemas.HookStop:
		t.stopN, t.stopEvent = e.N, e.EventID
		t.decision, t.decisionN = nil, 0
	case schemas.GateDecisionEvent:
		if e.Payload == nil {
			return
		}
		var r schemas.GateRecord
		if json.Unmarshal([]byte(*e.Payload), &r, json.RejectUnknownMembers(false)) != nil {
			return
		}
		d := r.Decision
		if d.HookEvent != schemas.HookStop || d.EventID == "" || d.EventID != t.stopEvent {
			return // another event's decision, or one that names no stop
		}
		t.decision, t.decisionN = &d, e.N
	}
}

// Outcome is how the last turn observed ended.
func (t *Tracker) Outcome() Outcome {
	o := Outcome{StopN: t.stopN, DecisionN: t.decisionN, Findings: slices.Clone(t.findings)}
	d := t.decision
	switch {
	case t.stopN == 0:
		o.Kind = Open
		return o
	case d == nil:
		o.Kind = Ungated
		return o
	}
	o.Rule, o.Why = d.Rule, d.Reason
	if d.Decision == schemas.GateAllow && d.SystemMessage != "" {
		o.Why = d.SystemMessage
	}
	switch {
	case d.Rule == schemas.RuleHookFailClosed || d.Rule == schemas.RuleHookFailOpen || d.Rule == schemas.RuleHookBlockCap ||
		d.Rule == schemas.RuleHTTPFailClosed:
		o.Kind = Unreachable
	case d.Decision != schemas.GateAllow:
		o.Kind = Blocked
	case d.Capped:
		o.Kind = Capped
	case d.Override != "":
		o.Kind = Overridden
	default:
		o.Kind, o.Verified = Verified, true
	}
	return o
}

// Of is the outcome of a whole chain.
func Of(entries []schemas.Entry) Outcome {
	var t Tracker
	for _, e := range entries {
		t.Observe(e)
	}
	return t.Outcome()
}
