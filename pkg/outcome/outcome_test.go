package outcome

import (
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/schemas"
)

// entries builds a session's chain from steps: a Stop event, or a Stop
// decision (for the last stop unless it names another event).
type step struct {
	stop bool
	d    schemas.GateDecision
}

func entries(t *testing.T, steps ...step) []schemas.Entry {
	t.Helper()
	var out []schemas.Entry
	n := uint64(0)
	stopID := ""
	add := func(e schemas.Entry) {
		n++
		e.N, e.V, e.Kind = n, 1, schemas.EntryEvent
		out = append(out, e)
	}
	add(schemas.Entry{HookEvent: schemas.HookUserPromptSubmit, EventID: "p1"})
	for i, s := range steps {
		if s.stop {
			stopID = "stop-" + string(rune('a'+i))
			add(schemas.Entry{HookEvent: schemas.HookStop, EventID: stopID})
			continue
		}
		d := s.d
		d.HookEvent = schemas.HookStop
		if d.EventID == "" {
			d.EventID = stopID
		}
		raw, err := json.Marshal(schemas.GateRecord{SessionID: "s", HookEvent: schemas.GateDecisionEvent, Decision: d})
		if err != nil {
			t.Fatal(err)
		}
		p := string(raw)
		add(schemas.Entry{HookEvent: schemas.GateDecisionEvent, EventID: "d-" + string(rune('a'+i)), Payload: &p})
	}
	return out
}

func TestOutcomeOfTheLastStop(t *testing.T) {
	stop := step{stop: true}
	dec := func(decision, rule string, f ...func(*schemas.GateDecision)) step {
		d := schemas.GateDecision{Decision: decision, Rule: rule, Reason: "why", SystemMessage: "msg"}
		for _, fn := range f {
			fn(&d)
		}
		return step{d: d}
	}
	capped := func(d *schemas.GateDecision) { d.Capped = true }
	override := func(d *schemas.GateDecision) { d.Override = "01KAB0V0000000000000000001" }
	otherEvent := func(d *schemas.GateDecision) { d.EventID = "some-earlier-stop" }
	for _, tc := range []struct {
		name     string
		steps    []step
		want     Kind
		verified bool
		why      string
	}{
		{"no stop", nil, Open, false, ""},
		{"stop without a decision", []step{stop}, Ungated, false, ""},
		{"allowed", []step{stop, dec("block", "stop.final_block_missing"), stop, dec("allow", "stop.allowed")}, Verified, true, "msg"},
		{"blocked last", []step{stop, dec("allow", "stop.allowed"), stop, dec("block", "stop.final_block_missing")}, Blocked, false, "why"},
		{"capped", []step{stop, dec("allow", "stop.block_cap", capped)}, Capped, false, "msg"},
		{"overridden", []step{stop, dec("allow", "stop.override", override)}, Overridden, false, "msg"},
		{"hook failed closed", []step{stop, dec("block", schemas.RuleHookFailClosed)}, Unreachable, false, "why"},
		{"hook capped", []step{stop, dec("allow", schemas.RuleHookBlockCap, capped)}, Unreachable, false, "msg"},
		{"hook failed open", []step{stop, dec("allow", schemas.RuleHookFailOpen)}, Unreachable, false, "msg"},
		{"http endpoint failed closed", []step{stop, dec("block", schemas.RuleHTTPFailClosed)}, Unreachable, false, "why"},
		{"a later stop is not decided", []step{stop, dec("allow", "stop.allowed"), stop}, Ungated, false, ""},
		{"a decision for another stop", []step{stop, dec("allow", "stop.allowed", otherEvent)}, Ungated, false, ""},
	} {
		o := Of(entries(t, tc.steps...))
		if o.Kind != tc.want || o.Verified != tc.verified || o.Why != tc.why {
			t.Errorf("%s: %+v, want %q verified=%v why %q", tc.name, o, tc.want, tc.verified, tc.why)
		}
		if tc.want != Open && o.StopN == 0 {
			t.Errorf("%s: no stop position", tc.name)
		}
	}
}

// A decision record the tracker cannot read changes nothing (it is a
// ledger entry ingest accepted; its payload is the gatekeeper's or the
// hook's, but the outcome must not panic on anything).
func TestUnreadableDecisionsAreIgnored(t *testing.T) {
	es := entries(t, step{stop: true}, step{d: schemas.GateDecision{Decision: "allow", Rule: "stop.allowed"}})
	bad := `{"decision":"not an object"}`
	es = append(es, schemas.Entry{V: 1, Kind: schemas.EntryEvent, N: 9, HookEvent: schemas.GateDecisionEvent, Payload: &bad},
		schemas.Entry{V: 1, Kind: schemas.EntryEvent, N: 10, HookEvent: schemas.GateDecisionEvent})
	if o := Of(es); o.Kind != Verified {
		t.Fatalf("%+v", o)
	}
}

func FuzzTrackerNeverPanics(f *testing.F) {
	f.Add([]byte(`{"decision":{"hook_event_name":"Stop","event_id":"x","decision":"allow"}}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		p := string(payload)
		var tr Tracker
		tr.Observe(schemas.Entry{Kind: schemas.EntryEvent, N: 1, HookEvent: schemas.HookStop, EventID: "x"})
		tr.Observe(schemas.Entry{Kind: schemas.EntryEvent, N: 2, HookEvent: schemas.GateDecisionEvent, Payload: &p})
		o := tr.Outcome()
		if o.Verified != (o.Kind == Verified) {
			t.Fatalf("verified %v for %q", o.Verified, o.Kind)
		}
	})
}

// The gatekeeper's findings are listed beside the outcome; a finding
// record a host published (not a gatekeeper) is not.
func TestFindingsAreListed(t *testing.T) {
	rec := func(kind, origin string) schemas.Entry {
		raw, _ := json.Marshal(schemas.FindingRecord{SessionID: "s", HookEvent: schemas.GateFindingEvent,
			Finding: schemas.GateFinding{V: 1, Kind: kind, SessionID: "s"}})
		p := string(raw)
		return schemas.Entry{V: 1, Kind: schemas.EntryEvent, HookEvent: schemas.GateFindingEvent, Origin: origin, Payload: &p}
	}
	chain := append(entries(t, step{stop: true}, step{d: schemas.GateDecision{Decision: schemas.GateAllow}}),
		rec(schemas.FindingHookConfigDrift, "gatekeeper:gk1"), rec(schemas.FindingUngated, "hook:laptop"),
		rec(schemas.FindingHookConfigDrift, "gatekeeper:gk2"))
	o := Of(chain)
	if o.Kind != Verified || len(o.Findings) != 1 || o.Findings[0] != schemas.FindingHookConfigDrift {
		t.Fatalf("outcome %+v", o)
	}
}
