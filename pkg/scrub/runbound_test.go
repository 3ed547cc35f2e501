package scrub

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// runDoc is a text around samples of a run rule's expression: the samples
// whole, cut short, with a byte changed, glued to word characters or to
// more run bytes, the anchor in prose ("they", "key"), long runs of the
// rule's bytes, escaped and real line ends, quotes.
func runDoc(r *rand.Rand, rr *runRule, samples []string) string {
	var set []byte
	for c := range 256 {
		if rr.inRun[c] {
			set = append(set, byte(c))
		}
	}
	run := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[r.IntN(len(set))]
		}
		return string(b)
	}
	noise := []string{"they said the key is", "é — “x”", "lorem ipsum ", `"`, "'", "`", ";", "\\n", "\\r", "\\", "=", ".", "-", "_",
		"\t", "x", "9", rr.anchor, strings.ToUpper(rr.anchor), strings.ToLower(rr.anchor)}
	var b strings.Builder
	for range 1 + r.IntN(14) {
		switch r.IntN(6) {
		case 0, 1:
			s := samples[r.IntN(len(samples))]
			switch r.IntN(4) {
			case 0:
				s = s[:r.IntN(len(s)+1)]
			case 1:
				i := r.IntN(len(s))
				s = s[:i] + string(set[r.IntN(len(set))]) + s[i+1:]
			}
			b.WriteString(s)
		case 2:
			b.WriteString(rr.anchor + run(r.IntN(3*rr.minRun)))
		case 3:
			b.WriteString(run(r.IntN(2 * rr.minRun)))
		default:
			b.WriteString(noise[r.IntN(len(noise))])
		}
		if r.IntN(2) == 0 {
			b.WriteString([]string{"\n", " ", "\r\n", "\n\n", `"`, ";", "\\n"}[r.IntN(7)])
		}
	}
	return b.String()
}

// The run rules' windows find what their expression finds over the whole
// text, match for match (start and every group; a match that ends with
// the line's \n in the text ends at the window's end), and gitleaks run
// on the windows reports the secrets it reports over the whole text.
func TestRunRulesFindWhatTheWholeTextRegexpFinds(t *testing.T) {
	s := newScrubber(t)
	r := rand.New(rand.NewPCG(7, 40))
	var ids []string
	total := 0
	for _, g := range s.gated {
		if g.run == nil {
			continue
		}
		ids = append(ids, g.id)
		rule := g.d.Config.Rules[g.id]
		re := regexp.MustCompile(rule.Regex.String())
		parsed, err := syntax.Parse(re.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		parsed = parsed.Simplify()
		var samples []string
		for len(samples) < 20 {
			var b strings.Builder
			sample(r, parsed, &b)
			if re.MatchString(b.String()) {
				samples = append(samples, b.String())
			}
		}
		matches, secrets := 0, 0
		for i := range 1500 {
			doc := runDoc(r, g.run, samples)
			want := re.FindAllStringSubmatchIndex(doc, -1)
			var got [][]int
			gotSecrets := map[string]bool{}
			for _, w := range g.run.windows(doc) {
				for _, m := range re.FindAllStringSubmatchIndex(doc[w.a:w.b], -1) {
					for j := range m {
						if m[j] >= 0 {
							m[j] += w.a
						}
					}
					if m[1] == w.b && w.b < len(doc) && doc[w.b] == '\n' {
						m[1]++
					}
					got = append(got, m)
				}
				for _, f := range g.run.d.DetectString(doc[w.a:w.b]) {
					gotSecrets[f.Secret] = true
				}
			}
			if !slices.EqualFunc(want, got, slices.Equal[[]int]) {
				t.Fatalf("%s, doc %d: the whole text's matches %v, the windows' %v\n%q", g.id, i, want, got, doc)
			}
			wantSecrets := map[string]bool{}
			for _, f := range g.d.DetectString(doc) {
				wantSecrets[f.Secret] = true
			}
			if len(wantSecrets) != len(gotSecrets) {
				t.Fatalf("%s, doc %d: gitleaks over the whole text finds %v, over the windows %v\n%q", g.id, i, wantSecrets, gotSecrets, doc)
			}
			for k := range wantSecrets {
				if !gotSecrets[k] {
					t.Fatalf("%s, doc %d: gitleaks over the whole text finds %q, not over the windows\n%q", g.id, i, k, doc)
				}
			}
			matches += len(want)
			secrets += len(wantSecrets)
		}
		if matches < 300 {
			t.Errorf("%s: only %d matches in the documents: they do not exercise the windows", g.id, matches)
		}
		total += matches
		t.Logf("%s: %d matches, %d secrets", g.id, matches, secrets)
	}
	if !slices.Contains(ids, "jwt") {
		t.Errorf("jwt is not a run rule (run rules: %v)", ids)
	}
}
