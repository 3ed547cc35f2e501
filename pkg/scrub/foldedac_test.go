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
	patterns, trie, ac := walkers(t)
	r := rand.New(rand.NewPCG(20, 11))
	hits := 0
	for k := range 3000 {
		n := r.IntN(60)
		if k%3 == 0 {
			n = r.IntN(1200) // long enough to be walked as parts side by side
		}
		text := patternText(r, patterns, n, true)
		once := make([]bool, len(patterns))
		for p := range once {
			once[p] = r.IntN(2) == 0
		}
		hits += compareWalk(t, trie, ac, text, once)
	}
	if hits < 10000 {
		t.Fatalf("only %d hits: the texts do not exercise the patterns", hits)
	}
	t.Logf("%d patterns, %d hits", len(patterns), hits)
}

// FuzzFoldedAC holds the walk to the trie on any text (the longer seeds
// are walked as parts side by side), with any strings reported once.
func FuzzFoldedAC(f *testing.F) {
	patterns, trie, ac := walkers(f)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 10, 300, 700} {
		f.Add(patternText(r, patterns, n, true), uint64(n))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		once := make([]bool, len(patterns))
		for p := range once {
			once[p] = (seed>>(p%64))&1 == 1
		}
		compareWalk(t, trie, ac, text, once)
	})
}

// walkers returns the scrubber's numbered strings, a library trie of them
// and their foldedAC.
func walkers(tb testing.TB) ([]string, *ahocorasick.Trie, *foldedAC) {
	s, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	patterns := s.windowed.patterns
	return patterns, ahocorasick.NewTrieBuilder().AddStrings(patterns).Build(), newFoldedAC(patterns)
}

// compareWalk checks ac's walk of text against the trie's over the
// lowered text, without and with once, and returns the hits.
func compareWalk(t *testing.T, trie *ahocorasick.Trie, ac *foldedAC, text string, once []bool) int {
	t.Helper()
	var want, got []acHit
	trie.Walk([]byte(lowerASCII(text)), func(end, n, p int64) bool {
		want = append(want, acHit{int(end), int(n), int(p)})
		return true
	})
	// Every walk reuses ws, as find's pooled scratch does: a walk with once
	// first leaves patterns reported and states quiet that the next walks
	// must not inherit.
	ws := new(walkScratch)
	ac.walk(text, once, ws, func(int, int, int) {})
	ac.walk(text, nil, ws, func(end, n, p int) { got = append(got, acHit{end, n, p}) })
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
	// With once: the first occurrence of those patterns only.
	var first []acHit
	firstSeen := map[int]bool{}
	for _, h := range want { // sorted by end
		if !once[h.pattern] || !firstSeen[h.pattern] {
			first = append(first, h)
			firstSeen[h.pattern] = true
		}
	}
	n := len(got)
	got = got[:0]
	ac.walk(text, once, ws, func(end, n, p int) { got = append(got, acHit{end, n, p}) })
	slices.SortFunc(got, cmp)
	if !slices.Equal(first, got) {
		t.Fatalf("%q, once:\n want %v\n walk %v", text, first, got)
	}
	return n
}

// patternText is n pieces of text: patterns in any case, their prefixes
// and suffixes, random bytes (ASCII and not), separators, and, with
// folding, the characters that fold to ASCII letters.
func patternText(r *rand.Rand, patterns []string, n int, folding bool) string {
	var b strings.Builder
	for range n {
		switch r.IntN(6) {
		case 0, 1:
			p := patterns[r.IntN(len(patterns))]
			if r.IntN(2) == 0 {
				p = strings.ToUpper(p)
			}
			b.WriteString(p)
		case 2:
			p := patterns[r.IntN(len(patterns))]
			b.WriteString(p[:r.IntN(len(p)+1)])
		case 3:
			p := patterns[r.IntN(len(patterns))]
			b.WriteString(p[r.IntN(len(p)+1):])
		case 4:
			for range r.IntN(8) {
				b.WriteByte(byte(r.IntN(256)))
			}
		default:
			seps := []string{" ", "\n", "-", "_", "=", "\"", "é", "K", "\u212a"}
			if !folding {
				seps = seps[:len(seps)-1]
			}
			b.WriteString(seps[r.IntN(len(seps))])
		}
	}
	return b.String()
}
