package inject

// Split letters: "I g n o r e   a l l   p r e v i o u s   i n s t r u c t i o n s"
// or "i.g.n.o.r.e a.l.l p.r.e.v.i.o.u.s …" reads as an override to a model,
// and no phrase rule matches it. The phrase walk notes where splitRun
// one-letter words in a row start, each splitGap bytes after the one before
// with a separator between (phraseScan's singleLetter). Each such run is
// joined (unsplit: the one-byte separators between its letters removed, a
// wider gap read as a space), the phrase rules walk the joined text within
// span of each run (splitPhrases), and a match over a joined run is
// reported as "split." and the rule's name, at the rule's confidence, over
// the original bytes.

const (
	// splitRun is how many single letters in a row make a run: fewer are
	// initials ("U.S.A.", "e.g.", "a b c").
	splitRun = 5
	// splitGap is the distance of one letter of a run to the next: a
	// letter and a separator.
	splitGap = 2
	// maxWordGap is the widest gap between two words of a run ("e   a").
	maxWordGap = 4
)

// splitSeparator: the bytes that split a word's letters.
var splitSeparator = func() (t [256]bool) {
	for _, c := range []byte(" .-*|/+~\t") {
		t[c] = true
	}
	return t
}()

func isSplitSeparator(c byte) bool { return splitSeparator[c] }

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// unsplit returns w with the runs of single letters around starts (the
// walk's, in order) joined, and the map of offsets back to w; ok is false
// when none of them is a run of splitRun letters.
// Within a run, a letter followed by one separator and a letter joins it; a
// gap of two to maxWordGap separators between two single letters, or of
// one separator other than the run's first ("i.g.n.o.r.e a.l.l"), is a
// word break, read as one space.
func unsplit(w string, starts []int) (joined string, m latinMap, runs []region, ok bool) {
	var b []byte
	from := 0 // the bytes of w before from are in b
	removed := int32(0)
	for _, start := range starts {
		if start < from {
			continue // in the run joined last
		}
		i := max(from, splitRunStart(w, start))
		// a single letter at i: how far does its run go?
		letters, end := 1, i+1 // end: past the run's last letter
		var gaps []int         // the runs' word breaks, as offsets of their first separator
		var sep byte           // the run's first separator: one other byte is a word break too
		for j := end; ; {
			k := j
			for k < len(w) && k-j <= maxWordGap && isSplitSeparator(w[k]) {
				k++
			}
			gap := k - j
			if gap == 0 || gap > maxWordGap || k >= len(w) || !isASCIILetter(w[k]) || k+1 < len(w) && isWord(w[k+1]) {
				break
			}
			if sep == 0 && gap == 1 {
				sep = w[j]
			}
			if gap > 1 || w[j] != sep {
				gaps = append(gaps, j)
			}
			letters, end, j = letters+1, k+1, k+1
		}
		if letters < splitRun {
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(w))
		}
		b = append(b, w[from:i]...)
		runs = append(runs, region{s: len(b)})
		for j := i; j < end; {
			b = append(b, w[j])
			k := j + 1
			for k < end && !isASCIILetter(w[k]) {
				k++
			}
			if k == end {
				break
			}
			if len(gaps) > 0 && gaps[0] == j+1 { // a word break: one space
				gaps = gaps[1:]
				b = append(b, ' ')
				removed += int32(k - j - 2)
				m.at = append(m.at, int32(len(b)-1))
			} else {
				removed += int32(k - j - 1)
				m.at = append(m.at, int32(len(b)-1))
			}
			m.removed = append(m.removed, removed)
			j = k
		}
		runs[len(runs)-1].e = len(b)
		from = end
	}
	if b == nil {
		return "", latinMap{}, nil, false
	}
	return string(append(b, w[from:]...)), m, runs, true
}

// splitRunStart moves i, a single letter, back to the first letter of its
// run: the words before it in the run ("a l l   p r e v i o u s" from p).
func splitRunStart(w string, i int) int {
	for {
		k := i - 1
		for k >= 0 && i-k <= maxWordGap && isSplitSeparator(w[k]) {
			k--
		}
		if gap := i - 1 - k; gap == 0 || gap > maxWordGap || k < 0 || !isASCIILetter(w[k]) || k > 0 && isWord(w[k-1]) {
			return i
		}
		i = k
	}
}

// splitPhrases runs the phrase rules over w with the runs of single
// letters around starts joined and returns, with offsets into w, the
// matches that span a joined run and that no match of the same rule in
// found overlaps. Only the text within span of a joined run is walked
// again: a match over a run starts at most span bytes before its end and
// ends at most span bytes after (a spaced-out banner in a long result
// costs a few hundred bytes of walk, not a second walk of the window).
func splitPhrases(w string, starts []int, found []Finding) []Finding {
	joined, m, runs, ok := unsplit(w, starts)
	if !ok {
		return nil
	}
	byRule := matchesByRule(found)
	low := fold(joined)
	fences := fenced(low)
	var fs []Finding
	for k := 0; k < len(runs); {
		a, b := max(0, runs[k].s-span), min(len(low), runs[k].e+span)
		for k++; k < len(runs) && runs[k].s-span < b; k++ { // overlapping: one region
			b = min(len(low), runs[k].e+span)
		}
		// a may cut a word, which the walk then reads as one starting at a:
		// a match anchored there ends by a+span, before the run, and is
		// dropped below as joining nothing
		var fr []region
		for _, f := range fences {
			if f.e > a && f.s < b {
				fr = append(fr, region{max(f.s, a) - a, min(f.e, b) - a})
			}
		}
		for _, f := range phrases(joined[a:b], low[a:b], fr) {
			f.Start, f.End = f.Start+a, f.End+a
			fs = append(fs, f)
		}
	}
	var out []Finding
	for _, f := range fs {
		start, end := m.orig(f.Start), m.orig(f.End)
		if end-start == f.End-f.Start || byRule.overlaps(f.Rule, start, end) {
			continue // nothing joined in it, or the first pass has it
		}
		out = append(out, Finding{Rule: "split." + f.Rule, Confidence: f.Confidence, Start: start, End: end})
	}
	return out
}
