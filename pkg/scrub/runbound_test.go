package scrub

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"

	"github.com/zricethezav/gitleaks/v8/detect"
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
		"\t", "x", "9"}
	for _, a := range rr.anchors {
		noise = append(noise, a, strings.ToUpper(a), strings.ToLower(a))
	}
	anchor := rr.anchors[r.IntN(len(rr.anchors))]
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
			b.WriteString(anchor + run(r.IntN(3*rr.minRun)))
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

// The run rules' windows (gated and windowed rules of that shape) find
// what their expression finds over the whole foldSafe text, match for match (start and every group; a match that ends with
// the line's \n in the text ends at the window's end), and gitleaks run
// on the windows reports the secrets it reports over the whole text.
func TestRunRulesFindWhatTheWholeTextRegexpFinds(t *testing.T) {
	s := newScrubber(t)
	r := rand.New(rand.NewPCG(7, 40))
	var ids []string
	total := 0
	type runOf struct {
		id   string
		run  *runRule
		full *detect.Detector // the rule over the whole text, as gitleaks runs it
	}
	var rules []runOf
	for _, g := range s.gated {
		if g.run != nil {
			rules = append(rules, runOf{g.id, g.run, g.d})
		}
	}
	for _, w := range s.windowed.rules {
		if w.run != nil {
			rules = append(rules, runOf{w.id, w.run, w.d}) // w.d has no keywords: it runs on every text
		}
	}
	for _, g := range rules {
		ids = append(ids, g.id)
		rule := g.full.Config.Rules[g.id]
		re := regexp.MustCompile(rule.Regex.String())
		parsed, err := syntax.Parse(re.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		parsed = parsed.Simplify()
		var samples []string
		for try := 0; len(samples) < 20 && try < 2000; try++ {
			var b strings.Builder
			sample(r, parsed, &b)
			// run windows are used for foldSafe texts only: the long s and
			// the Kelvin sign the sample may hold become s and k
			x := strings.NewReplacer("\u017f", "s", "\u212a", "k").Replace(b.String())
			if re.MatchString(x) && foldSafe(x) {
				samples = append(samples, x)
			}
		}
		matches, secrets := 0, 0
		for i := range 800 {
			if len(samples) == 0 {
				t.Fatalf("%s: no sample of its expression", g.id)
			}
			doc := runDoc(r, g.run, samples)
			if !foldSafe(doc) {
				t.Fatalf("doc %d is not foldSafe: %q", i, doc)
			}
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
			for _, f := range g.full.DetectString(doc) {
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
	for _, id := range []string{"jwt", "vault-service-token"} {
		if !slices.Contains(ids, id) {
			t.Errorf("%s is not a run rule (run rules: %v)", id, ids)
		}
	}
	t.Logf("%d run rules", len(ids))
}
