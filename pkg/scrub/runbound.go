package scrub

import (
	"regexp/syntax"
	"strings"
	"unicode"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// A run rule is a rule whose every match starts with one of a few literal
// anchors and goes on over a run of bytes of a set: jwt's
// \b(ey[a-zA-Z0-9]{17,}\.ey[...]{17,}\.(...)?)(terminator) starts with
// "ey" and holds only letters, digits and /\_-.= up to a terminator of at
// most 2 bytes; vault-service-token's starts with "hvs." or "s.". Such a
// rule runs on windows around its anchors' occurrences whose run is long
// enough for a match, widened to whole lines: a gated rule instead of over
// the whole text, a windowed rule instead of its clause's windows when
// those are wide (in prose, "s." ends a sentence in every paragraph).
// Windows are used only for foldSafe texts.
//
// Why the windows find what the whole text holds: the expression is an
// optional run of \b and \B, then the core (whose first node starts with
// one of the anchors, case-sensitive) up to its last node without a bound,
// then a tail of at most tail bytes. A match starting at q holds the core
// from q on, all of its bytes in the set, so the run of set bytes from q
// is at least as long as the core (at least minRun) and the match ends at
// most tail bytes after the run. It lies strictly inside
// [q-1, q+run+tail+1], as a windowed rule's match lies inside its window
// (see windowedRule), and the same argument holds.
type runRule struct {
	anchors []string
	inRun   [256]bool
	minRun  int // the fewest bytes the core matches
	tail    int // the most bytes after the core
	d       *detect.Detector
	kwIDs   [][]int // one clause of the rule's keywords numbered in windowed (nil: it has none)
	kws     []string
}

// runBound makes rule r a run rule when its expression has that shape.
func runBound(c config.Config, id string, r config.Rule, re *syntax.Regexp) (*runRule, bool) {
	rr, ok := runShape(re)
	if !ok {
		return nil, false
	}
	for _, k := range r.Keywords {
		rr.kws = append(rr.kws, strings.ToLower(k))
	}
	r.Keywords = nil
	c.Rules, c.OrderedRules, c.Keywords = map[string]config.Rule{id: r}, []string{id}, map[string]struct{}{}
	rr.d = detect.NewDetector(c)
	rr.d.IgnoreGitleaksAllow, rr.d.MaxDecodeDepth = true, 0
	return rr, true
}

// runShape reads the anchors, run bytes and bounds of an expression of a
// run rule's shape (without its detector).
func runShape(re *syntax.Regexp) (*runRule, bool) {
	if re.Op != syntax.OpConcat {
		return nil, false
	}
	subs := re.Sub
	for len(subs) > 0 && (subs[0].Op == syntax.OpWordBoundary || subs[0].Op == syntax.OpNoWordBoundary) {
		subs = subs[1:]
	}
	if len(subs) == 0 {
		return nil, false
	}
	// The core runs to the last node without a bound; the tail after it
	// has one.
	u := 0
	for i, s := range subs {
		if maxWidth(s) < 0 {
			u = i
		}
	}
	core, tail := subs[:u+1], 0
	for _, s := range subs[u+1:] {
		tail += maxWidth(s)
	}
	anchors, ok := leading(core[0])
	if !ok {
		return nil, false
	}
	rr := &runRule{anchors: anchors, tail: tail}
	for _, s := range core {
		rr.minRun += minWidth(s)
		if !runBytes(s, &rr.inRun) {
			return nil, false
		}
	}
	return rr, true
}

// leading returns the literals one of which every match of re starts
// with (case-sensitive, ASCII), when re has that shape.
func leading(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpCapture:
		return leading(re.Sub[0])
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return nil, false
		}
		return leading(re.Sub[0])
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			l, ok := leading(s)
			if !ok {
				return nil, false
			}
			out = append(out, l...)
		}
		return out, true
	case syntax.OpLiteral:
		a := string(re.Rune)
		if re.Flags&syntax.FoldCase != 0 || a == "" || !isASCII(a) {
			return nil, false
		}
		return []string{a}, true
	}
	return nil, false
}

// runBytes adds to set every byte a match of re may hold in a foldSafe
// text; false when that is not a set of ASCII bytes, or re holds an
// assertion.
func runBytes(re *syntax.Regexp, set *[256]bool) bool {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return true
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if c >= 0x80 {
				return false
			}
			set[c] = true
			for f := unicode.SimpleFold(c); re.Flags&syntax.FoldCase != 0 && f != c; f = unicode.SimpleFold(f) {
				if f >= 0x80 {
					return false
				}
				set[f] = true
			}
		}
		return true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if lo := re.Rune[i]; lo == re.Rune[i+1] && (lo == '\u017f' || lo == '\u212a') {
				continue // what case folding adds to s and k: not in a foldSafe text
			}
			if re.Rune[i+1] >= 0x80 {
				return false
			}
			for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
				set[c] = true
			}
		}
		return true
	case syntax.OpCapture, syntax.OpConcat, syntax.OpAlternate, syntax.OpQuest, syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		for _, s := range re.Sub {
			if !runBytes(s, set) {
				return false
			}
		}
		return true
	}
	return false
}

// minWidth is the fewest bytes a match of re spans (assertions count 0).
func minWidth(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, c := range re.Rune {
			n += min(runeLen(c), minFoldLen(c, re.Flags&syntax.FoldCase != 0))
		}
		return n
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minWidth(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minWidth(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n += minWidth(s)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, s := range re.Sub {
			if w := minWidth(s); n < 0 || w < n {
				n = w
			}
		}
		return max(n, 0)
	}
	return 0 // assertions, empty, quest, star
}

func minFoldLen(c rune, fold bool) int {
	n := runeLen(c)
	for f := unicode.SimpleFold(c); fold && f != c; f = unicode.SimpleFold(f) {
		n = min(n, runeLen(f))
	}
	return n
}

// windows returns the parts of text the rule can match in (see runRule).
func (r *runRule) windows(text string) []span {
	var spans []span
	for _, anchor := range r.anchors {
		k := len(spans)
		for from := 0; from < len(text); {
			i := strings.Index(text[from:], anchor)
			if i < 0 {
				break
			}
			q := from + i
			e := q
			for e < len(text) && r.inRun[text[e]] {
				e++
			}
			// An occurrence inside [q, e) has a shorter run that ends at e:
			// its window lies in this one, or it is too short as this one is.
			from = max(q+1, e)
			if e-q < r.minRun {
				continue
			}
			sp := span{max(0, q-1), min(len(text), e+r.tail+1)}
			if n := len(spans); n > k && sp.a <= spans[n-1].b {
				spans[n-1].b = max(spans[n-1].b, sp.b)
				continue
			}
			spans = append(spans, sp)
		}
	}
	if len(spans) == 0 {
		return nil
	}
	return lines(text, spans) // sorts and merges the anchors' spans
}
