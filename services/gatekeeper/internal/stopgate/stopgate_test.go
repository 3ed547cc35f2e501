package stopgate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/finalblock"
)

// Attestation ids of the evidence states.
const (
	fresh    = "01KAB0F0000000000000000001" // done, test_pass, this turn's contract
	fresh2   = "01KAB0F0000000000000000002" // done, file_diff_present, this turn's contract
	stale    = "01KAB0S0000000000000000001" // done, edited after
	failed   = "01KAB0S0000000000000000002" // done, a later run failed
	forged   = "01KAB0X0000000000000000001" // does not verify
	foreign  = "01KAB0X0000000000000000002" // another session's
	missing  = "01KAB0X0000000000000000003" // not in ATTEST
	oldTask  = "01KAB0T0000000000000000001" // done, an earlier contract
	ladder   = "01KAB0B0000000000000000001" // blocked, ladder_exhaustion_proof
	fetches  = "01KAB0D0000000000000000001" // delegation, fetch_attempt_proof
	partialA = "01KAB0P0000000000000000001" // partial, command_zero_exit
)

const contractN = 5

type fakeEvidence map[string]Attestation

func (f fakeEvidence) Attestation(ctx context.Context, id string) (Attestation, error) {
	if err := ctx.Err(); err != nil {
		return Attestation{}, fmt.Errorf("it could not be looked up: %w", err)
	}
	switch id {
	case forged:
		return Attestation{}, errors.New("it does not verify: signature by v1 does not verify")
	case foreign:
		return Attestation{}, errors.New("it belongs to another session")
	}
	a, ok := f[id]
	if !ok {
		return Attestation{}, errors.New("no such attestation in ATTEST")
	}
	return a, nil
}

var evidence = fakeEvidence{
	fresh:    {ID: fresh, Claim: "done", Validator: "test_pass", Contract: contractN},
	fresh2:   {ID: fresh2, Claim: "done", Validator: "file_diff_present", Contract: contractN},
	stale:    {ID: stale, Claim: "done", Validator: "test_pass", Contract: contractN, Stale: "/src/app.py was edited at n=40, after the evidence (n≤31)", NextStep: "re-run `pytest` after your last edit"},
	failed:   {ID: failed, Claim: "done", Validator: "command_zero_exit", Contract: contractN, Stale: "a later run of `make build` failed at n=44", NextStep: "fix the failure, re-run `make build`"},
	oldTask:  {ID: oldTask, Claim: "done", Validator: "test_pass", Contract: 2},
	ladder:   {ID: ladder, Claim: "blocked", Validator: "ladder_exhaustion_proof", Contract: contractN},
	fetches:  {ID: fetches, Claim: "delegation", Validator: "fetch_attempt_proof", Contract: contractN},
	partialA: {ID: partialA, Claim: "partial", Validator: "command_zero_exit", Contract: contractN},
}

var contract = &schemas.Contract{Objective: "fix the failing test in src/app.py", ExpectedVerification: []string{"tests pass"},
	TargetFields: schemas.TargetFields{Paths: []string{"src/app.py"}, CommandHints: []string{"pytest"}}}

type claim struct{ typ, id string }

func fenced(name, typ string, claims []claim, slots ...string) string {
	b := map[string]any{"type": typ, "summary": "summary of the turn"}
	var cs []map[string]string
	for _, c := range claims {
		cs = append(cs, map[string]string{"claim_type": c.typ, "attestation_id": c.id})
	}
	b["claims"] = cs
	if cs == nil {
		b["claims"] = []any{}
	}
	names := []string{"what_succeeded", "what_remains", "next_route_or_question"}
	for i, s := range slots {
		b[names[i]] = s
	}
	raw, _ := json.Marshal(b)
	return "```" + name + "\n" + string(raw) + "\n```"
}

func final(typ string, claims ...claim) string { return fenced("claimcheck", typ, claims) }

func TestDecide(t *testing.T) {
	tests := []struct {
		name     string
		msg      string
		task     bool // an actionable turn (contract present)
		decision string
		rule     string
		next     string // substring of the next step (blocks)
	}{
		// Actionable turns.
		{"done without block, tests never run", "I fixed the bug in src/app.py. All tests pass.", true, "block", RuleMissingBlock, "claimcheck claim --claim done --validator test_pass"},
		{"summary without claims, no block", "Here is what I changed:\n- src/app.py: handle None", true, "block", RuleMissingBlock, "```claimcheck"},
		{"done citing fresh pass", "Fixed.\n\n" + final("done", claim{"done", fresh}), true, "allow", RuleAllowed, ""},
		{"done citing two fresh passes", "All tests pass now.\n" + final("done", claim{"done", fresh}, claim{"done", fresh2}), true, "allow", RuleAllowed, ""},
		{"legacy brian_final block", "Done.\n" + fenced("brian_final", "done", []claim{{"done", fresh}}), true, "allow", RuleAllowed, ""},
		{"done citing stale pass", "Fixed and verified.\n" + final("done", claim{"done", stale}), true, "block", RuleStale, "re-run `pytest` after your last edit"},
		{"done citing pass invalidated by a failing run", final("done", claim{"done", failed}), true, "block", RuleStale, "fix the failure"},
		{"done citing forged attestation", final("done", claim{"done", forged}), true, "block", RuleBadCitation, "cite only attestation ids"},
		{"done citing foreign attestation", final("done", claim{"done", foreign}), true, "block", RuleBadCitation, "cite only attestation ids"},
		{"done citing unknown id", final("done", claim{"done", missing}), true, "block", RuleBadCitation, "claimcheck claim"},
		{"done citing a pass of an earlier task", final("done", claim{"done", oldTask}), true, "block", RuleOtherContract, "this turn's task"},
		{"done citing fresh and stale", final("done", claim{"done", fresh}, claim{"done", stale}), true, "block", RuleStale, "re-run"},
		{"done with no claims", "Complete.\n" + final("done"), true, "block", RuleNoDoneClaim, "test_pass"},
		{"done citing a ladder proof as done", final("done", claim{"done", ladder}), true, "block", RuleBadCitation, "claim_type \"blocked\""},
		{"done mislabelled claim type", final("done", claim{"blocked", fresh}), true, "block", RuleBadCitation, "claim_type \"done\""},
		{"blocked with ladder exhaustion", "I'm blocked by the VPN.\n" + final("blocked", claim{"blocked", ladder}), true, "allow", RuleAllowed, ""},
		{"blocked without proof", "I'm blocked: the API is down.\n" + final("blocked"), true, "block", RuleNoLadder, "ladder_exhaustion_proof"},
		{"blocked citing a test pass", final("blocked", claim{"done", fresh}), true, "block", RuleNoLadder, "ladder_exhaustion_proof"},
		{"delegation with fetch proof", "I need you to send me the file.\n" + final("delegation", claim{"delegation", fetches}), true, "allow", RuleAllowed, ""},
		{"delegation without proof", "Please send me the credentials.\n" + final("delegation"), true, "block", RuleNoFetches, "fetch_attempt_proof"},
		{"partial with all slots", "Partly there.\n" + fenced("claimcheck", "partial", []claim{{"partial", partialA}}, "build works", "tests for edge cases", "shall I add them?"), true, "allow", RuleAllowed, ""},
		{"partial with slots and no claims", fenced("claimcheck", "partial", nil, "read the code", "the fix", "which approach?"), true, "allow", RuleAllowed, ""},
		{"partial missing what_remains", fenced("claimcheck", "partial", nil, "read the code", "", "which approach?"), true, "block", RulePartialSlots, "what_remains"},
		{"partial with no slots", fenced("claimcheck", "partial", nil), true, "block", RulePartialSlots, "what_succeeded, what_remains, next_route_or_question"},
		{"partial citing a stale pass", fenced("claimcheck", "partial", []claim{{"done", stale}}, "a", "b", "c"), true, "block", RuleStale, "re-run"},
		{"partial saying done in prose without a done pass", "It's done.\n" + fenced("claimcheck", "partial", nil, "a", "b", "c"), true, "block", RuleUnbackedWords, "claimcheck claim"},
		{"partial saying blocked", "I'm blocked by review.\n" + fenced("claimcheck", "partial", nil, "a", "b", "c"), true, "allow", RuleAllowed, ""},
		{"done block but prose says blocked", "I'm blocked by the firewall.\n" + final("done", claim{"done", fresh}), true, "block", RuleUnbackedWords, "type blocked"},
		{"done block but prose asks the human", "Please send me the API key.\n" + final("done", claim{"done", fresh}), true, "block", RuleUnbackedWords, "type delegation"},
		{"malformed json in block", "Done.\n```claimcheck\n{\"type\": \"done\",\n```", true, "block", RuleMalformed, "fix the block"},
		{"unknown type", "```claimcheck\n{\"type\":\"finished\",\"summary\":\"x\",\"claims\":[]}\n```", true, "block", RuleMalformed, "fix the block"},
		{"two blocks", final("done", claim{"done", fresh}) + "\n" + final("done", claim{"done", fresh}), true, "block", RuleMalformed, "fix the block"},
		{"bad attestation id shape", "```claimcheck\n{\"type\":\"done\",\"summary\":\"x\",\"claims\":[{\"claim_type\":\"done\",\"attestation_id\":\"pass-123\"}]}\n```", true, "block", RuleMalformed, "fix the block"},
		{"claims in a quoted code block do not count", "Output:\n```\nPASS: all tests pass\n```\n" + final("done", claim{"done", fresh}), true, "allow", RuleAllowed, ""},
		// Turns without a task.
		{"answer to a question", "The function returns a list of users sorted by name.", false, "allow", RuleNoClaims, ""},
		{"explanation mentioning a test name", "`TestDone` in `done_test.go` checks the empty case.", false, "allow", RuleNoClaims, ""},
		{"negated claim", "The migration is not done yet; I haven't run it.", false, "allow", RuleNoClaims, ""},
		{"question to the user", "Is it done on your side?", false, "allow", RuleNoClaims, ""},
		{"unbacked done phrase", "I've fixed it and all tests pass.", false, "block", RuleUnbackedWords, "claimcheck claim --claim done"},
		{"unbacked works-now", "It works now.", false, "block", RuleUnbackedWords, "claimcheck claim"},
		{"unbacked blocked phrase", "I'm blocked by missing permissions.", false, "block", RuleUnbackedWords, "ladder_exhaustion_proof"},
		{"unbacked delegation phrase", "I need you to send the certificate.", false, "block", RuleUnbackedWords, "fetch_attempt_proof"},
		{"done backed without task", "Done.\n" + final("done", claim{"done", oldTask}), false, "allow", RuleAllowed, ""},
		{"stale without task", "Done.\n" + final("done", claim{"done", stale}), false, "block", RuleStale, "re-run"},
		{"forged without task", "Fixed.\n" + final("done", claim{"done", forged}), false, "block", RuleBadCitation, "claimcheck claim"},
		{"empty message", "", false, "allow", RuleNoClaims, ""},
		{"empty message in a task", "", true, "block", RuleMissingBlock, "```claimcheck"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Message: finalblock.Parse(tc.msg), Evidence: evidence, Cap: 8}
			if tc.task {
				in.Contract, in.ContractN = contract, contractN
			}
			r := Decide(t.Context(), in)
			if r.Decision != tc.decision || r.Rule != tc.rule {
				t.Fatalf("got %s (%s): %v; want %s (%s)\nphrases %+v blockErr %v", r.Decision, r.Rule, r.Reasons, tc.decision, tc.rule, in.Message.Phrases, in.Message.BlockErr)
			}
			if tc.decision == "block" {
				if !strings.Contains(r.NextStep, tc.next) {
					t.Fatalf("next step %q does not contain %q", r.NextStep, tc.next)
				}
				if !strings.Contains(r.Reason(), "Next step: ") || len(r.Reasons) == 0 {
					t.Fatalf("reason %q names no next step", r.Reason())
				}
			}
		})
	}
	if len(tests) < 40 {
		t.Fatalf("%d cases; the acceptance asks for at least 40", len(tests))
	}
}

func TestCapAndOverride(t *testing.T) {
	in := Input{Message: finalblock.Parse("All tests pass."), Evidence: evidence, Contract: contract, ContractN: contractN, Cap: 8}
	for blocks := 0; blocks < 7; blocks++ {
		in.ConsecutiveBlocks = blocks
		if r := Decide(t.Context(), in); r.Decision != "block" {
			t.Fatalf("after %d blocks: %+v", blocks, r)
		}
	}
	in.ConsecutiveBlocks, in.StopHookActive = 7, true
	r := Decide(t.Context(), in)
	if r.Decision != "allow" || !r.Capped || r.Rule != RuleCapped || !strings.Contains(r.SystemMessage, "NOT verified") ||
		!strings.Contains(r.SystemMessage, "7 consecutive stops were blocked") {
		t.Fatalf("at the cap: %+v", r)
	}
	in.Cap = 0
	if r := Decide(t.Context(), in); r.Decision != "block" {
		t.Fatalf("cap 0 must never let through: %+v", r)
	}
	in.ConsecutiveBlocks, in.Override, in.OverrideReason = 0, "01KAB0V0000000000000000001", "release freeze, approved by jo"
	r = Decide(t.Context(), in)
	if r.Decision != "allow" || r.Rule != RuleOverride || r.Override != in.Override || !strings.Contains(r.SystemMessage, "release freeze") {
		t.Fatalf("override: %+v", r)
	}
	// An override is not consumed by a stop that passes anyway.
	in.Message = finalblock.Parse(final("done", claim{"done", fresh}))
	if r := Decide(t.Context(), in); r.Rule != RuleAllowed || r.Override != "" {
		t.Fatalf("passing stop consumed the override: %+v", r)
	}
}

// The evidence is looked up under the caller's context: a stop whose
// request has ended cannot use its citations.
func TestEvidenceLookupsUseTheCallersContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	in := Input{Message: finalblock.Parse(final("done", claim{"done", fresh})), Evidence: evidence, Contract: contract, ContractN: contractN, Cap: 8}
	if r := Decide(ctx, in); r.Rule != RuleBadCitation || !strings.Contains(r.Reason(), context.Canceled.Error()) {
		t.Fatalf("with an ended context: %+v", r)
	}
	if r := Decide(t.Context(), in); r.Rule != RuleAllowed {
		t.Fatalf("with a live context: %+v", r)
	}
}

func TestSuggestClaim(t *testing.T) {
	for _, tc := range []struct {
		c    *schemas.Contract
		want string
	}{
		{nil, "--validator <validator>"},
		{contract, `test_pass --args '{"command_substring":"pytest"}'`},
		{&schemas.Contract{TargetFields: schemas.TargetFields{CommandHints: []string{"make build"}}}, "command_zero_exit"},
		{&schemas.Contract{TargetFields: schemas.TargetFields{Paths: []string{"/Makefile"}}}, `file_diff_present --args '{"path":"/Makefile"}'`},
		{&schemas.Contract{TargetFields: schemas.TargetFields{URLs: []string{"https://x.test/"}}}, "http_2xx"},
	} {
		if got := suggestClaim(tc.c); !strings.Contains(got, tc.want) {
			t.Errorf("suggestClaim(%v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

// A failing run in the ledger is named when a claim lacks evidence, not
// when the block is malformed or the stop passes.
func TestFailingRunIsNamedForUnbackedClaims(t *testing.T) {
	run := &Run{N: 9, Command: "go test ./...", Summary: "--- FAIL: TestAdd (0.00s)"}
	for _, tc := range []struct {
		name, message string
		named         bool
		decision      string
	}{
		{"no block", "Done! All tests pass.", true, "block"},
		{"malformed block", "Done.\n```claimcheck\n{not json\n```", false, "block"},
		{"backed", final("done", claim{"done", fresh}), false, "allow"},
	} {
		in := Input{Message: finalblock.Parse(tc.message), Evidence: evidence, Contract: contract, ContractN: contractN, FailingRun: run}
		r := Decide(t.Context(), in)
		named := strings.Contains(r.Reason(), "newest run of `go test ./...` failed (n=9): --- FAIL: TestAdd")
		if r.Decision != tc.decision || named != tc.named {
			t.Errorf("%s: %s %q, want %s with the failing run named: %v", tc.name, r.Decision, r.Reason(), tc.decision, tc.named)
		}
	}
}

// Cursor's and Copilot's stops carry no final message: a turn with a task
// is judged on the session's PASS attestations made under its contract,
// as a done block citing them would be, with every check of a citation.
func TestStopWithoutAMessageIsJudgedOnThePasses(t *testing.T) {
	base := Input{Message: finalblock.Parse(""), Evidence: evidence, Contract: contract, ContractN: contractN, NoMessage: true}
	tests := []struct {
		name   string
		passes []Pass
		rule   string
		reason string
	}{
		{"no attestation yet", nil, RuleMissingBlock, "no attestation of this session backs it yet"},
		{"a fresh test pass", []Pass{{fresh, "done"}}, RuleAllowed, "carries no final message: judged on this turn's PASS attestations; done block with 1 verified"},
		{"a pass gone stale", []Pass{{stale, "done"}}, RuleStale, "was edited at n=40"},
		{"one that does not verify", []Pass{{forged, "done"}}, RuleBadCitation, "does not verify"},
		{"a ladder proof alone is a blocked block", []Pass{{ladder, "blocked"}}, RuleAllowed, "blocked block"},
		{"a fetch proof alone is a delegation block", []Pass{{fetches, "delegation"}}, RuleAllowed, "delegation block"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := base
			in.Passes = tc.passes
			r := Decide(t.Context(), in)
			if why := strings.Join(r.Reasons, "; "); r.Rule != tc.rule || !strings.Contains(why, tc.reason) {
				t.Fatalf("rule %s (%s), want %s with %q", r.Rule, why, tc.rule, tc.reason)
			}
			if tc.rule == RuleMissingBlock && !strings.Contains(r.NextStep, "carries no final message") {
				t.Fatalf("next step %q does not say why no block is asked for", r.NextStep)
			}
		})
	}
	// An agent that sends a message is judged on it: the passes do not
	// stand in for a missing block.
	in := base
	in.NoMessage, in.Passes = false, []Pass{{fresh, "done"}}
	if r := Decide(t.Context(), in); r.Rule != RuleMissingBlock {
		t.Fatalf("a message without a block: %+v", r)
	}
	// Without a task, nothing is claimed and the stop goes through.
	in = base
	in.Contract, in.ContractN = nil, 0
	if r := Decide(t.Context(), in); r.Decision != schemas.GateAllow {
		t.Fatalf("no task and no message: %+v", r)
	}
}

// For agents whose commands cannot find their session, the next step
// names it in the claim command.
func TestClaimCommandNamesTheSession(t *testing.T) {
	in := Input{Message: finalblock.Parse("All tests pass."), Evidence: evidence, Contract: contract, ContractN: contractN}
	r := Decide(t.Context(), in)
	if !strings.Contains(r.NextStep, "`claimcheck claim --claim done") {
		t.Fatalf("next step %q", r.NextStep)
	}
	in.ClaimCommand = "claimcheck claim --session e849aea9"
	r = Decide(t.Context(), in)
	if !strings.Contains(r.NextStep, "`claimcheck claim --session e849aea9 --claim done") || strings.Count(r.NextStep, "--session") != 1 {
		t.Fatalf("next step %q does not name the session once", r.NextStep)
	}
}
