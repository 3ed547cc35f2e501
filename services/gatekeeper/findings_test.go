package gatekeeper_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper"
)

func (f *flow) sessionStart(session string, cfg *schemas.HookConfig, at time.Time) {
	f.t.Helper()
	e := f.entry(session, schemas.EntryEvent, schemas.HookSessionStart, "",
		fmt.Sprintf(`{"session_id":%q,"transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}`, session))
	e.HookConfig, e.ReceivedAt = cfg, at.UTC().Format(time.RFC3339Nano)
	f.append(session, e)
}

func (f *flow) event(session, hookEvent string, at time.Time) {
	f.t.Helper()
	e := f.entry(session, schemas.EntryEvent, hookEvent, "", fmt.Sprintf(`{"session_id":%q,"hook_event_name":%q}`, session, hookEvent))
	e.ReceivedAt = at.UTC().Format(time.RFC3339Nano)
	f.append(session, e)
}

// findings returns the finding records in INTAKE (at least want), each
// checked against the gatekeeper's keys.
func (f *flow) findings(want int) []schemas.FindingRecord {
	f.t.Helper()
	var out []schemas.FindingRecord
	for _, env := range f.intake(schemas.GateFindingEvent, want) {
		var rec schemas.FindingRecord
		if err := json.Unmarshal(env.Payload, &rec); err != nil {
			f.t.Fatal(err)
		}
		if err := f.keys.VerifyFinding(rec); err != nil {
			f.t.Fatalf("finding does not verify: %v\n%s", err, env.Payload)
		}
		if env.SessionID != rec.Finding.SessionID || env.EventID != rec.Finding.FindingID {
			f.t.Fatalf("finding recorded in %s as %s: %+v", env.SessionID, env.EventID, rec.Finding)
		}
		out = append(out, rec)
	}
	return out
}

// A SessionStart showing claimcheck's hooks missing leads to one signed
// hook_config_drift finding in its session's chain; a gated one to none.
func TestHookConfigDriftIsASignedFindingOncePerSession(t *testing.T) {
	f := newFlow(t, nil)
	now := time.Now()
	gated := &schemas.HookConfig{V: 1, Verdict: schemas.HooksGated, Layers: []schemas.HookLayer{}}
	missing := &schemas.HookConfig{V: 1, Verdict: schemas.HooksNone, Missing: []string{"SessionStart", "Stop"},
		Reasons: []string{"the claimcheck-hook handlers in /p/.claude/settings.json do not run: disableAllHooks in /p/.claude/settings.local.json"},
		Layers:  []schemas.HookLayer{}}
	f.sessionStart("sess-ok", gated, now)
	f.sessionStart("sess-drift", missing, now)
	f.sessionStart("sess-drift", missing, now.Add(time.Second)) // resumed
	f.findings(1)
	time.Sleep(3 * time.Second) // two more rounds of the findings loop: nothing more
	recs := f.findings(1)
	if len(recs) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(recs), recs)
	}
	g := recs[0].Finding
	if g.Kind != schemas.FindingHookConfigDrift || g.SessionID != "sess-drift" || g.Host != "laptop" || g.Verdict != schemas.HooksNone ||
		!slices.Equal(g.Missing, missing.Missing) || !slices.Equal(g.Reasons, missing.Reasons) || g.EventID == "" {
		t.Fatalf("finding %+v", g)
	}
	// An edited finding no longer verifies.
	recs[0].Finding.Verdict = schemas.HooksGated
	if err := f.keys.VerifyFinding(recs[0]); err == nil {
		t.Fatal("an edited finding verified")
	}
}

// A session whose events stopped mid-turn, while a later session of its
// host started, is found ungated once gatekeeper.ungated_after has passed
// on the gatekeeper's clock.
func TestUngatedSessionIsAFinding(t *testing.T) {
	clk := clock.NewFake(time.Now().Add(time.Minute)) // after the key newFlowAt registers
	f := newFlowAt(t, func(c *gatekeeper.Config) { c.UngatedAfter = 10 * time.Minute }, clk)
	t0 := clk.Now()
	f.sessionStart("sess-1", nil, t0)
	f.event("sess-1", schemas.HookUserPromptSubmit, t0.Add(time.Second))
	f.event("sess-1", schemas.HookPreToolUse, t0.Add(2*time.Second))
	f.sessionStart("sess-2", nil, t0.Add(time.Minute))
	f.event("sess-2", schemas.HookStop, t0.Add(2*time.Minute))
	f.head("sess-2")
	clk.Set(t0.Add(9 * time.Minute))
	time.Sleep(2 * findingsRound)
	if n := len(f.intake(schemas.GateFindingEvent, 0)); n != 0 {
		t.Fatalf("%d findings before ungated_after", n)
	}
	clk.Set(t0.Add(11 * time.Minute))
	f.findings(1)
	time.Sleep(2 * findingsRound)
	recs := f.findings(1)
	if len(recs) != 1 {
		t.Fatalf("%d findings, want 1", len(recs))
	}
	g := recs[0].Finding
	if g.Kind != schemas.FindingUngated || g.SessionID != "sess-1" || g.LastEventAt == "" || g.NextStartAt == "" {
		t.Fatalf("finding %+v", g)
	}
}

const findingsRound = 1100 * time.Millisecond
