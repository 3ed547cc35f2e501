package finalblock

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	// The confusables data of UTS #39 come from a maintained package rather
	// than a hand-made list: go.mau.fi/util/confusable is generated from
	// Unicode's confusables.txt (Unicode 17.0 in v0.11.0), released monthly,
	// needs only golang.org/x/text, and its module's go directive is 1.26.
	// The other candidate, github.com/disciplinedware/go-confusables, is not
	// served by the module proxy.
	"go.mau.fi/util/confusable"
	"golang.org/x/text/unicode/norm"
)

// normalized is a field's text prepared for matching: invisible format
// characters removed, NFKC applied and (for the final block's members)
// inline code spans replaced by CodePlaceholder, with a map from each byte
// back to the text as written.
type normalized struct {
	text string
	// a maps the text after the first pass (ignorables removed, code
	// masked) to the original, b the final text to that; nil is the
	// identity.
	a, b  runMap
	codes []string // contents of the code spans replaced, in order (masked fields)
}

// span maps the bytes [s, e) of the normalised text (e > s) to the
// original.
func (n *normalized) span(s, e int) (int, int) {
	s, e = n.b.span(s, e)
	return n.a.span(s, e)
}

// runMap maps a text to the one it was made from, as runs of bytes: a run
// copied as it is maps byte for byte, a run that replaced something (an
// NFKC segment, a code span) maps as a whole.
type runMap []run

type run struct {
	at       int32 // first byte of the run in the new text
	from, to int32 // the bytes of the old text it came from (to unused for a copy)
	copied   bool
}

func (m runMap) find(x int) run {
	lo, hi := 0, len(m)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if int(m[mid].at) <= x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return m[max(lo-1, 0)]
}

func (m runMap) span(s, e int) (int, int) {
	if m == nil {
		return s, e
	}
	r := m.find(s)
	if r.copied {
		s = int(r.from) + s - int(r.at)
	} else {
		s = int(r.from)
	}
	r = m.find(e - 1)
	if r.copied {
		e = int(r.from) + e - int(r.at)
	} else {
		e = int(r.to)
	}
	return s, e
}

// builder builds a text and its run map.
type builder struct {
	buf  []byte
	runs runMap
}

// copy appends s, found at offset o of the old text.
func (b *builder) copy(s string, o int) {
	if s == "" {
		return
	}
	n := len(b.buf)
	if k := len(b.runs) - 1; k < 0 || !b.runs[k].copied || int(b.runs[k].from)+n-int(b.runs[k].at) != o {
		b.runs = append(b.runs, run{at: int32(n), from: int32(o), copied: true})
	}
	b.buf = append(b.buf, s...)
}

// replace appends s, made from the old bytes [o0, o1).
func (b *builder) replace(s string, o0, o1 int) {
	if s == "" {
		return
	}
	b.runs = append(b.runs, run{at: int32(len(b.buf)), from: int32(o0), to: int32(o1)})
	b.buf = append(b.buf, s...)
}

// ignorable reports whether r is an invisible format character that
// matching skips: bidirectional controls (LRM, RLM, ALM, LRE…RLO, LRI…PDI),
// zero-width characters (ZWSP, ZWNJ, ZWJ, WJ, BOM), the soft hyphen,
// variation selectors, tag characters and the other default-ignorable
// code points (CGJ, Hangul fillers), in short every Cf character and every
// Other_Default_Ignorable_Code_Point and Variation_Selector. The prepended
// concatenation marks (Arabic number signs), which are Cf but visible, are
// kept.
func ignorable(r rune) bool {
	if r < 0xAD {
		return false
	}
	return unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) &&
		!unicode.Is(unicode.Prepended_Concatenation_Mark, r)
}

// normalize prepares text for matching. mask replaces inline code spans by
// CodePlaceholder (the prose has had that done by scan). A CodePlaceholder
// already in the text is kept as it is (NFKC would turn its … into ...).
// ASCII text without code spans to mask is returned as it is.
func normalize(text string, mask bool) normalized {
	n := normalized{text: text}
	var spans []codeSpan
	if mask && strings.Count(text, "`") >= 2 {
		spans = findCodeSpans(text)
	}
	if len(spans) == 0 && isASCII(text) {
		return n
	}
	if len(spans) > 0 || hasIgnorable(text) {
		n.text, n.a, n.codes = removeIgnorables(text, spans)
	}
	if !isNFKC(n.text) {
		n.text, n.b = nfkc(n.text)
	}
	return n
}

func hasIgnorable(text string) bool {
	for _, r := range text {
		if ignorable(r) {
			return true
		}
	}
	return false
}

// isNFKC reports whether text is NFKC, placeholders aside.
func isNFKC(text string) bool {
	for text != "" {
		chunk := text
		if i := strings.Index(text, CodePlaceholder); i >= 0 {
			chunk, text = text[:i], text[i+len(CodePlaceholder):]
		} else {
			text = ""
		}
		if !norm.NFKC.IsNormalString(chunk) {
			return false
		}
	}
	return true
}

// removeIgnorables is the first pass: it drops ignorable characters and
// replaces the code spans.
func removeIgnorables(text string, spans []codeSpan) (string, runMap, []string) {
	b := builder{buf: make([]byte, 0, len(text))}
	var codes []string
	for i := 0; i < len(text); {
		if len(spans) > 0 && i == spans[0].start {
			b.replace(CodePlaceholder, i, spans[0].end)
			codes = append(codes, spans[0].content)
			i = spans[0].end
			spans = spans[1:]
			continue
		}
		j := i
		for j < len(text) && text[j] < utf8.RuneSelf && (len(spans) == 0 || j < spans[0].start) {
			j++
		}
		if j > i {
			b.copy(text[i:j], i)
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if !ignorable(r) {
			b.copy(text[i:i+size], i)
		}
		i += size
	}
	return string(b.buf), b.runs, codes
}

// nfkc is the second pass: NFKC where the text is not NFKC already, one
// normalisation segment at a time so that the map stays exact, with
// placeholders copied as they are and ignorable characters that NFKC
// produced dropped.
func nfkc(in string) (string, runMap) {
	b := builder{buf: make([]byte, 0, len(in)+8)}
	for i := 0; i < len(in); {
		chunk := len(in)
		if k := strings.Index(in[i:], CodePlaceholder); k >= 0 {
			chunk = i + k
		}
		for i < chunk {
			q := norm.NFKC.QuickSpanString(in[i:chunk])
			b.copy(in[i:i+q], i)
			i += q
			if i == chunk {
				break
			}
			n := norm.NFKC.NextBoundaryInString(in[i:chunk], true)
			if n <= 0 {
				n = chunk - i
			}
			seg := norm.NFKC.String(in[i : i+n])
			if hasIgnorable(seg) {
				seg = strings.Map(func(r rune) rune {
					if ignorable(r) {
						return -1
					}
					return r
				}, seg)
			}
			b.replace(seg, i, i+n)
			i += n
		}
		if chunk < len(in) {
			b.copy(CodePlaceholder, chunk)
			i = chunk + len(CodePlaceholder)
		}
	}
	return string(b.buf), b.runs
}

// codeSpan is an inline code span of a masked field.
type codeSpan struct {
	start, end int
	content    string
}

// findCodeSpans lists the inline code spans of a text, line by line, as
// scan finds them in the prose.
func findCodeSpans(text string) []codeSpan {
	var (
		out []codeSpan
		sp  spanScratch
	)
	for start := 0; start < len(text); {
		line, next := text[start:], len(text)
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], start+i+1
		}
		sp.spans(line, func(s, e, n int) {
			out = append(out, codeSpan{start + s, start + e, strings.TrimSpace(line[s+n : e-n])})
		})
		start = next
	}
	return out
}

// vocabulary is every word of the word tables, and their UTS #39
// skeletons.
type vocabulary struct {
	words    map[string]bool
	skeleton map[string]string // skeleton → table word
}

var vocab = sync.OnceValue(func() *vocabulary {
	v := &vocabulary{words: map[string]bool{}, skeleton: map[string]string{}}
	var walk func(n *node)
	walk = func(n *node) {
		for i, w := range n.words {
			child := n.kids[i]
			if !strings.HasPrefix(w, "<") {
				v.words[w] = true
			}
			walk(child)
		}
		for _, a := range n.affixes {
			walk(a.child)
		}
		for _, g := range n.groups {
			walk(g.sub)
			walk(g.child)
		}
	}
	walk(wordTrie)
	for _, l := range languages {
		for _, set := range []map[string]bool{l.negators, l.hypotheticals, l.linking, l.conjunctions, l.negAfter} {
			for w := range set {
				v.words[w] = true
			}
		}
	}
	for w := range v.words {
		sk := confusable.Skeleton(w)
		if old, ok := v.skeleton[sk]; !ok || w < old {
			v.skeleton[sk] = w
		}
	}
	return v
})

// resolveConfusable returns the table word a word is confusable with, when
// the word is written to look like one: a word that is not itself a table
// word, holds a non-ASCII character, and either mixes scripts or is made
// only of characters whose UTS #39 prototype is ASCII ("раss" with
// Cyrillic р and а, "ɑll" with Latin alpha, Greek "ΟΚ"), and whose
// skeleton is the skeleton of a table word. Genuine text in another script
// is left alone: Russian "готово" is a table word, and a word such as
// "все" holds letters without an ASCII prototype.
func resolveConfusable(word string, mixed bool) (string, bool) {
	v := vocab()
	if v.words[word] {
		return "", false
	}
	if !mixed {
		for _, r := range word {
			if r < utf8.RuneSelf {
				continue
			}
			p := confusable.GetReplacement(r)
			if p == "" || !isASCII(p) {
				return "", false
			}
		}
	}
	w, ok := v.skeleton[confusable.Skeleton(word)]
	return w, ok
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
