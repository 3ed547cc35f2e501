package view

import (
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/schemas"
)

func event(n uint64, hookEvent, eventID string) schemas.Entry {
	return schemas.Entry{V: 1, Kind: schemas.EntryEvent, N: n, EventID: eventID, HookEvent: hookEvent, Origin: "hook:laptop"}
}

// The session state's changes are pure: a prompt starts a turn (its
// contract, no blocks), Stop decisions count once whichever way they
// arrive, and an override is used up by the decision that cites it.
func TestSessionStateFollowsTheTurn(t *testing.T) {
	s := newSessionState()
	s.apply(prepare(event(1, "UserPromptSubmit", "p1")), 16)
	c := &schemas.Contract{PromptEventID: "p1"}
	s.apply(prepared{e: schemas.Entry{V: 1, Kind: schemas.EntryContract, N: 2, Contract: c}}, 16)
	if s.contract != c || s.contractN != 2 || s.host != "laptop" || s.head.N != 2 {
		t.Fatalf("after the prompt and its contract: %+v", s)
	}
	block := schemas.GateDecision{HookEvent: "Stop", DecisionID: "d1", Decision: schemas.GateBlock}
	s.decided(block)
	s.apply(prepared{e: event(3, schemas.GateDecisionEvent, "r1"), record: &schemas.GateRecord{Decision: block}}, 16)
	if s.blocks != 1 {
		t.Fatalf("one block made here and read back: %d blocks, want 1", s.blocks)
	}
	s.apply(prepared{e: event(4, schemas.GateOverrideEvent, "o1"), override: &schemas.GateOverride{Reason: "hotfix"}}, 16)
	s.decided(schemas.GateDecision{HookEvent: "Stop", DecisionID: "d2", Decision: schemas.GateAllow, Override: "o1"})
	if s.blocks != 0 || s.override != "" || s.overrideR != "" {
		t.Fatalf("after an allow using the override: blocks %d, override %q %q", s.blocks, s.override, s.overrideR)
	}
	s.decided(block)
	s.apply(prepare(event(5, "UserPromptSubmit", "p2")), 16)
	if s.contract != nil || s.blocks != 0 || s.promptID != "p2" {
		t.Fatalf("a new prompt: contract %v, blocks %d, prompt %q", s.contract, s.blocks, s.promptID)
	}
	for i := range 70 {
		s.apply(prepare(event(uint64(10+i), "Stop", "s"+string(rune('A'+i)))), 16)
	}
	if len(s.stops) != 64 || len(s.stopOrder) != 64 {
		t.Fatalf("%d stops remembered, want the newest 64", len(s.stops))
	}
}

func TestStaleness(t *testing.T) {
	c := &schemas.Contract{TargetFields: schemas.TargetFields{Paths: []string{"src/app.py"}}}
	verdict := schemas.Verdict{Claim: "done", Validator: "test_pass", Args: []byte(`{"command_substring":"pytest"}`),
		Contract: &schemas.Position{N: 2}, Range: schemas.Range{From: 1, To: 10}}
	base := Snapshot{contracts: map[uint64]*schemas.Contract{2: c}}
	for _, tc := range []struct {
		name  string
		edits []pathAt
		runs  []runAt
		v     schemas.Verdict
		stale bool
	}{
		{name: "nothing after", edits: []pathAt{{n: 9, path: "/repo/src/app.py"}}, v: verdict},
		{name: "bound path edited after", edits: []pathAt{{n: 11, path: "/repo/src/app.py"}}, v: verdict, stale: true},
		{name: "other path edited after", edits: []pathAt{{n: 11, path: "/repo/README.md"}}, v: verdict},
		{name: "same command failed after", runs: []runAt{{n: 12, command: "pytest -q", failed: true}}, v: verdict, stale: true},
		{name: "same command passed after", runs: []runAt{{n: 12, command: "pytest -q"}}, v: verdict},
		{name: "other validators never go stale", edits: []pathAt{{n: 11, path: "/repo/src/app.py"}},
			v: schemas.Verdict{Validator: "file_diff_present", Contract: &schemas.Position{N: 2}, Range: schemas.Range{To: 10}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sn := base
			sn.edits, sn.runs = tc.edits, tc.runs
			reason, next := sn.Staleness(tc.v)
			if (reason != "") != tc.stale || (reason != "") != (next != "") {
				t.Fatalf("Staleness = %q, %q; want stale %v with a next step", reason, next, tc.stale)
			}
		})
	}
}

func TestFailingRunIsTheNewestNotSinceFixed(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs []runAt
		want uint64 // 0: none
	}{
		{"none", nil, 0},
		{"all passed", []runAt{{n: 1, command: "go test ./..."}}, 0},
		{"failed last", []runAt{{n: 1, command: "go test ./..."}, {n: 2, command: "go test ./...", failed: true}}, 2},
		{"fixed since", []runAt{{n: 1, command: "go test ./...", failed: true}, {n: 2, command: "go test ./..."}}, 0},
		{"another command passed since", []runAt{{n: 1, command: "go test ./...", failed: true}, {n: 2, command: "ls"}}, 1},
		{"newest of two failures", []runAt{{n: 1, command: "make lint", failed: true}, {n: 2, command: "go test ./...", failed: true}}, 2},
		{"older failure of another command", []runAt{{n: 1, command: "make lint", failed: true}, {n: 2, command: "go test ./...", failed: true},
			{n: 3, command: "go test ./..."}}, 1},
	} {
		r, ok := Snapshot{runs: tc.runs}.FailingRun()
		if ok != (tc.want != 0) || ok && r.N != tc.want {
			t.Errorf("%s: %+v %v, want n=%d", tc.name, r, ok, tc.want)
		}
	}
}

func TestSummaryLinePrefersTheFailure(t *testing.T) {
	for in, want := range map[string]string{
		"Exit code 1\n=== RUN TestAdd\n--- FAIL: TestAdd (0.00s)\nFAIL\n": "--- FAIL: TestAdd (0.00s)",
		"Exit code 2\nsomething odd\n":                                    "something odd",
		"ok  \tgithub.com/acme/app\t0.01s\n":                              "ok  \tgithub.com/acme/app\t0.01s",
		"Exit code 1":                                                     "Exit code 1",
		strings.Repeat("é", 100):                                          strings.Repeat("é", 80) + "…",
	} {
		if got := summaryLine(in); got != want {
			t.Errorf("summaryLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChanged(t *testing.T) {
	paths := []string{"src/app.py"}
	for _, tc := range []struct {
		name  string
		edits []pathAt
		want  string
	}{
		{"an Edit of the path", []pathAt{{n: 5, path: "/repo/src/app.py"}}, "/repo/src/app.py"},
		{"an Edit before the contract", []pathAt{{n: 1, path: "/repo/src/app.py"}}, ""},
		{"an Edit of another file", []pathAt{{n: 5, path: "/repo/tests/test_app.py"}}, ""},
		{"a shell write naming the path", []pathAt{{n: 6, shell: true, command: "sed -i s/a/b/ src/app.py", written: paths}},
			"src/app.py (by `sed -i s/a/b/ src/app.py`)"},
		{"a shell write it cannot read", []pathAt{{n: 6, shell: true, command: "python fix.py", unknown: true}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			what, _, ok := Snapshot{edits: tc.edits}.Changed(2, paths)
			if what != tc.want || ok != (tc.want != "") {
				t.Fatalf("Changed = %q %v, want %q", what, ok, tc.want)
			}
		})
	}
}
