package anomaly_test

import (
	"strings"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/anomaly"
)

func TestSustainedDeviationIsAnAnomaly(t *testing.T) {
	cfg := anomaly.DefaultConfig()
	cfg.MinWindows = 10
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		agent    string // the odd session's agent type
		busy     int    // its windows of 60 tool calls in a row
		want     int
		whatSays string
	}{
		{"three busy windows", "claude-code", 3, 1, "tool_calls 60"},
		{"two busy windows", "claude-code", 2, 0, ""},
		{"six busy windows", "claude-code", 6, 2, "tool_calls 60"},
		{"another agent type has no baseline yet", "codex", 3, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := anomaly.New(cfg)
			// The baseline: 4 sessions, 6 windows each, 3-5 tool calls per window.
			for i := range 4 {
				for w := range 7 {
					for c := range 3 + (i+w)%3 {
						m.Observe("claude-code", "base-"+string(rune('a'+i)), anomaly.ToolCalls, 1,
							t0.Add(time.Duration(w)*time.Minute+time.Duration(c)*time.Second))
					}
				}
			}
			at := t0.Add(20 * time.Minute)
			for w := range tc.busy {
				for c := range 60 {
					m.Observe(tc.agent, "odd", anomaly.ToolCalls, 1, at.Add(time.Duration(w)*time.Minute+time.Duration(c)*100*time.Millisecond))
				}
			}
			// A calm window after them.
			m.Observe(tc.agent, "odd", anomaly.ToolCalls, 1, at.Add(time.Duration(tc.busy)*time.Minute))
			got := m.Tick(at.Add(time.Hour), at)
			if len(got) != tc.want {
				t.Fatalf("%d anomalies, want %d: %+v", len(got), tc.want, got)
			}
			for _, a := range got {
				if a.Session != "odd" || !strings.Contains(a.Detail, tc.whatSays) {
					t.Errorf("anomaly %+v", a)
				}
			}
		})
	}
}

func TestTickClosesQuietSessionsAndSkipsOldAnomalies(t *testing.T) {
	cfg := anomaly.DefaultConfig()
	cfg.MinWindows, cfg.Sustain = 2, 1
	m := anomaly.New(cfg)
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for w := range 3 {
		m.Observe("claude-code", "calm", anomaly.OutputBytes, 100, t0.Add(time.Duration(w)*time.Minute))
	}
	m.Observe("claude-code", "loud", anomaly.OutputBytes, 1<<20, t0.Add(5*time.Minute))
	// The loud window is closed by Tick (the session went quiet).
	if got := m.Tick(t0.Add(7*time.Minute), t0); len(got) != 1 || got[0].Session != "loud" || got[0].End != t0.Add(6*time.Minute) {
		t.Fatalf("anomalies %+v", got)
	}
	// One found before the horizon raises nothing.
	m.Observe("claude-code", "loud2", anomaly.OutputBytes, 1<<20, t0.Add(8*time.Minute))
	if got := m.Tick(t0.Add(30*time.Minute), t0.Add(20*time.Minute)); len(got) != 0 {
		t.Fatalf("an old anomaly was reported: %+v", got)
	}
}
