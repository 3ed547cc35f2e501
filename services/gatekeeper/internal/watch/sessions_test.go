package watch

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/schemas"
)

var t0 = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

func keys(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind+" "+f.Session)
	}
	return out
}

// step is one hook event at an offset from t0.
type step struct {
	host, session, event string
	at                   time.Duration
}

// TestUngatedRule drives the rule with a fake clock: each case feeds its
// events, then asks for findings at each of its checks.
func TestUngatedRule(t *testing.T) {
	type check struct {
		at   time.Duration
		want []string
	}
	tests := []struct {
		name   string
		steps  []step
		checks []check
	}{
		{
			name: "events stop mid-turn while a later session starts",
			steps: []step{{"h", "s1", "SessionStart", 0}, {"h", "s1", "UserPromptSubmit", time.Minute}, {"h", "s1", "PreToolUse", 2 * time.Minute},
				{"h", "s2", "SessionStart", 10 * time.Minute}},
			checks: []check{
				{31 * time.Minute, nil}, // 29 min since s1's last event
				{33 * time.Minute, []string{"ungated_session s1"}},
				{60 * time.Minute, nil}, // once
			},
		},
		{
			name:   "a session that never got past its start",
			steps:  []step{{"h", "s1", "SessionStart", 0}, {"h", "s2", "SessionStart", time.Minute}},
			checks: []check{{31 * time.Minute, []string{"ungated_session s1"}}},
		},
		{
			name: "a session waiting for the user after its Stop is not",
			steps: []step{{"h", "s1", "SessionStart", 0}, {"h", "s1", "UserPromptSubmit", time.Minute}, {"h", "s1", "Stop", 2 * time.Minute},
				{"h", "s1", "Notification", 3 * time.Minute}, {"h", "s2", "SessionStart", 10 * time.Minute}},
			checks: []check{{5 * time.Hour, nil}},
		},
		{
			name: "a session that ended is not",
			steps: []step{{"h", "s1", "SessionStart", 0}, {"h", "s1", "PreToolUse", time.Minute}, {"h", "s1", "SessionEnd", 2 * time.Minute},
				{"h", "s2", "SessionStart", 10 * time.Minute}},
			checks: []check{{time.Hour, nil}},
		},
		{
			name:   "no later session of the same host: not (yet)",
			steps:  []step{{"h", "s1", "SessionStart", 0}, {"h", "s1", "PreToolUse", time.Minute}, {"other", "s2", "SessionStart", 10 * time.Minute}},
			checks: []check{{time.Hour, nil}},
		},
		{
			name: "the later session started before the last event: not",
			steps: []step{{"h", "s1", "SessionStart", 0}, {"h", "s2", "SessionStart", time.Minute},
				{"h", "s1", "PreToolUse", 2 * time.Minute}},
			checks: []check{{time.Hour, nil}}, // and s2 is the host's latest
		},
		{
			name:   "a resumed session's own start does not count",
			steps:  []step{{"h", "s1", "SessionStart", 0}, {"h", "s1", "PreToolUse", time.Minute}, {"h", "s1", "SessionStart", 10 * time.Minute}},
			checks: []check{{time.Hour, nil}},
		},
		{
			name:   "without a SessionStart the session is not judged",
			steps:  []step{{"h", "s1", "PreToolUse", 0}, {"h", "s2", "SessionStart", time.Minute}},
			checks: []check{{time.Hour, nil}},
		},
		{
			name:   "claimcheck's own records are not activity",
			steps:  []step{{"h", "s1", "SessionStart", 0}, {"h", "s2", "SessionStart", time.Minute}, {"h", "s1", "GateDecision", 20 * time.Minute}},
			checks: []check{{32 * time.Minute, []string{"ungated_session s1"}}},
		},
		{
			name:   "beyond the horizon nothing is raised",
			steps:  []step{{"h", "s1", "SessionStart", 0}, {"h", "s2", "SessionStart", time.Minute}},
			checks: []check{{FindingHorizon + time.Hour, nil}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			w := New(DefaultConfig())
			for _, s := range tt.steps {
				w.Event(s.host, s.session, s.event, "e-"+s.session+"-"+s.event, t0.Add(s.at), nil)
			}
			for _, c := range tt.checks {
				clk.Set(t0.Add(c.at))
				got := w.Findings(clk.Now())
				if diff := cmp.Diff(c.want, keys(got)); diff != "" {
					t.Fatalf("at +%s (-want +got):\n%s", c.at, diff)
				}
			}
		})
	}
}

func TestDriftIsFoundOncePerSession(t *testing.T) {
	w := New(DefaultConfig())
	missing := &schemas.HookConfig{V: 1, Verdict: schemas.HooksMissing, Missing: []string{"Stop"}, Reasons: []string{"1 of 15"}}
	w.Event("h", "s1", "SessionStart", "e1", t0, &schemas.HookConfig{V: 1, Verdict: schemas.HooksGated})
	if got := w.Findings(t0); len(got) != 0 {
		t.Fatalf("gated start: %v", keys(got))
	}
	w.Event("h", "s2", "SessionStart", "e2", t0, missing)
	w.Event("h", "s2", "SessionStart", "e3", t0.Add(time.Minute), missing) // resumed: same session
	got := w.Findings(t0.Add(time.Minute))
	if diff := cmp.Diff([]string{"hook_config_drift s2"}, keys(got)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if f := got[0]; f.EventID != "e2" || f.Host != "h" || !strings.Contains(f.Message(time.Hour), "1 of 15 claimcheck events unhandled (Stop)") {
		t.Fatalf("finding %+v: %s", f, f.Message(time.Hour))
	}
	w.Event("h", "s2", "SessionStart", "e4", t0.Add(2*time.Minute), missing)
	if got := w.Findings(t0.Add(2 * time.Minute)); len(got) != 0 {
		t.Fatalf("raised twice: %v", keys(got))
	}
	// A finding already in the ledger (read on replay) is not raised again.
	w.Event("h", "s3", "SessionStart", "e5", t0, &schemas.HookConfig{V: 1, Verdict: schemas.HooksNone})
	w.Found(schemas.FindingHookConfigDrift, "s3")
	if got := w.Findings(t0); len(got) != 0 {
		t.Fatalf("a recorded finding raised again: %v", keys(got))
	}
	// A drifted start older than the horizon (an old ledger replayed) is not raised.
	w.Event("h", "s4", "SessionStart", "e6", t0, &schemas.HookConfig{V: 1, Verdict: schemas.HooksChanged})
	if got := w.Findings(t0.Add(FindingHorizon + time.Minute)); len(got) != 0 {
		t.Fatalf("an old drift raised: %v", keys(got))
	}
}
