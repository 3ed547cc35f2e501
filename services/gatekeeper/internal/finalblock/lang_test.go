package finalblock

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// langCase is a message in one language and the phrases it must yield.
type langCase struct {
	in   string
	want []ks
}

// langCases are the cases of the tables other than English, by tag; each
// table's test file registers its own.
var langCases = map[string][]langCase{}

func register(tag string, cases []langCase) []langCase {
	langCases[tag] = cases
	return cases
}

// Shorthands for the cases.
func d(scope, text string) ks { return ks{KindDone, scope, text} }
func b(text string) ks        { return ks{KindBlocked, "", text} }
func q(text string) ks        { return ks{KindDelegation, "", text} }

// runLang checks the cases of a table: the phrases, and that each comes
// from the table (or is status notation).
func runLang(t *testing.T, tag string) {
	t.Helper()
	cases := langCases[tag]
	if len(cases) < 20 {
		t.Fatalf("%s: %d cases; want at least 20", tag, len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			m := Parse(tc.in)
			var got []ks
			for _, p := range m.Phrases {
				got = append(got, ks{p.Kind, p.Scope, p.Text})
				// Rows that read the same in both Chinese scripts are "zh".
				if p.Lang != tag && p.Lang != langNotation && (p.Lang != "zh" || tag != "zh-Hans" && tag != "zh-Hant") {
					t.Errorf("phrase %+v: language %q, want %q", p, p.Lang, tag)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(ks{})); diff != "" {
				t.Errorf("phrases (-want +got):\n%s", diff)
			}
			checkInvariants(t, tc.in, m)
		})
	}
}

// TestEveryRowMatches: every row of every table other than English is
// matched by at least one of its language's cases, so no row is dead or
// untested. (English rows are covered by phrase_test.go, scope_test.go and
// status_test.go.)
func TestEveryRowMatches(t *testing.T) {
	hit := map[int]bool{}
	matchHook = func(r *compiled) { hit[r.id] = true }
	defer func() { matchHook = nil }()
	for _, cases := range langCases {
		for _, tc := range cases {
			Parse(tc.in)
		}
	}
	for _, r := range allRules {
		if r.lang.tag == "en" || r.lang.tag == langNotation {
			continue
		}
		if !hit[r.id] {
			t.Errorf("%s row %q (%s) matches none of the cases", r.lang.tag, r.phrase, r.kind)
		}
	}
	for _, l := range languages {
		if !slices.ContainsFunc(allRules, func(r *compiled) bool {
			return r.lang == l
		}) {
			t.Errorf("table %s has no rows", l.tag)
		}
	}
}

// TestEveryGroupHasANearMiss: in every table other than English, each
// kind of phrase (done of each scope, blocked, delegation) is also
// cancelled by at least one of its language's cases: the words of one of
// its rows found, and a negation, question, hypothetical or excluded word
// around them. (Each row has a case that matches it: TestEveryRowMatches.)
func TestEveryGroupHasANearMiss(t *testing.T) {
	type group struct{ lang, kind, scope string }
	missed := map[group]bool{}
	missHook = func(r *compiled) { missed[group{r.lang.tag, r.kind, r.scope}] = true }
	defer func() { missHook = nil }()
	for _, cases := range langCases {
		for _, tc := range cases {
			Parse(tc.in)
		}
	}
	seen := map[group]bool{}
	for _, r := range allRules {
		g := group{r.lang.tag, r.kind, r.scope}
		if g.lang == "en" || g.lang == langNotation || seen[g] {
			continue
		}
		seen[g] = true
		if !missed[g] {
			t.Errorf("%s %s %s: no case cancels a phrase of this kind", g.lang, g.kind, g.scope)
		}
	}
}
