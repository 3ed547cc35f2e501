package stopgate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/policy"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/finalblock"
)

func defaultPolicy(t testing.TB) *policy.Policy {
	t.Helper()
	v, err := validation.New()
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Default(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// scopeEvidence: one fresh and one stale attestation per kind of backing.
func scopeEvidence() (fakeEvidence, map[string][2]string) {
	ev := fakeEvidence{}
	ids := map[string][2]string{}
	n := 0
	add := func(name, validator, args string) {
		n++
		f, s := fmt.Sprintf("01KAC0F%019d", n), fmt.Sprintf("01KAC0S%019d", n)
		ev[f] = Attestation{ID: f, Claim: "done", Validator: validator, Args: args, Contract: contractN}
		ev[s] = Attestation{ID: s, Claim: "done", Validator: validator, Args: args, Contract: contractN,
			Stale: "add.go was edited at n=40, after the evidence", NextStep: "re-run it after your last edit"}
		ids[name] = [2]string{f, s}
	}
	cmd := func(c string) string { return `{"command_substring":"` + c + `"}` }
	add("tests", "test_pass", cmd("go test ./..."))
	add("change", "file_diff_present", `{"path":"add.go"}`)
	add("build", "command_zero_exit", cmd("go build ./..."))
	add("deploy", "command_zero_exit", cmd("kubectl rollout status deploy/web"))
	add("merge", "command_zero_exit", cmd("git push origin main"))
	add("fetch", "http_2xx", `{"url":"https://web.example/health"}`)
	add("lint", "command_zero_exit", cmd("golangci-lint run ./..."))
	add("security", "command_zero_exit", cmd("govulncheck ./..."))
	add("deps", "command_zero_exit", cmd("go get golang.org/x/text@v0.31.0"))
	add("migration", "command_zero_exit", cmd("alembic upgrade head"))
	add("other", "command_zero_exit", cmd("make run"))
	return ev, ids
}

func message(typ string, ids []string, phrases ...finalblock.Phrase) finalblock.Message {
	b := &finalblock.Block{Type: typ, Summary: "s", WhatSucceeded: "a", WhatRemains: "b", NextRouteOrQuestion: "c"}
	for _, id := range ids {
		b.Claims = append(b.Claims, finalblock.Claim{ClaimType: "done", AttestationID: id})
	}
	return finalblock.Message{Block: b, Phrases: phrases}
}

// Each kind of claim × the evidence cited: its own backing (allowed),
// another kind's (blocked, naming the claim and what backs it), a stale
// one of its own (blocked as stale).
func TestClaimScope(t *testing.T) {
	pol := defaultPolicy(t)
	ev, ids := scopeEvidence()
	wrong := map[string]string{"tests": "change", "change": "tests", "fetch": "tests", "work": ""}
	for _, scope := range []string{"tests", "build", "change", "deploy", "merge", "fetch", "lint", "security", "deps", "migration"} {
		phrase := finalblock.Phrase{Kind: finalblock.KindDone, Scope: scope, Lang: "en", Field: finalblock.FieldProse, Text: "it is " + scope}
		other := "tests"
		if w, ok := wrong[scope]; ok {
			other = w
		}
		if scope == "build" {
			other = "change"
		}
		for _, tc := range []struct {
			name     string
			cite     string
			decision string
			rule     string
		}{
			{"backed", ids[scope][0], "allow", RuleAllowed},
			{"backed by another kind", ids[other][0], "block", RuleUnbackedWords},
			{"stale", ids[scope][1], "block", RuleStale},
		} {
			t.Run(scope+"/"+tc.name, func(t *testing.T) {
				in := Input{Message: message("done", []string{tc.cite}, phrase), Evidence: ev, Contract: contract, ContractN: contractN,
					Policy: pol}
				r := Decide(t.Context(), in)
				if r.Decision != tc.decision || r.Rule != tc.rule {
					t.Fatalf("got %s (%s): %v; want %s (%s)", r.Decision, r.Rule, r.Reasons, tc.decision, tc.rule)
				}
				if tc.rule == RuleUnbackedWords {
					reason := r.Reason()
					if !strings.Contains(reason, `"it is `+scope+`"`) || !strings.Contains(reason, "cites no attestation that backs it") {
						t.Fatalf("reason does not name the claim and what it lacks: %s", reason)
					}
					backing, _ := pol.Scope(scope)
					if !strings.Contains(r.NextStep, "--validator "+backing.BackedBy[0].Validator) {
						t.Fatalf("next step does not name the validator %s: %s", backing.BackedBy[0].Validator, r.NextStep)
					}
				}
			})
		}
	}
}

func TestClaimScopeBuildIsBackedByATestRun(t *testing.T) {
	ev, ids := scopeEvidence()
	build := finalblock.Phrase{Kind: finalblock.KindDone, Scope: "build", Text: "it compiles cleanly"}
	in := Input{Message: message("done", []string{ids["tests"][0]}, build), Evidence: ev, Policy: defaultPolicy(t)}
	if r := Decide(t.Context(), in); r.Rule != RuleAllowed {
		t.Fatalf("a passing test run compiles: %+v", r)
	}
	in.Message = message("done", []string{ids["other"][0]}, build)
	if r := Decide(t.Context(), in); r.Rule != RuleUnbackedWords {
		t.Fatalf("`make run` exiting 0 is not a build: %+v", r)
	}
}

// A kind no validator proves blocks a done stop and passes a partial one.
func TestUnprovableClaims(t *testing.T) {
	ev, ids := scopeEvidence()
	pol := defaultPolicy(t)
	for _, scope := range []string{"perf", "coverage"} {
		p := finalblock.Phrase{Kind: finalblock.KindDone, Scope: scope, Field: "what_succeeded", Text: "40% faster"}
		in := Input{Message: message("done", []string{ids["tests"][0]}, p), Evidence: ev, Policy: pol}
		r := Decide(t.Context(), in)
		if r.Rule != RuleUnprovable || !strings.Contains(r.NextStep, "stop as partial") ||
			!strings.Contains(r.Reason(), `the block's what_succeeded says "40% faster"`) {
			t.Fatalf("%s in a done stop: %+v", scope, r)
		}
		in.Message = message("partial", nil, p)
		if r := Decide(t.Context(), in); r.Rule != RuleAllowed {
			t.Fatalf("%s in a partial stop: %+v", scope, r)
		}
	}
}

// Every unbacked claim is named, not only the first.
func TestEveryUnbackedClaimIsNamed(t *testing.T) {
	ev, ids := scopeEvidence()
	msg := message("done", []string{ids["tests"][0]},
		finalblock.Phrase{Kind: finalblock.KindDone, Scope: "tests", Text: "all tests pass"},
		finalblock.Phrase{Kind: finalblock.KindDone, Scope: "deploy", Text: "deployed to production"},
		finalblock.Phrase{Kind: finalblock.KindDone, Scope: "merge", Field: "summary", Text: "merged into main"})
	r := Decide(t.Context(), Input{Message: msg, Evidence: ev, Policy: defaultPolicy(t)})
	if r.Rule != RuleUnbackedWords || len(r.Reasons) != 2 || !strings.Contains(r.Reasons[0], "deployed to production") ||
		!strings.Contains(r.Reasons[1], `the block's summary says "merged into main"`) || !strings.Contains(r.NextStep, "kubectl") {
		t.Fatalf("%+v", r)
	}
}

// A done for a task that names files to fix needs a change to one of them.
func TestDoneNeedsTheChangeTheTaskNames(t *testing.T) {
	ev, ids := scopeEvidence()
	fix := &schemas.Contract{Objective: "fix add.go so that TestAdd passes", ActionVerbs: []string{"fix"},
		TargetFields: schemas.TargetFields{Paths: []string{"add.go"}, BacktickTokens: []string{"go test ./..."}}}
	explain := &schemas.Contract{Objective: "run the tests in add_test.go", ActionVerbs: []string{"run"},
		TargetFields: schemas.TargetFields{Paths: []string{"add_test.go"}}}
	pol := defaultPolicy(t)
	for _, tc := range []struct {
		name string
		c    *schemas.Contract
		typ  string
		cite []string
		rule string
	}{
		{"fix with a passing run only", fix, "done", []string{ids["tests"][0]}, RuleNoChange},
		{"fix with the run and the change", fix, "done", []string{ids["tests"][0], ids["change"][0]}, RuleAllowed},
		{"fix stopped as partial", fix, "partial", []string{ids["tests"][0]}, RuleAllowed},
		{"a task that changes nothing", explain, "done", []string{ids["tests"][0]}, RuleAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Message: message(tc.typ, tc.cite), Evidence: ev, Contract: tc.c, ContractN: contractN, Policy: pol}
			r := Decide(t.Context(), in)
			if r.Rule != tc.rule {
				t.Fatalf("got %s: %v", r.Rule, r.Reasons)
			}
			if tc.rule == RuleNoChange && (!strings.Contains(r.NextStep, `file_diff_present --args '{"path":"add.go"}'`) ||
				!strings.Contains(r.Reason(), "names add.go to change")) {
				t.Fatalf("reason/next step: %s", r.Reason())
			}
		})
	}
}

func TestUnreadLanguageNeedsABlock(t *testing.T) {
	f := finalblock.Finding{Kind: finalblock.FindingUnreadLanguage, Field: finalblock.FieldProse, Text: "ทดสอบผ่าน 12/12 ✅",
		Detail: "a count 12/12, a status mark ✅"}
	in := Input{Message: finalblock.Message{Findings: []finalblock.Finding{f}}, Evidence: evidence, Policy: defaultPolicy(t)}
	r := Decide(t.Context(), in)
	if r.Rule != RuleUnreadText || !strings.Contains(r.Reason(), "12/12") || !strings.Contains(r.NextStep, "type partial") {
		t.Fatalf("%+v", r)
	}
	in.Message = message("partial", nil)
	in.Message.Findings = []finalblock.Finding{f}
	if r := Decide(t.Context(), in); r.Rule != RuleAllowed {
		t.Fatalf("with a partial block: %+v", r)
	}
}

func TestMixedScriptIsRecorded(t *testing.T) {
	f := finalblock.Finding{Kind: finalblock.FindingMixedScript, Text: "pаss", Detail: "Latin, Cyrillic"}
	for _, m := range []finalblock.Message{{Findings: []finalblock.Finding{f}}, message("partial", nil)} {
		m.Findings = []finalblock.Finding{f}
		r := Decide(t.Context(), Input{Message: m, Evidence: evidence, Policy: defaultPolicy(t)})
		if r.Decision != "allow" || !strings.Contains(strings.Join(r.Reasons, "; "), `"pаss" mixes scripts (Latin, Cyrillic)`) {
			t.Fatalf("%+v", r)
		}
	}
}

// A pass that declared a weakening of the tests counts only when the final
// message tells the human, in the prose or the block.
func TestDeclaredTestChangesMustBeTold(t *testing.T) {
	const declared = "TestAddOverflow is skipped: it needs the 128-bit build"
	ev := fakeEvidence{"01KAC0D0000000000000000001": {ID: "01KAC0D0000000000000000001", Claim: "done", Validator: "test_pass",
		Args: `{"command_substring":"go test ./...","declared_test_changes":"` + declared + `"}`}}
	cite := []string{"01KAC0D0000000000000000001"}
	for _, tc := range []struct {
		name string
		edit func(*finalblock.Message)
		rule string
	}{
		{"not told", func(*finalblock.Message) {}, RuleUntoldChange},
		{"in what_remains", func(m *finalblock.Message) { m.Block.WhatRemains = "Note: " + declared + "." }, RuleAllowed},
		{"in the prose, other case and spacing", func(m *finalblock.Message) {
			m.Prose = "Done.  testaddoverflow is SKIPPED: it needs\nthe 128-bit build"
		}, RuleAllowed},
		{"only half of it", func(m *finalblock.Message) { m.Block.Summary = "TestAddOverflow is skipped" }, RuleUntoldChange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := message("done", cite)
			tc.edit(&m)
			r := Decide(t.Context(), Input{Message: m, Evidence: ev, Policy: defaultPolicy(t)})
			if r.Rule != tc.rule {
				t.Fatalf("got %s: %v", r.Rule, r.Reasons)
			}
			if tc.rule == RuleUntoldChange && !strings.Contains(r.NextStep, declared) {
				t.Fatalf("next step %q does not give the words", r.NextStep)
			}
		})
	}
}
