package level_test

import (
	"strings"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/level"
)

func TestEscalate(t *testing.T) {
	c := level.DefaultConfig()
	c.Crashes = schemas.LevelRestrict
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		start  schemas.LevelState
		events []level.Event
		want   string
		rule   string
	}{
		{"two denials", schemas.LevelState{}, []level.Event{{Kind: level.Denial}, {Kind: level.Denial}}, schemas.LevelNormal, ""},
		{"three denials", schemas.LevelState{}, []level.Event{{Kind: level.Denial}, {Kind: level.Denial}, {Kind: level.Denial}},
			schemas.LevelContain, schemas.RuleLevelDenials},
		{"medium injection", schemas.LevelState{}, []level.Event{{Kind: level.Injection}}, schemas.LevelRestrict, schemas.RuleLevelInjection},
		{"high injection", schemas.LevelState{}, []level.Event{{Kind: level.Injection, High: true}}, schemas.LevelCheckpoint,
			schemas.RuleLevelInjection},
		{"three injections", schemas.LevelState{}, []level.Event{{Kind: level.Injection}, {Kind: level.Injection}, {Kind: level.Injection}},
			schemas.LevelContain, schemas.RuleLevelInjection},
		{"never lowers", schemas.LevelState{Level: schemas.LevelContain, Rule: schemas.RuleLevelOperator},
			[]level.Event{{Kind: level.Injection}}, schemas.LevelContain, schemas.RuleLevelOperator},
		{"crashes", schemas.LevelState{}, []level.Event{{Kind: level.Crashes}}, schemas.LevelRestrict, schemas.RuleLevelCrashes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.start
			for _, ev := range tc.events {
				ev.At, ev.By = now, "gk"
				c.Escalate(&st, ev)
			}
			if st.Level != tc.want || st.Rule != tc.rule {
				t.Errorf("level %s rule %s, want %s %s (%+v)", st.Level, st.Rule, tc.want, tc.rule, st)
			}
		})
	}
}

// TestContainedSessionsHaltTheHost: the contained rule counts distinct
// sessions within its window, and is off by default.
func TestContainedSessionsHaltTheHost(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	contained := func(c level.Config, sessions []string, gaps []time.Duration) schemas.LevelState {
		var st schemas.LevelState
		at := now
		for i, s := range sessions {
			at = at.Add(gaps[i])
			c.Escalate(&st, level.Event{Kind: level.Contained, Key: s, Detail: "3 denials", At: at, By: "gk"})
		}
		return st
	}
	c := level.DefaultConfig()
	three, none := []string{"s1", "s2", "s3"}, []time.Duration{0, time.Minute, time.Minute}
	if st := contained(c, three, none); st.Level != schemas.LevelNormal || len(st.Contained) != 3 {
		t.Errorf("off by default: %+v", st)
	}
	c.ContainedLevel = schemas.LevelHalt
	if st := contained(c, three, none); st.Level != schemas.LevelHalt || st.Rule != schemas.RuleLevelContained ||
		!strings.Contains(st.Cause, "3 sessions of this host were contained within 1h0m0s") || !strings.Contains(st.Cause, "session s3") {
		t.Errorf("three sessions: %+v", st)
	}
	if st := contained(c, []string{"s1", "s1", "s1"}, none); st.Level != schemas.LevelNormal || len(st.Contained) != 1 {
		t.Errorf("one session reported three times: %+v", st)
	}
	if st := contained(c, three, []time.Duration{0, 40 * time.Minute, 40 * time.Minute}); st.Level != schemas.LevelNormal ||
		len(st.Contained) != 2 {
		t.Errorf("the first outside the window when the third comes: %+v", st)
	}
	st := contained(c, three, none)
	if !level.Set(&st, schemas.LevelNormal, "reviewed", "alice", "gk", now) || st.Contained != nil {
		t.Errorf("a lift keeps the contained sessions: %+v", st)
	}
}

func TestOffRuleAndSet(t *testing.T) {
	c := level.DefaultConfig()
	c.DenialsLevel = schemas.LevelNormal // off
	st := schemas.LevelState{}
	for range 5 {
		if c.Escalate(&st, level.Event{Kind: level.Denial}) {
			t.Fatalf("a rule at NORMAL raised the level: %+v", st)
		}
	}
	st.Level = schemas.LevelContain
	if !level.Set(&st, schemas.LevelNormal, "reviewed", "alice", "gk", time.Now()) || st.Denials != 0 || st.Operator != "alice" {
		t.Errorf("lift: %+v", st)
	}
	if level.Set(&st, schemas.LevelNormal, "again", "alice", "gk", time.Now()) {
		t.Error("setting the same level reported a change")
	}
}

func TestEnforce(t *testing.T) {
	for _, tc := range []struct{ level, tool, want string }{
		{schemas.LevelNormal, "Bash", ""},
		{schemas.LevelRestrict, "Read", ""},
		{schemas.LevelRestrict, "WebFetch", ""},
		{schemas.LevelRestrict, "Bash", schemas.GateDeny},
		{schemas.LevelRestrict, "Write", schemas.GateDeny},
		{schemas.LevelRestrict, "mcp__github__create_issue", schemas.GateDeny},
		{schemas.LevelCheckpoint, "Edit", schemas.GateAsk},
		{schemas.LevelCheckpoint, "Grep", ""},
		{schemas.LevelContain, "Read", schemas.GateDeny},
		{schemas.LevelHalt, "Glob", schemas.GateDeny},
	} {
		if got := level.Enforce(tc.level, tc.tool); got != tc.want {
			t.Errorf("Enforce(%s, %s) = %q, want %q", tc.level, tc.tool, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := level.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	c := level.DefaultConfig()
	c.DenialsLevel, c.Injections, c.ContainedLevel, c.ContainedWindow = "LOCKDOWN", 0, "PANIC", 0
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "gatekeeper.levels.denials_level \"LOCKDOWN\"") ||
		!strings.Contains(err.Error(), "gatekeeper.levels.injections 0") ||
		!strings.Contains(err.Error(), "gatekeeper.levels.contained_level \"PANIC\"") ||
		!strings.Contains(err.Error(), "gatekeeper.levels.contained_window 0s") {
		t.Errorf("bad config: %v", err)
	}
}

func TestAnAnomalyRaisesOneStepOnce(t *testing.T) {
	c := level.DefaultConfig()
	st := schemas.LevelState{}
	ev := level.Event{Kind: level.Anomaly, Key: "s@2026-11-28T09:03:00Z", Detail: "tool_calls"}
	if !c.Escalate(&st, ev) || st.Level != schemas.LevelRestrict || st.Rule != schemas.RuleLevelAnomaly {
		t.Fatalf("first report: %+v", st)
	}
	if c.Escalate(&st, ev) || st.Level != schemas.LevelRestrict {
		t.Fatalf("the same anomaly raised twice: %+v", st)
	}
	ev.Key = "s@2026-11-28T09:06:00Z"
	if !c.Escalate(&st, ev) || st.Level != schemas.LevelCheckpoint {
		t.Fatalf("a second anomaly: %+v", st)
	}
	st.Level = schemas.LevelContain
	ev.Key = "s@2026-11-28T09:09:00Z"
	if c.Escalate(&st, ev) || st.Level != schemas.LevelContain {
		t.Fatalf("an anomaly above CONTAIN: %+v", st)
	}
}

func TestDenialsAreCountedPerAgent(t *testing.T) {
	c := level.DefaultConfig()
	st := schemas.LevelState{}
	for _, agent := range []string{"", "", "agent-explore", "agent-explore"} {
		if c.Escalate(&st, level.Event{Kind: level.Denial, Agent: agent}) {
			t.Fatalf("two denials each of two agents raised the level: %+v", st)
		}
	}
	if !c.Escalate(&st, level.Event{Kind: level.Denial, Agent: "agent-explore", Detail: "Bash denied"}) ||
		st.Level != schemas.LevelContain || !strings.Contains(st.Cause, "sub-agent agent-explore") || st.Denials != 5 {
		t.Fatalf("the sub-agent's third denial: %+v", st)
	}
}
