package scrub

import (
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

// Most of gitleaks' rules match a bounded span that holds one of a few
// strings (AKIA, ghp_, -----BEGIN, sentry, ...): required.go derives such
// a clause from the expression, maxWidth the span's bound in bytes. Such a
// rule runs only on windows of the text around the clause's occurrences,
// widened by the bound and then to whole lines, instead of over the whole
// text (gitleaks runs each rule whose keyword occurs anywhere in the text
// over all of it, which for a 64 KiB text with common keywords such as
// "ey" (jwt), "s." (vault) or "sk" (twilio) cost 50-100 ms).
//
// Why the windows find what the whole text holds: every match holds an
// occurrence q of the clause and is at most w bytes long, so it lies
// strictly inside [q-w-1, q+len(q)+w+1], which is inside the merged window
// around q. No match starts at a window's first byte or ends at its last
// (unless they are the text's own), so ^, $, \A, \z and \b judge the same
// bytes in the window as in the text; the window holds the match's whole
// line (allowlists may read it); matches never straddle a window's edge, so
// the window's matches, found left to right, are the text's. The rule runs
// only when one of its keywords occurs in the text, as gitleaks runs it.
//
// The clause is searched in the text lowered byte by byte (ASCII letters
// only). That is gitleaks' and Go's case folding only when the text holds
// none of the three characters that fold to or lower to ASCII letters: the
// Kelvin sign (k), the long s (s) and the dotted capital I (strings.ToLower
// makes it i and a combining dot). A text holding one is scanned whole.
type windowedRule struct {
	id       string
	d        *detect.Detector // the rule alone, without keywords: it runs on every window it is given
	keywords int              // how many keywords the rule has (0: it always runs, as in gitleaks)
	width    int              // the most bytes a match spans
	run      *runRule         // when its matches are also bounded by a run of bytes (runbound.go)
}

// runWindowsFrom is the bytes of clause windows from which a windowed rule
// that is also a run rule runs on its run windows instead.
const runWindowsFrom = 4 << 10

// foldsToASCII are the characters that make lowerASCII differ from
// gitleaks' and Go's case folding over ASCII letters.
var foldsToASCII = []string{"\u212a", "\u017f", "\u0130"}

// foldSafe reports whether the windows and requirements may be searched
// in lowerASCII(text).
func foldSafe(text string) bool {
	return !slices.ContainsFunc(foldsToASCII, func(c string) bool { return strings.Contains(text, c) })
}

// lowerASCII lowers the ASCII letters of s and keeps every other byte, so
// offsets are kept.
func lowerASCII(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// maxWidth is the most bytes a match of re spans in a foldSafe text, or
// -1 when unbounded. A literal character or a class counts the bytes of
// its longest character, leaving out the Kelvin sign and the long s, which
// case folding adds to k and s and which a foldSafe text does not hold.
func maxWidth(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, c := range re.Rune {
			n += runeBytes(c, re.Flags&syntax.FoldCase != 0)
		}
		return n
	case syntax.OpCharClass:
		return classBytes(re.Rune)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxWidth(re.Sub[0])
	case syntax.OpRepeat:
		w := maxWidth(re.Sub[0])
		if w < 0 || re.Max < 0 {
			return -1
		}
		return w * re.Max
	case syntax.OpConcat, syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			w := maxWidth(s)
			if w < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				n += w
			} else {
				n = max(n, w)
			}
		}
		return n
	}
	return -1 // star, plus, anything else
}

// runeBytes is the most bytes c (or, with fold, a character that folds
// to it) takes in a foldSafe text.
func runeBytes(c rune, fold bool) int {
	n := runeLen(c)
	for f := unicode.SimpleFold(c); fold && f != c; f = unicode.SimpleFold(f) {
		if f != '\u017f' && f != '\u212a' {
			n = max(n, runeLen(f))
		}
	}
	return n
}

// classBytes is the most bytes a character of a class (its ranges) takes
// in a foldSafe text.
func classBytes(ranges []rune) int {
	n := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo == hi && (lo == '\u017f' || lo == '\u212a') {
			continue
		}
		n = max(n, runeLen(hi))
	}
	return n
}

func runeLen(c rune) int {
	if n := utf8.RuneLen(c); n > 0 {
		return n
	}
	return utf8.UTFMax
}

// windowable returns rule r as a windowed rule and the clause its
// windows are found by, when its expression has both a bound and a clause.
func windowable(c config.Config, id string, r config.Rule) (windowedRule, []string, bool) {
	if r.Regex == nil || len(r.RequiredRules) > 0 || r.SkipReport || r.Path != nil {
		return windowedRule{}, nil, false
	}
	re, err := syntax.Parse(r.Regex.String(), syntax.Perl)
	if err != nil {
		return windowedRule{}, nil, false
	}
	req := required(re)
	w := maxWidth(re)
	if len(req) == 0 || w < 0 {
		return windowedRule{}, nil, false
	}
	keywords := len(r.Keywords)
	r.Keywords = nil
	c.Rules, c.OrderedRules, c.Keywords = map[string]config.Rule{id: r}, []string{id}, map[string]struct{}{}
	d := detect.NewDetector(c)
	d.IgnoreGitleaksAllow, d.MaxDecodeDepth = true, 0
	run, ok := runShape(re)
	if ok {
		run.d = d
	}
	return windowedRule{id: id, d: d, keywords: keywords, width: w, run: run}, best(req), true
}

// windowIndex finds the windowed rules' keywords and clauses in one pass.
type windowIndex struct {
	rules []windowedRule
	trie  *foldedAC
	// of each pattern of the trie: the rules it is a keyword of, and
	// those it is a clause string of.
	keywordOf, clauseOf [][]int
	// isGeneric: the pattern is one of generic-api-key's keywords.
	isGeneric []bool
	// once: only the pattern's first occurrence matters (it is neither a
	// clause string nor one of generic-api-key's keywords).
	once []bool
	// The trie holds the patterns but the single bytes that matter once
	// (a requirement's ":", "@", "e"): in prose a fourth of the bytes
	// end one, and whether a text holds a byte is a memchr. inTrie
	// numbers the trie's patterns as patterns does; onceBytes are the
	// others.
	inTrie    []int
	trieOnce  []bool
	onceBytes []int
	// whole is the windowed rules as one detector, with their keywords:
	// for texts the windows cannot be trusted with (see foldSafe).
	whole *detect.Detector
	// index numbers every string searched for: the windowed rules' and
	// others (pattern).
	index    map[string]int
	patterns []string
}

// pattern numbers s among the strings the walk searches for.
func (x *windowIndex) pattern(s string) int {
	i, ok := x.index[s]
	if !ok {
		i = len(x.patterns)
		x.index[s] = i
		x.patterns = append(x.patterns, s)
		x.keywordOf, x.clauseOf, x.isGeneric = append(x.keywordOf, nil), append(x.clauseOf, nil), append(x.isGeneric, false)
	}
	return i
}

// generic marks pattern p as one of generic-api-key's keywords.
func (x *windowIndex) generic(p int) { x.isGeneric[p] = true }

// patternsOf numbers the strings of each clause of r.
func (x *windowIndex) patternsOf(r requirement) [][]int {
	out := make([][]int, len(r))
	for i, clause := range r {
		for _, s := range clause {
			out[i] = append(out[i], x.pattern(s))
		}
	}
	return out
}

// build makes the trie of every string numbered so far.
func (x *windowIndex) build() {
	x.once = make([]bool, len(x.patterns))
	var trie []string
	for p, s := range x.patterns {
		x.once[p] = len(x.clauseOf[p]) == 0 && !x.isGeneric[p]
		if x.once[p] && len(s) == 1 {
			x.onceBytes = append(x.onceBytes, p)
			continue
		}
		trie = append(trie, s)
		x.inTrie = append(x.inTrie, p)
		x.trieOnce = append(x.trieOnce, x.once[p])
	}
	x.trie = newFoldedAC(trie)
}

// holdsByte reports whether lowerASCII(text) holds c.
func holdsByte(text string, c byte) bool {
	if 'A' <= c && c <= 'Z' {
		return false // lowerASCII holds none
	}
	if 'a' <= c && c <= 'z' && strings.IndexByte(text, c-('a'-'A')) >= 0 {
		return true
	}
	return strings.IndexByte(text, c) >= 0
}

// newWindowIndex indexes the windowed rules; the caller numbers any other
// strings it wants found (pattern) and then calls build.
func newWindowIndex(c config.Config, rules []windowedRule, clauses [][]string) *windowIndex {
	x := &windowIndex{rules: rules, index: map[string]int{}}
	pattern := x.pattern
	whole := c
	whole.Rules, whole.OrderedRules, whole.Keywords = map[string]config.Rule{}, nil, map[string]struct{}{}
	for i, r := range rules {
		rule := c.Rules[r.id]
		whole.Rules[r.id], whole.OrderedRules = rule, append(whole.OrderedRules, r.id)
		for _, k := range rule.Keywords {
			k = strings.ToLower(k)
			whole.Keywords[k] = struct{}{}
			p := pattern(k)
			x.keywordOf[p] = append(x.keywordOf[p], i)
		}
		for _, s := range clauses[i] {
			p := pattern(s)
			x.clauseOf[p] = append(x.clauseOf[p], i)
		}
	}
	x.whole = detect.NewDetector(whole)
	x.whole.IgnoreGitleaksAllow, x.whole.MaxDecodeDepth = true, 0
	return x
}

type span struct{ a, b int }

// A findScratch is the memory one windowIndex.find uses, kept between
// calls in findPool: a 64 KiB text's walk and windows would otherwise
// allocate about 68 KB a call (about a third of a gatekeeper inspection's
// garbage).
type findScratch struct {
	on, seen []bool
	spans    [][]span
	generic  []span
	walk     walkScratch
}

var findPool = sync.Pool{New: func() any { return new(findScratch) }}

// maxKeptHits bounds the held hits (24 bytes each) and windows a scratch
// keeps for the next find: the memory of an exceptionally long or hit-dense
// text (ingest scrubs whole events) goes back to the collector instead of
// staying with the pool.
const maxKeptHits = 16 << 10

// release puts fs back in findPool, without the slices a text grew past
// maxKeptHits.
func (fs *findScratch) release() {
	for k, h := range fs.walk.held {
		if cap(h) > maxKeptHits {
			fs.walk.held[k] = nil
		}
	}
	if cap(fs.generic) > maxKeptHits {
		fs.generic = nil
	}
	for i, sp := range fs.spans {
		if cap(sp) > maxKeptHits {
			fs.spans[i] = nil
		}
	}
	findPool.Put(fs)
}

// find runs each windowed rule whose keyword occurs in text over the
// windows around its clause, and reports which numbered strings occur in
// text and where generic-api-key's keywords are. text is foldSafe: the
// walk reads it lowered byte by byte (foldedAC).
//
// fs holds the memory find uses; seen and generic are fs's until the
// caller releases it.
func (x *windowIndex) find(text string, fs *findScratch) (found []report.Finding, seen []bool, generic []span) {
	on := cleared(fs.on, len(x.rules))
	seen = cleared(fs.seen, len(x.patterns))
	if cap(fs.spans) < len(x.rules) {
		fs.spans = make([][]span, len(x.rules))
	}
	spans := fs.spans[:len(x.rules)] // each rule's windows, their arrays kept
	for i := range spans {
		spans[i] = spans[i][:0]
	}
	generic = fs.generic[:0]
	for _, p := range x.onceBytes {
		if holdsByte(text, x.patterns[p][0]) {
			seen[p] = true
			for _, r := range x.keywordOf[p] {
				on[r] = true
			}
		}
	}
	x.trie.walk(text, x.trieOnce, &fs.walk, func(end, n, pattern int) {
		pattern = x.inTrie[pattern]
		seen[pattern] = true
		if x.isGeneric[pattern] {
			generic = append(generic, span{end - n + 1, end + 1})
		}
		for _, r := range x.keywordOf[pattern] {
			on[r] = true
		}
		for _, r := range x.clauseOf[pattern] {
			w := x.rules[r].width + 1
			sp := span{max(0, end-n+1-w), min(len(text), end+1+w)}
			// Occurrences come in order of their ends; a window that
			// overlaps the last one extends it.
			if k := len(spans[r]); k > 0 && sp.a <= spans[r][k-1].b {
				spans[r][k-1].b = max(spans[r][k-1].b, sp.b)
				spans[r][k-1].a = min(spans[r][k-1].a, sp.a)
				continue
			}
			spans[r] = append(spans[r], sp)
		}
	})
	for i, r := range x.rules {
		if len(spans[i]) == 0 || (r.keywords > 0 && !on[i]) {
			continue
		}
		ws := lines(text, spans[i])
		if r.run != nil {
			n := 0
			for _, w := range ws {
				n += w.b - w.a
			}
			if n >= runWindowsFrom {
				ws = r.run.windows(text)
			}
		}
		for _, w := range ws {
			found = append(found, r.d.DetectString(text[w.a:w.b])...)
		}
	}
	fs.on, fs.seen, fs.generic = on, seen, generic
	return found, seen, generic
}

// holds reports whether every clause has a string seen.
func holds(clauses [][]int, seen []bool) bool {
	for _, c := range clauses {
		if !slices.ContainsFunc(c, func(p int) bool { return seen[p] }) {
			return false
		}
	}
	return true
}

// lines widens spans to whole lines and merges those that then overlap,
// in order.
func lines(text string, spans []span) []span {
	slices.SortFunc(spans, func(x, y span) int { return x.a - y.a })
	out := spans[:0:0]
	for _, s := range spans {
		s.a = strings.LastIndexByte(text[:s.a], '\n') + 1
		if i := strings.IndexByte(text[s.b:], '\n'); i >= 0 {
			s.b += i
		} else {
			s.b = len(text)
		}
		if k := len(out); k > 0 && s.a <= out[k-1].b {
			out[k-1].b = max(out[k-1].b, s.b) // sorted: out[k-1].a <= s.a
			continue
		}
		out = append(out, s)
	}
	return out
}
