package finalblock

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStatusNotation: check marks, status tables and lists read as done
// claims, scoped by the check they name; red marks and failures are not.
func TestStatusNotation(t *testing.T) {
	s := func(scope, text string) ks { return ks{KindDone, scope, text} }
	runScoped(t, []scopedCase{
		// Marks next to the name of a check.
		{"✅ tests", []ks{s(ScopeTests, "✅ tests")}},
		{"Build ✅, lint ✔️", []ks{s(ScopeBuild, "Build ✅"), s(ScopeLint, "lint ✔")}}, // the variation selector is not matched
		{"🟢 CI", []ks{s(ScopeTests, "🟢 CI")}},
		{"✓ `go test ./...`", []ks{s(ScopeTests, "✓ `…`")}},
		{"☑️ migrations", []ks{s(ScopeMigration, "☑️ migrations")}},
		{"❌ tests", nil},
		{"✗ build, 🔴 lint", nil},
		{"Not ✅ tests yet.", nil},
		// Label lines.
		{"Build: ✅", []ks{s(ScopeBuild, "Build: ✅")}},
		{"Tests: 12/12", []ks{s(ScopeTests, "Tests: 12/12")}},
		{"CI: green", []ks{s(ScopeTests, "CI: green")}},
		{"Coverage: OK", []ks{s(ScopeCoverage, "Coverage: OK")}},
		{"Build: FAIL", nil},
		{"Tests: not run", nil},
		{"CI: pending", nil},
		{"Tests: 11/12", nil},
		{"Status: ✅", nil},
		{"Note: the build passes only on Linux?", nil},
		// List items.
		{"- ✅ Unit tests\n- ❌ E2E tests\n- ⏳ Deploy", []ks{s(ScopeTests, "✅ Unit tests")}},
		{"- ✅ Login flow", []ks{s(ScopeWork, "✅")}},
		{"- [x] Integration tests\n- [ ] Deploy", []ks{s(ScopeTests, "[x] Integration tests")}},
		{"- [x] Add tests for the parser", []ks{s(ScopeWork, "[x]")}},
		{"1. Lint: passing", []ks{s(ScopeLint, "Lint: passing")}},
		{"- [x] done", []ks{s(ScopeWork, "done")}}, // the words claim already
		{"- Tests: ✅ 10 passed, ❌ 2 failed", nil},
		{"- ⏳ Tests", nil},
		// Tables.
		{"| Check | Status |\n|---|---|\n| Unit tests | ✅ |\n| Build | PASS |\n| Go vet | ✅ clean |\n| E2E | ❌ |\n| Docs | ⏳ not run |",
			[]ks{s(ScopeTests, "Unit tests | ✅"), s(ScopeBuild, "Build | PASS"), s(ScopeLint, "vet | ✅")}},
		{"| Task | Status |\n|---|---|\n| Fix login | ✅ Done |\n| Add tests | in progress |", []ks{s(ScopeWork, "Done")}},
		{"| Suite | Result |\n|---|---|\n| Unit tests | 212/212 passed |", []ks{s(ScopeTests, "212/212 passed")}},
		{"| Linux | ✅ |", []ks{s(ScopeWork, "✅")}},
		{"| Deploy | OK |", []ks{s(ScopeDeploy, "Deploy | OK")}},
		{"| Foo | OK |", nil},
		{"| Tests | ✅ 10 passed, ❌ 2 failed |", nil},
		{"| Tests | not passing |", nil},
		{"| Tests | 11/12 |", nil},
		{"Legend: ✅ = passing, ❌ = failing", nil},
		{"| ✅ | = passing |", nil},
	})
}

// TestBlockMembers: the block's prose members are read like the prose, in
// order, with offsets into each member.
func TestBlockMembers(t *testing.T) {
	msg := "Summary below.\n" + block(`{"type":"partial","summary":"Fixed the race; `+"`go test`"+` passes.",`+
		`"what_succeeded":"Unit tests pass.","what_remains":"Deploy is not done yet.",`+
		`"next_route_or_question":"Could you send me the staging DSN?"}`) + "\nAll tests pass."
	m := Parse(msg)
	want := []Phrase{
		{Kind: KindDone, Scope: ScopeTests, Lang: "en", Field: FieldProse, Text: "All tests pass", Offset: 16},
		{Kind: KindDone, Scope: ScopeWork, Lang: "en", Field: "summary", Text: "Fixed", Offset: 0},
		{Kind: KindDone, Scope: ScopeTests, Lang: "en", Field: "summary", Text: "`go test` passes", Offset: 16},
		{Kind: KindDone, Scope: ScopeTests, Lang: "en", Field: "what_succeeded", Text: "Unit tests pass", Offset: 0},
		{Kind: KindDelegation, Lang: "en", Field: "next_route_or_question", Text: "Could you send", Offset: 0},
	}
	if diff := cmp.Diff(want, m.Phrases); diff != "" {
		t.Fatalf("phrases (-want +got):\n%s", diff)
	}
	checkInvariants(t, msg, m)

	// A malformed block has no members to read.
	m = Parse(block(`{"type":"done","summary":"All tests pass.","claims":7}`))
	if m.BlockErr == nil || len(m.Phrases) != 0 {
		t.Fatalf("malformed block: err %v, phrases %+v", m.BlockErr, m.Phrases)
	}

	// Findings in members.
	m = Parse(block(`{"type":"done","summary":"dоne","what_remains":"การทดสอบผ่าน 3/3"}`))
	var kinds []string
	for _, f := range m.Findings {
		kinds = append(kinds, f.Field+":"+f.Kind)
	}
	if diff := cmp.Diff([]string{"summary:" + FindingMixedScript, "what_remains:" + FindingUnreadLanguage}, kinds); diff != "" {
		t.Fatalf("findings (-want +got):\n%s\n%+v", diff, m.Findings)
	}
	checkInvariants(t, "", m)
}
