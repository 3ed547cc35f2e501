package scrub

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// TestFoldedACFindsWhatTheTrieFinds compares the walk of the scrubber's
// own patterns with an Aho-Corasick trie's over the lowered text
// (lowerASCII), hit for hit, on texts made of the patterns in any case,
// their prefixes and suffixes, and random bytes (ASCII and not).
func TestFoldedACFindsWhatTheTrieFinds(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	patterns := s.windowed.patterns
	trie := ahocorasick.NewTrieBuilder().AddStrings(patterns).Build()
	ac := s.windowed.trie
	r := rand.New(rand.NewPCG(20, 11))
	piece := func() string {
		switch r.IntN(6) {
		case 0, 1:
			p := patterns[r.IntN(len(patterns))]
			if r.IntN(2) == 0 {
				p = strings.ToUpper(p)
			}
			return p
		case 2:
			p := patterns[r.IntN(len(patterns))]
			return p[:r.IntN(len(p)+1)]
		case 3:
			p := patterns[r.IntN(len(patterns))]
			return p[r.IntN(len(p)+1):]
		case 4:
			b := make([]byte, r.IntN(8))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			return string(b)
		}
		return []string{" ", "\n", "-", "_", "=", "\"", "é", "\u212a", "K"}[r.IntN(9)]
	}
	hits := 0
	for k := range 3000 {
		var b strings.Builder
		n := r.IntN(60)
		if k%3 == 0 {
			n = r.IntN(1200) // long enough to be walked as two halves
		}
		for range n {
			b.WriteString(piece())
		}
		text := b.String()
		var want, got []acHit
		trie.Walk([]byte(lowerASCII(text)), func(end, n, p int64) bool {
			want = append(want, acHit{int(end), int(n), int(p)})
			return true
		})
		ac.walk(text, nil, func(end, n, p int) { got = append(got, acHit{end, n, p}) })
		// The trie reports the hits ending at one byte longest first; the
		// walk's order there may differ.
		cmp := func(x, y acHit) int {
			if x.end != y.end {
				return x.end - y.end
			}
			return x.pattern - y.pattern
		}
		if !slices.IsSortedFunc(got, func(x, y acHit) int { return x.end - y.end }) {
			t.Fatalf("%q: hits not in order of their ends: %v", text, got)
		}
		slices.SortFunc(want, cmp)
		slices.SortFunc(got, cmp)
		if !slices.Equal(want, got) {
			t.Fatalf("%q:\n trie %v\n walk %v", text, want, got)
		}
		hits += len(got)
		// With once: the first occurrence of those patterns only.
		once := make([]bool, len(patterns))
		for p := range once {
			once[p] = r.IntN(2) == 0
		}
		var first []acHit
		firstSeen := map[int]bool{}
		for _, h := range want { // sorted by end
			if !once[h.pattern] || !firstSeen[h.pattern] {
				first = append(first, h)
				firstSeen[h.pattern] = true
			}
		}
		got = got[:0]
		ac.walk(text, once, func(end, n, p int) { got = append(got, acHit{end, n, p}) })
		slices.SortFunc(got, cmp)
		if !slices.Equal(first, got) {
			t.Fatalf("%q, once:\n want %v\n walk %v", text, first, got)
		}
	}
	if hits < 10000 {
		t.Fatalf("only %d hits: the texts do not exercise the patterns", hits)
	}
	t.Logf("%d patterns, %d hits", len(patterns), hits)
}
