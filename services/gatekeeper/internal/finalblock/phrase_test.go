package finalblock

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kt is a phrase without its offset, for compact tables.
type kt struct{ kind, text string }

func phrasesOf(s string) []kt {
	var out []kt
	for _, p := range Parse(s).Phrases {
		out = append(out, kt{p.Kind, p.Text})
	}
	return out
}

func TestPhrases(t *testing.T) {
	done := func(text string) kt { return kt{KindDone, text} }
	blocked := func(text string) kt { return kt{KindBlocked, text} }
	deleg := func(text string) kt { return kt{KindDelegation, text} }
	tests := []struct {
		in   string
		want []kt
	}{
		// Completion claims.
		{"Done.", []kt{done("Done")}},
		{"All done!", []kt{done("done")}},
		{"I'm done with the migration.", []kt{done("done")}},
		{"The refactor is complete.", []kt{done("complete")}},
		{"Migration complete", []kt{done("complete")}},
		{"Completed the migration and shipped v1.2.", []kt{done("Completed"), done("shipped")}},
		{"I finished the rollout.", []kt{done("finished")}},
		{"Fixed: the nil check in `x.go`.", []kt{done("Fixed")}},
		{"I’ve fixed it.", []kt{done("fixed")}},
		{"Implemented retries with backoff.", []kt{done("Implemented")}},
		{"The merge conflict is resolved.", []kt{done("resolved")}},
		{"Verified locally.", []kt{done("Verified")}},
		{"Successfully deployed to staging.", []kt{done("Successfully"), done("deployed to staging")}},
		{"All tests pass.", []kt{done("All tests pass")}},
		{"ALL TESTS PASSED", []kt{done("ALL TESTS PASSED")}},
		{"The tests are passing now.", []kt{done("The tests are passing")}},
		{"The existing tests still pass.", []kt{done("tests still pass")}},
		{"CI is green.", []kt{done("CI is green")}},
		{"`go test -race ./...` passes.", []kt{done("`…` passes")}},
		{"They all pass.", []kt{done("They all pass")}},
		{"It works now.", []kt{done("It works")}},
		{"Works as expected.", []kt{done("Works as expected")}},
		{"It's working.", []kt{done("It's working")}},
		{"The binary builds cleanly.", []kt{done("builds cleanly")}},
		{"The PR is ready for review.", []kt{done("ready for review")}},
		{"You're all set.", []kt{done("all set")}},
		{"Deployed to production.", []kt{done("Deployed to production")}},
		{"I merged the fix into main.", []kt{done("merged the fix into main")}},
		{"Should be good to go!", []kt{done("good to go")}},
		{"The issue has been addressed.", []kt{done("has been addressed")}},
		{"The fix is in place.", []kt{done("fix is in place")}},
		{"ok  ./... 128 tests, 0 failures", []kt{done("0 failures")}},
		{"This should be fixed now.", []kt{done("fixed")}},
		{"I can confirm that all tests pass.", []kt{done("all tests pass")}},
		{"I didn't touch the public API, and all tests pass.", []kt{done("all tests pass")}},
		{"Done — all tests pass.", []kt{done("Done"), done("all tests pass")}},
		{"- [x] done", []kt{done("done")}},
		{"[Done](https://example.com/pr/1)", []kt{done("Done")}},

		// Not completion claims.
		{"not done", nil},
		{"It is not deployed to production yet.", nil},
		{"Once it is merged into main, tag the release.", nil},
		{"The change needs to be deployed to staging first.", nil},
		{"Is it good to go?", nil},
		{"The comments have not been addressed.", nil},
		{"There were 0 failures before my change too, if that helps? No: 3 failures now.", nil},
		{"It isn't fixed yet.", nil},
		{"I haven't finished.", nil},
		{"The feature is not yet complete.", nil},
		{"No tests pass.", nil},
		{"Not all tests pass.", nil},
		{"None of the tests passed.", nil},
		{"It's almost done.", nil},
		{"The port is partly fixed.", nil},
		{"Never verified.", nil},
		{"Is it done?", nil},
		{"Done?", nil},
		{"Is it done, or should I keep going?", nil},
		{"Once it's done, I'll tell you.", nil},
		{"This will be fixed in the next release.", nil},
		{"It needs to be fixed.", nil},
		{"The bug has yet to be resolved.", nil},
		{"If the tests pass, merge it.", nil},
		{"Check that it works.", nil},
		{"Please verify that all tests pass.", nil},
		{"This ensures the tests pass on Windows.", nil},
		{"Here's the complete list.", nil},
		{"Complete the form first.", nil},
		{"A fixed size buffer.", nil},
		{"Use a fixed timeout.", nil},
		{"The completed jobs are archived.", nil},
		{"Here's how it works.", nil},
		{"It works by hashing the key.", nil},
		{"The team is working on it.", nil},
		{"Validation is done by the middleware.", nil},
		{"Paths are resolved relative to the root.", nil},
		{"The signature is verified against the key.", nil},
		{"The cache is implemented as an LRU.", nil},
		{"Here's what I've done so far.", nil},
		{"This is done to avoid an allocation.", nil},
		{"Let me run the tests to verify the fix works.", nil},
		{"Let me check that everything works.", nil},
		{"The \"done\" channel closes first.", nil},
		{"The ‘fixed’ label.", nil},
		{"done_test.go, TestDone, isDone(), --fixed-strings, pkg/done, .done, #done, done.go", nil},
		{"`done` and `all tests pass`", nil},
		{"`x`_done", nil},

		// Blockage.
		{"I'm blocked by the firewall.", []kt{blocked("I'm blocked")}},
		{"I am still blocked.", []kt{blocked("I am still blocked")}},
		{"We're stuck.", []kt{blocked("We're stuck")}},
		{"This is blocked on legal review.", []kt{blocked("blocked on")}},
		{"I cannot proceed without the key.", []kt{blocked("cannot proceed")}},
		{"I couldn't connect to the database.", []kt{blocked("I couldn't connect")}},
		{"I don't have permission to push.", []kt{blocked("I don't have permission")}},
		{"Unable to continue.", []kt{blocked("Unable to continue")}},
		{"I'm not blocked by anything.", nil},
		{"I'm no longer blocked by the VPN.", nil},
		{"If I can't connect, I'll retry.", nil},
		{"Am I blocked?", nil},
		{"The request was unblocked.", nil},
		{"Users cannot log in when the cookie expires.", nil},

		// Delegation.
		{"I need you to send the certificate.", []kt{deleg("need you to")}},
		{"Please send me the API key.", []kt{deleg("Please send")}},
		{"Could you paste the error?", []kt{deleg("Could you paste")}},
		{"Can you please run the migration on prod?", []kt{deleg("Can you please run")}},
		{"Send me the logs.", []kt{deleg("Send me")}},
		{"You'll need to restart the server.", []kt{deleg("You'll need to")}},
		{"You’ll need to restart the server.", []kt{deleg("You’ll need to")}},
		{"I was unable to access the staging dashboard.", []kt{deleg("I was unable to access")}},
		{"We couldn't download the artifact.", []kt{deleg("We couldn't download")}},
		{"If you could send me the logs, I can finish.", []kt{deleg("send me")}},
		{"I need your approval to deploy.", []kt{deleg("I need your approval")}},
		{"I'm waiting for your confirmation.", []kt{deleg("waiting for your")}},
		{"I don't need you to do anything.", nil},
		{"Please let me know if you want changes.", nil},
		{"Please review the diff.", nil},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, phrasesOf(tc.in), cmp.AllowUnexported(kt{})); diff != "" {
				t.Errorf("phrases (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPhraseOffsets(t *testing.T) {
	m := Parse("Summary:\n```go\nx := done()\n```\nI’ve fixed it; `go test` passes.")
	want := []Phrase{
		{Kind: KindDone, Scope: ScopeWork, Lang: "en", Field: FieldProse, Text: "fixed", Offset: strings.Index(m.Prose, "fixed")},
		{Kind: KindDone, Scope: ScopeTests, Lang: "en", Field: FieldProse, Text: "`…` passes", Offset: strings.Index(m.Prose, "`…`")},
	}
	if diff := cmp.Diff(want, m.Phrases); diff != "" {
		t.Fatalf("phrases (-want +got):\n%s\nprose %q", diff, m.Prose)
	}
	for _, p := range m.Phrases {
		if m.Prose[p.Offset:p.Offset+len(p.Text)] != p.Text {
			t.Errorf("phrase %+v is not at its offset in %q", p, m.Prose)
		}
	}
}

// TestRuleWords checks the phrase tables: every word of every pattern of a
// word table is a single word as the tokenizer reads the normalised text,
// so no row is dead; every row has a known kind and scope.
func TestRuleWords(t *testing.T) {
	check := func(where, w string) {
		t.Helper()
		if strings.HasPrefix(w, "<") && strings.HasSuffix(w, ">") {
			return
		}
		w = strings.Trim(w, "*")
		toks := tokenize(normalize(w, false).text, nil).toks
		if len(toks) != 1 || toks[0].word != normWord(w) {
			t.Errorf("%s: word %q tokenizes as %+v", where, w, toks)
		}
	}
	scopes := []string{"", ScopeWork, ScopeTests, ScopeBuild, ScopeChange, ScopeDeploy, ScopeMerge, ScopeFetch, ScopeLint, ScopePerf,
		ScopeCoverage, ScopeSecurity, ScopeDeps, ScopeMigration}
	for _, spec := range langSpecs {
		if spec.tag == "" || len(spec.rules) == 0 {
			t.Errorf("table %q is empty", spec.tag)
		}
		for _, r := range spec.rules {
			where := spec.tag + ": " + r.phrase
			seqs := expand(r.phrase)
			if len(seqs) == 0 {
				t.Errorf("%s: expands to nothing", where)
			}
			for _, seq := range seqs {
				if len(seq) == 0 {
					t.Errorf("%s: has an empty expansion", where)
				}
				if spec.substr {
					continue
				}
				for _, w := range seq {
					check(where, w)
				}
			}
			if !spec.substr {
				for _, list := range []string{r.notAfter, r.notBefore, r.unless, r.needs, r.endOr} {
					for _, w := range strings.Fields(list) {
						check(where, w)
					}
				}
			}
			switch r.kind {
			case KindDone:
			case KindBlocked, KindDelegation:
				if r.scope != "" {
					t.Errorf("%s: a %s row with scope %q", where, r.kind, r.scope)
				}
			default:
				t.Errorf("%s: kind %q", where, r.kind)
			}
			if !slices.Contains(scopes, r.scope) {
				t.Errorf("%s: scope %q", where, r.scope)
			}
		}
	}
	for _, l := range languages {
		if l.substr {
			continue
		}
		for _, set := range []map[string]bool{l.negators, l.hypotheticals, l.imperatives, l.leadIns, l.conjunctions, l.linking, l.negAfter,
			l.askAfter, l.complementizers} {
			for w := range set {
				check(l.tag+" word list", w)
			}
		}
		for pair := range l.hypPairs {
			for _, w := range strings.Fields(pair) {
				check(l.tag+" pair "+pair, w)
			}
		}
	}
}

func TestExpand(t *testing.T) {
	got := expand("(i'm|i am) (still |)blocked")
	want := [][]string{{"i'm", "still", "blocked"}, {"i'm", "blocked"}, {"i", "am", "still", "blocked"}, {"i", "am", "blocked"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("expand (-want +got):\n%s", diff)
	}
	// A malformed pattern does not panic.
	_ = expand("(a|b")
	_ = expand(")(")
}
