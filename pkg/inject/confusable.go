package inject

import (
	"slices"
	"strings"
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
// is read a second time
// with each such character replaced by its letter (latinize), and a phrase
// rule that matches there over at least one replaced character is reported
// as "confusable." and the rule's name, at the rule's confidence, over the
// original text. Text in other scripts latinizes to no English phrase; an
// accented letter (é, ñ) is a letter and an accent, not a look-alike, and
// stays as it is.

// confusableBlocks are the blocks whose characters are looked up: Latin
// supplements and extensions, IPA, Greek, Cyrillic, phonetic extensions,
// letter-like symbols and Roman numerals, enclosed alphanumerics,
// fullwidth forms, mathematical alphanumerics.
var confusableBlocks = [][2]rune{
	{0x0080, 0x02AF}, {0x0370, 0x052F}, {0x1D00, 0x1DBF}, {0x1E00, 0x1FFF}, {0x2100, 0x218F},
	{0x2460, 0x24FF}, {0xFF00, 0xFFEF}, {0x1D400, 0x1D7FF},
}

// confusableLetters maps each character of confusableBlocks that looks
// like one ASCII letter or digit (lookAlike) to it, lowered. It is built
// the first time a window holds a non-ASCII byte, or by Prepare (about
// 3,300 characters looked up).
var confusableLetters = sync.OnceValue(func() map[rune]byte {
	m := map[rune]byte{}
	for _, b := range confusableBlocks {
		for r := b[0]; r <= b[1]; r++ {
			if c, ok := lookAlike(r); ok {
				m[r] = c
			}
		}
	}
	return m
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

// latinize returns w with each confusable character replaced by its
// letter, and the offset in w of each byte of the result (and of its end);
// ok is false, and nothing is built, when w has no such character.
func latinize(w string) (lat string, offs []int32, ok bool) {
	letters := confusableLetters()
	first := -1
	for i, r := range w {
		if r >= utf8.RuneSelf {
			if _, found := letters[r]; found {
				first = i
				break
			}
		}
	}
	if first < 0 {
		return "", nil, false
	}
	var b strings.Builder
	b.Grow(len(w))
	b.WriteString(w[:first])
	offs = make([]int32, 0, len(w)+1)
	for i := range first {
		offs = append(offs, int32(i))
	}
	for i, r := range w[first:] {
		i += first
		if c, found := letters[r]; found {
			b.WriteByte(c)
			offs = append(offs, int32(i))
			continue
		}
		n := utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, n = utf8.DecodeRuneInString(w[i:])
		}
		b.WriteString(w[i : i+n])
		for k := range n {
			offs = append(offs, int32(i+k))
		}
	}
	offs = append(offs, int32(len(w)))
	return b.String(), offs, true
}

// confusablePhrases runs the phrase rules over w latinized and returns,
// with offsets into w, the matches that span a replaced character and that
// no match of the same rule in found (the ASCII pass's) overlaps: a rule
// whose expression reads any character ("<system>" and 40 more) matches
// there either way.
func confusablePhrases(w string, found []Finding) []Finding {
	lat, offs, ok := latinize(w)
	if !ok {
		return nil
	}
	low := fold(lat)
	var out []Finding
	for _, f := range phrases(lat, low, fenced(low)) {
		start, end := int(offs[f.Start]), int(offs[f.End])
		if end-start == f.End-f.Start || slices.ContainsFunc(found, func(g Finding) bool {
			return g.Rule == f.Rule && g.Start < end && start < g.End
		}) {
			continue
		}
		out = append(out, Finding{Rule: "confusable." + f.Rule, Confidence: f.Confidence, Start: start, End: end})
	}
	return out
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
