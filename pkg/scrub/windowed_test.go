package scrub

import (
	"cmp"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// sample writes a random string that re may match (assertions are not
// checked: the caller keeps the samples the rule's expression matches).
func sample(r *rand.Rand, re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && r.IntN(2) == 0 {
				c = unicode.SimpleFold(c)
			}
			b.WriteRune(c)
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return
		}
		i := 2 * r.IntN(len(re.Rune)/2)
		lo, hi := re.Rune[i], re.Rune[i+1]
		if hi > 0x7f && lo <= 0x7f {
			hi = 0x7f // mostly ASCII
		}
		b.WriteRune(lo + rune(r.IntN(int(min(hi-lo, 1<<16))+1)))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte("ab9 =:_-"[r.IntN(8)])
	case syntax.OpCapture:
		sample(r, re.Sub[0], b)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			sample(r, s, b)
		}
	case syntax.OpAlternate:
		sample(r, re.Sub[r.IntN(len(re.Sub))], b)
	case syntax.OpQuest, syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		lo, hi := 0, 1
		switch re.Op {
		case syntax.OpStar:
			hi = 3
		case syntax.OpPlus:
			lo, hi = 1, 4
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 8
			}
		}
		n := lo
		if hi > lo {
			n += r.IntN(hi - lo + 1)
		}
		for range n {
			sample(r, re.Sub[0], b)
		}
	}
}

// ruleSamples are a few strings each rule's expression matches, made from
// the expression itself.
func ruleSamples(t testing.TB, s *Scrubber, r *rand.Rand) []string {
	t.Helper()
	var out []string
	for _, w := range s.windowed.rules {
		rule := s.windowed.whole.Config.Rules[w.id]
		re, err := syntax.Parse(rule.Regex.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		re = re.Simplify()
		m := regexp.MustCompile(rule.Regex.String())
		for range 40 {
			var b strings.Builder
			sample(r, re, &b)
			if m.MatchString(b.String()) {
				out = append(out, b.String())
				if len(out)%3 == 0 {
					break
				}
			}
		}
	}
	return out
}

// rulesDoc is a tool output of lines holding rule samples, keywords,
// noise, non-ASCII text and long lines.
func rulesDoc(r *rand.Rand, samples []string) string {
	noise := []string{"ok  \tgithub.com/acme/app\t0.412s", "é ü 😀 — “quoted”", "the key is in the vault", "token refreshed", "",
		strings.Repeat("lorem ipsum dolor sit amet ", 20), "sentry jira confluence atlassian ey s. sk", `"api_key": "`, "\t", "="}
	var b strings.Builder
	for range 1 + r.IntN(12) {
		switch r.IntN(3) {
		case 0:
			b.WriteString(samples[r.IntN(len(samples))])
		default:
			b.WriteString(noise[r.IntN(len(noise))])
		}
		b.WriteString([]string{"\n", " ", "", "\r\n", `"`, "\n\n", ";"}[r.IntN(7)])
	}
	return b.String()
}

// The windowed rules find every secret gitleaks finds running every rule
// over the whole text, on texts built from samples of every windowed
// rule's own expression.
func TestWindowedRulesFindWhatAFullScanFinds(t *testing.T) {
	s := newScrubber(t)
	full := fullScan(t)
	r := rand.New(rand.NewPCG(5, 6))
	samples := ruleSamples(t, s, r)
	if len(samples) < len(s.windowed.rules) {
		t.Fatalf("%d samples for %d windowed rules", len(samples), len(s.windowed.rules))
	}
	found, extra := 0, 0
	rules := map[string]bool{}
	for i := range 1500 {
		doc := rulesDoc(r, samples)
		want := full(doc)
		got := map[string]bool{}
		for _, f := range s.find(doc) {
			got[f.secret] = true
			rules[f.rule] = true
		}
		for sec := range want {
			if !got[sec] {
				t.Fatalf("doc %d: a whole-text scan finds %q, the scrubber does not\n%q", i, sec, doc)
			}
		}
		found += len(want)
		extra += len(got) - len(want)
	}
	if len(rules) < 100 {
		t.Fatalf("secrets of only %d rules found: the documents do not exercise the windows", len(rules))
	}
	t.Logf("%d secrets of %d rules found by both; %d more by the scrubber", found, len(rules), extra)
}

// A text holding a character that folds to an ASCII letter is scanned
// whole: the Kelvin sign makes "AKIA…" a match of (?i) rules, which a
// byte-lowered search for "akia" would not find.
func TestFoldingCharactersAreScannedWhole(t *testing.T) {
	s := newScrubber(t)
	full := fullScan(t)
	for _, c := range []string{"\u212a", "\u017f", "\u0130"} {
		doc := "x " + c + " api_key = \"Zk3pQ9vX2mL7nR4tW8yB1cF6\"\n" + awsKey + "\nsentry_token=" + c + "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2"
		if foldSafe(doc) {
			t.Fatalf("%q: foldSafe", c)
		}
		got := map[string]bool{}
		for _, f := range s.find(doc) {
			got[f.secret] = true
		}
		for sec := range full(doc) {
			if !got[sec] {
				t.Errorf("%q: a whole-text scan finds %q, the scrubber does not", c, sec)
			}
		}
	}
}

func FuzzWindowedRules(f *testing.F) {
	s := newScrubber(f)
	full := fullScan(f)
	r := rand.New(rand.NewPCG(7, 8))
	samples := ruleSamples(f, s, r)
	for range 30 {
		f.Add(rulesDoc(r, samples))
	}
	f.Fuzz(func(t *testing.T, doc string) {
		got := map[string]bool{}
		for _, fd := range s.find(doc) {
			got[fd.secret] = true
		}
		for sec := range full(doc) {
			if !got[sec] {
				t.Fatalf("a whole-text scan finds %q, the scrubber does not", sec)
			}
		}
	})
}

func TestMaxWidth(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    int
	}{
		{`abc`, 3}, {`(?i)key`, 3}, {`[a-z]{4}`, 4}, {`(?i)[a-z]{4}`, 4}, {`é`, 2}, {`(?i)é`, 2}, {`.`, 4},
		{`x{2,5}|yy`, 5}, {`\bAKIA[A-Z2-7]{16}\b`, 20}, {`a+`, -1}, {`a*b`, -1}, {`[^a]`, 4}, {`(?i)ſ`, 1}, {`ſ`, 2},
	} {
		re, err := syntax.Parse(tc.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := maxWidth(re); got != tc.want {
			t.Errorf("maxWidth(%q) = %d, want %d", tc.pattern, got, tc.want)
		}
	}
}

// TestFindSeesWhatTheTextHolds holds windowIndex.find's report of which
// numbered strings a text holds, and where generic-api-key's keywords
// are, to an Aho-Corasick trie of every string over the lowered text: the
// single bytes that matter once are found by a byte search rather than
// by the walk, and must be seen all the same (in either case; never
// as an upper-case pattern byte, which lowerASCII cannot hold).
func TestFindSeesWhatTheTextHolds(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	x := s.windowed
	if len(x.onceBytes) == 0 {
		t.Fatal("no single byte is searched apart from the walk: the test checks nothing of it")
	}
	trie := ahocorasick.NewTrieBuilder().AddStrings(x.patterns).Build()
	r := rand.New(rand.NewPCG(7, 3))
	bytesSeen := 0
	fs := new(findScratch)
	for k := range 1500 {
		n := r.IntN(40)
		if k%5 == 0 {
			n = r.IntN(1500)
		}
		text := patternText(r, x.patterns, n, false)
		if k%7 == 0 { // few bytes: most single-byte strings absent
			text = strings.ToUpper(text[:min(len(text), r.IntN(6))])
		}
		want := make([]bool, len(x.patterns))
		var wantGeneric []span
		trie.Walk([]byte(lowerASCII(text)), func(end, n, p int64) bool {
			want[p] = true
			if x.isGeneric[p] {
				wantGeneric = append(wantGeneric, span{int(end - n + 1), int(end + 1)})
			}
			return true
		})
		_, seen, generic := x.find(text, fs) // one scratch for every text: what a text leaves in it must not leak into the next
		for p := range want {
			if seen[p] != want[p] {
				t.Fatalf("%q: %q seen %v, the trie says %v", text, x.patterns[p], seen[p], want[p])
			}
		}
		for _, p := range x.onceBytes {
			if seen[p] {
				bytesSeen++
			}
		}
		slices.SortFunc(wantGeneric, func(a, b span) int { return cmp.Or(a.b-b.b, a.a-b.a) })
		slices.SortFunc(generic, func(a, b span) int { return cmp.Or(a.b-b.b, a.a-b.a) })
		if !slices.Equal(generic, wantGeneric) {
			t.Fatalf("%q: generic keywords at %v, the trie says %v", text, generic, wantGeneric)
		}
	}
	if bytesSeen < 1000 {
		t.Fatalf("single bytes seen only %d times: the texts do not exercise them", bytesSeen)
	}
}

// A scratch goes back to the pool without what an exceptionally long or
// hit-dense text grew it to, and keeps what a usual one did.
func TestReleaseDropsWhatALongTextGrew(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	x := s.windowed
	// Every other byte ends a keyword: many more hits than a scratch keeps.
	dense := strings.Repeat("key=", maxKeptHits*chains)
	fs := new(findScratch)
	x.find(dense, fs)
	grown := 0
	for _, h := range fs.walk.held {
		grown = max(grown, cap(h))
	}
	if grown <= maxKeptHits {
		t.Fatalf("the dense text's held hits reached %d, not past %d: the test checks nothing", grown, maxKeptHits)
	}
	fs.release()
	for k, h := range fs.walk.held {
		if cap(h) > maxKeptHits {
			t.Errorf("chain %d keeps %d hits", k, cap(h))
		}
	}
	small := new(findScratch)
	x.find(strings.Repeat("key=", 256*chains), small)
	kept := cap(small.walk.held[1])
	small.release()
	if kept == 0 || cap(small.walk.held[1]) != kept {
		t.Errorf("a usual text's %d held hits were not kept (%d)", kept, cap(small.walk.held[1]))
	}
}
