package inject

import (
	"cmp"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"go.mau.fi/util/confusable"
	"golang.org/x/text/unicode/norm"
)

// Homoglyphs: "Ign\u043ere all previous instructions" (a Cyrillic o) reads
// as an override to a model and to a human, and no phrase rule matches it
// on the ASCII fold. A window that holds characters Unicode lists as
// confusable with an ASCII letter or digit (UTS #39's confusables through
// go.mau.fi/util/confusable, as the Stop gate reads claims: Cyrillic and
// Greek look-alikes, the dotless i, fullwidth and mathematical letters, …)
// is read a second time with each such character replaced by its letter
// (latinize), and a phrase rule that matches there over at least one
// replaced character is reported as "confusable." and the rule's name, at
// the rule's confidence, over the original text. Text in other scripts
// latinizes to no English phrase; an accented letter (é, ñ) is a letter
// and an accent, not a look-alike, and stays as it is.

// confusableBlocks are the blocks whose characters are looked up: Latin
// supplements and extensions, IPA, Greek, Cyrillic, phonetic extensions,
// letter-like symbols and Roman numerals, enclosed alphanumerics,
// fullwidth forms, mathematical alphanumerics.
var confusableBlocks = [][2]rune{
	{0x0080, 0x02AF}, {0x0370, 0x052F}, {0x1D00, 0x1DBF}, {0x1E00, 0x1FFF}, {0x2100, 0x218F},
	{0x2460, 0x24FF}, {0xFF00, 0xFFEF}, {0x1D400, 0x1D7FF},
}

// lookAlikes holds, for each character of confusableBlocks that looks
// like one ASCII letter or digit (lookAlike), that byte, lowered: Latin,
// Greek and Cyrillic (below lowLimit) in an array, the rest in a map.
type lookAlikes struct {
	low  [lowLimit]byte // 0: none
	high map[rune]byte
	n    int
}

const lowLimit = 0x530

// letter is the ASCII letter or digit r looks like.
func (l *lookAlikes) letter(r rune) (byte, bool) {
	if r < lowLimit {
		return l.low[r], l.low[r] != 0
	}
	c, ok := l.high[r]
	return c, ok
}

// confusableLetters is built the first time a window holds a non-ASCII
// byte, or by Prepare (about 3,300 characters looked up).
var confusableLetters = sync.OnceValue(func() *lookAlikes {
	l := &lookAlikes{high: map[rune]byte{}}
	for _, b := range confusableBlocks {
		for r := b[0]; r <= b[1]; r++ {
			c, ok := lookAlike(r)
			switch {
			case !ok:
				continue
			case r < lowLimit:
				l.low[r] = c
			default:
				l.high[r] = c
			}
			l.n++
		}
	}
	return l
})

// lookAlike is the ASCII letter or digit r stands for, lowered: its
// compatibility form (NFKC: a fullwidth or mathematical letter is that
// letter) or else its UTS #39 skeleton. The skeleton's prototype for the
// capital I, the l and the 1 alike is "l", so a capital that skeletons to
// it (a Cyrillic or Greek capital I) is read as "i", what a reader sees.
func lookAlike(r rune) (byte, bool) {
	c, ok := asciiAlnum(norm.NFKC.String(string(r)))
	if !ok {
		if c, ok = asciiAlnum(confusable.Skeleton(string(r))); ok && c == 'l' && unicode.IsUpper(r) {
			c = 'i'
		}
	}
	return c, ok
}

// asciiAlnum is s lowered when it is one ASCII letter or digit.
func asciiAlnum(s string) (byte, bool) {
	if len(s) != 1 {
		return 0, false
	}
	c := s[0]
	if isUpper(c) {
		c += 'a' - 'A'
	}
	return c, isLetter(c) || '0' <= c && c <= '9'
}

// Prepare builds the table of look-alike characters that a scan otherwise
// builds the first time it reads a non-ASCII byte (a few milliseconds).
func Prepare() { confusableLetters() }

// A latinMap maps offsets in a latinized text back to the text it was
// made from: each replaced character made its bytes one.
type latinMap struct {
	at      []int32 // where each replaced character is in the latinized text, in order
	removed []int32 // the bytes removed by it and the ones before it
}

// orig is the offset in the original text of offset x of the latinized one
// (x may be its length).
func (m latinMap) orig(x int) int {
	k, _ := slices.BinarySearch(m.at, int32(x)) // the replacements before x
	if k == 0 {
		return x
	}
	return x + int(m.removed[k-1])
}

// latinize returns w with each confusable character replaced by its
// letter, and the map of offsets back to w; ok is false, and nothing is
// built, when w has no such character. Runs of ASCII bytes are copied
// whole; only the other characters are looked up.
func latinize(w string) (lat string, m latinMap, ok bool) {
	letters := confusableLetters()
	var b []byte
	from := 0 // the bytes of w before from are in b
	for i := 0; i < len(w); {
		if w[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(w[i:])
		c, found := letters.letter(r)
		if !found {
			i += n
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(w))
		}
		b = append(b, w[from:i]...)
		m.at = append(m.at, int32(len(b)))
		b = append(b, c)
		removed := int32(n - 1)
		if k := len(m.removed); k > 0 {
			removed += m.removed[k-1]
		}
		m.removed = append(m.removed, removed)
		i += n
		from = i
	}
	if b == nil {
		return "", latinMap{}, false
	}
	return string(append(b, w[from:]...)), m, true
}

// confusablePhrases runs the phrase rules over w latinized and returns,
// with offsets into w, the matches that span a replaced character and that
// no match of the same rule in found (the ASCII pass's) overlaps: a rule
// whose expression reads any character ("<system>" and 40 more) matches
// there either way.
func confusablePhrases(w string, found []Finding) []Finding {
	lat, m, ok := latinize(w)
	if !ok {
		return nil
	}
	byRule := matchesByRule(found)
	low := fold(lat)
	var out []Finding
	for _, f := range phrases(lat, low, fenced(low)) {
		start, end := m.orig(f.Start), m.orig(f.End)
		if end-start == f.End-f.Start || byRule.overlaps(f.Rule, start, end) {
			continue // no character replaced, or the ASCII pass has it
		}
		out = append(out, Finding{Rule: "confusable." + f.Rule, Confidence: f.Confidence, Start: start, End: end})
	}
	return out
}

// ruleMatches are the ASCII pass's matches by rule. A rule's matches do
// not overlap and come in order, so one binary search finds the one that
// could overlap a match of a second reading (a text made of thousands of
// matches of both kinds costs n log n, not n²).
type ruleMatches map[string][]Finding

func matchesByRule(found []Finding) ruleMatches {
	byRule := ruleMatches{}
	for _, g := range found {
		byRule[g.Rule] = append(byRule[g.Rule], g)
	}
	return byRule
}

// overlaps reports whether a match of rule overlaps [start, end).
func (m ruleMatches) overlaps(rule string, start, end int) bool {
	gs := m[rule]
	// the first of the rule's matches that ends after start begins before end
	k, _ := slices.BinarySearchFunc(gs, start, func(g Finding, x int) int { return cmp.Compare(g.End, x+1) })
	return k < len(gs) && gs[k].Start < end
}

// hasNonASCII reports whether s holds a byte of 0x80 or more. It reads 32
// bytes a step: the loop's slicing and bounds checks cost more than the
// loads (an ASCII text costs a scan 1.2% more instructions this way, 4.8%
// eight bytes a step).
func hasNonASCII(s string) bool {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w := s[i : i+32] // one bounds check for the four loads
		if (leUint64(w)|leUint64(w[8:])|leUint64(w[16:])|leUint64(w[24:]))&0x8080808080808080 != 0 {
			return true
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if leUint64(s[i:])&0x8080808080808080 != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}
