package inject

import (
	"cmp"
	"regexp"
	"strings"
)

// Leetspeak: "1gn0r3 4ll pr3v10u5 1n5truct10n5" reads as an override to a
// model, and no phrase rule matches it. A window in which a word made of
// letters and the digits that stand for letters (0 o, 1 i or l, 3 e, 4 a,
// 5 s, 7 t) spells a word of the phrase rules' vocabulary is read a second
// time with every such word spelled in letters (deleet: byte for byte, so
// offsets are the window's), and a phrase rule that matches there over a
// respelled byte is reported as "leet." and the rule's name, at the rule's
// confidence. Numbers, hashes and identifiers
// (2026, sha256, utf8, x86_64) are no such words: a word with no letter,
// or with a digit that stands for none (2, 6, 8, 9), stays as it is. The
// signs @ and $ are left out: read as letters they join an address's name
// to its domain ("ops@example" as "opsaexample") and a shell variable to
// its name.

// leetLetter is the letter a byte stands for in a leet word (0: none); a 1
// is an i or an l (spellLeet).
var leetLetter = func() (t [256]byte) {
	for _, p := range []string{"0o", "1i", "3e", "4a", "5s", "7t"} {
		t[p[0]] = p[1]
	}
	return t
}()

// leetVocabulary holds the words of two letters or more in the phrase
// rules' expressions ("ignore", "previous", "instructions", "all", …):
// a window is read again only when a leet word spells one of them.
var leetVocabulary = func() map[string]bool {
	v := map[string]bool{}
	word := regexp.MustCompile(`[a-z]{2,}`)
	for _, r := range rules {
		src := r.re.String()
		// letters that follow a backslash are escapes (\s, \b), not words
		src = regexp.MustCompile(`\\[a-z]`).ReplaceAllString(src, " ")
		for _, w := range word.FindAllString(src, -1) {
			v[w] = true
		}
		for _, a := range r.anchors {
			for _, w := range word.FindAllString(a, -1) {
				v[w] = true
			}
		}
	}
	return v
}()

// isLeetWordByte: the bytes of a leet word in the folded text.
func isLeetWordByte(c byte) bool { return isLetter(c) || '0' <= c && c <= '9' }

// deleet returns low (a folded window) with every leet word spelled in
// letters, byte for byte; ok is false, and nothing is built, when no leet
// word of four bytes or more spells a word of leetVocabulary (shorter ones,
// "h1" for "hi", "1f" for "if", are headings and hex).
func deleet(low string) (d string, ok bool) {
	var words [][2]int // a text's numbers and identifiers are many: build only when ok
	var buf [maxLeetWord]byte
	i := 0
	for i < len(low) {
		// to the next byte that may stand for a letter, 32 bytes a step,
		// then eight (the steps' slicing and bounds checks cost more than
		// their tests: eight bytes a step, this pass was 7% of a scan of
		// the page's instructions; this way, 4%)
		for ; i+32 <= len(low); i += 32 {
			w := low[i : i+32] // one bounds check for the four loads
			if mayHoldLeet(leUint64(w))|mayHoldLeet(leUint64(w[8:]))|mayHoldLeet(leUint64(w[16:]))|mayHoldLeet(leUint64(w[24:])) != 0 {
				break
			}
		}
		for i+8 <= len(low) && mayHoldLeet(leUint64(low[i:])) == 0 {
			i += 8
		}
		if i >= len(low) {
			break
		}
		if leetLetter[low[i]] == 0 {
			i++
			continue
		}
		s, e := i, i+1
		for s > 0 && isLeetWordByte(low[s-1]) {
			s--
		}
		for e < len(low) && isLeetWordByte(low[e]) {
			e++
		}
		if n := e - s; n <= maxLeetWord && spellLeet(buf[:n], low[s:e]) {
			words = append(words, [2]int{s, e})
			ok = ok || n >= 4 && inLeetVocabulary(buf[:n])
		}
		i = e
	}
	if !ok {
		return "", false
	}
	b := []byte(low)
	for _, w := range words {
		spellLeet(b[w[0]:w[1]], low[w[0]:w[1]])
	}
	return string(b), true
}

// maxLeetWord bounds the words read as leet: longer runs of letters and
// digits are identifiers, hashes and encodings.
const maxLeetWord = 24

// inLeetVocabulary reports whether w, or w less a plural s, is a word of
// leetVocabulary.
func inLeetVocabulary(w []byte) bool {
	return leetVocabulary[string(w)] || len(w) > 1 && w[len(w)-1] == 's' && leetVocabulary[string(w[:len(w)-1])]
}

// mayHoldLeet is not 0 when one of the eight bytes of x is '0'-'7'
// (haszero of x's bytes with their low three bits cleared, less '0', as in
// the bit-twiddling hacks).
func mayHoldLeet(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	v := x&(0xf8*ones) ^ 0x30*ones
	return (v - ones) &^ v & highs
}

// spellLeet writes the leet word w spelled in letters to dst (len(w)
// bytes) and reports whether w is one: false for a word with no letter,
// with no digit that stands for one, or with a digit that stands for none.
// A 1 is read as the word of the vocabulary it makes, all i's or all l's
// ("a11" is "all", "1gn0re" "ignore"), else as an l after a, e, o or u and
// an i elsewhere ("ru1es", "prev10us").
func spellLeet(dst []byte, w string) bool {
	letters, leet, ones := false, false, false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case isLetter(c):
			letters = true
		case leetLetter[c] == 0:
			return false // 2, 6, 8, 9
		default:
			leet = true
			ones = ones || c == '1'
		}
		dst[i] = cmp.Or(leetLetter[c], c)
	}
	if !letters || !leet || !ones || inLeetVocabulary(dst) {
		return letters && leet
	}
	for i := range dst {
		if w[i] == '1' {
			dst[i] = 'l'
		}
	}
	if inLeetVocabulary(dst) {
		return true
	}
	for i := range dst {
		if w[i] == '1' {
			dst[i] = 'i'
			if i > 0 && strings.IndexByte("aeou", dst[i-1]) >= 0 {
				dst[i] = 'l'
			}
		}
	}
	return true
}

// leetPhrases runs the phrase rules over low (the folded window w) spelled
// in letters and returns the matches that span a respelled byte and that
// no match of the same rule in found (the ASCII pass's) overlaps.
func leetPhrases(w, low string, fences []region, found []Finding) []Finding {
	d, ok := deleet(low)
	if !ok {
		return nil
	}
	byRule := matchesByRule(found)
	var out []Finding
	for _, f := range phrases(w, d, fences) {
		if d[f.Start:f.End] == low[f.Start:f.End] || byRule.overlaps(f.Rule, f.Start, f.End) {
			continue
		}
		out = append(out, Finding{Rule: "leet." + f.Rule, Confidence: f.Confidence, Start: f.Start, End: f.End})
	}
	return out
}
