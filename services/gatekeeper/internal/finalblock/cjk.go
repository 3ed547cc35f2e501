package finalblock

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// cjkWindow is how many characters before a phrase, within its clause, the
// substring tables look at for negators and hypotheticals.
const cjkWindow = 12

// findCJK returns the phrases of the substring tables (Japanese, Chinese,
// Korean), leftmost-longest, without overlap, in the sentences that hold
// Han, Kana or Hangul. A phrase is matched rune by rune, case-insensitively,
// with blanks in the text skipped (Korean writes spaces between words,
// and people write 테스트통과 as well as 테스트 통과).
func (w *words) findCJK(out []found) []found {
	text := w.text
	var ends []end
	for s := 0; s < len(text); {
		e, next, question := sentenceAt(text, s)
		if !hasCJK(text[s:e]) {
			s = next
			continue
		}
		for p := s; p < e; {
			r, size := utf8.DecodeRuneInString(text[p:])
			n := runeTrie.next(lowerRune(r))
			if n == nil || isASCIIAlnum(r) && p > s && endsWithASCIIAlnum(text[s:p]) {
				p += size
				continue
			}
			ends = w.walkRunes(n, p+size, e, ends[:0])
			slices.SortStableFunc(ends, func(a, b end) int { return a.at - b.at })
			// Once the longest phrase of a kind fails here (完了しましたか),
			// a shorter one of that kind (完了) is not tried.
			matched, failed := false, [3]bool{}
			for k := len(ends) - 1; k >= 0 && !matched; k-- {
				for _, r := range ends[k].rules {
					ki := kindIndex(r.kind)
					if failed[ki] {
						continue
					}
					if !w.countsCJK(r, s, p, ends[k].at, e, question) {
						if missHook != nil {
							missHook(r)
						}
						failed[ki] = true
						continue
					}
					f := found{start: p, end: ends[k].at, kind: r.kind, scope: r.scope, lang: r.lang.tag, rule: r}
					if f.kind == KindDone && f.scope == "" {
						f.scope = ScopeWork
					}
					out = append(out, f)
					p, matched = ends[k].at, true
					break
				}
			}
			if !matched {
				p += size
			}
		}
		s = next
	}
	return out
}

func kindIndex(kind string) int {
	switch kind {
	case KindBlocked:
		return 1
	case KindDelegation:
		return 2
	}
	return 0
}

// walkRunes follows the rune trie from n, the text matched up to q, and
// collects where phrases end, within the sentence ending at e.
func (w *words) walkRunes(n *rnode, q, e int, ends []end) []end {
	if len(n.rules) > 0 {
		ends = append(ends, end{q, n.rules})
	}
	if next := skipSpaces(w.text, q, e); next < e {
		r, size := utf8.DecodeRuneInString(w.text[next:])
		if c := n.next(lowerRune(r)); c != nil {
			ends = w.walkRunes(c, next+size, e, ends)
		}
	}
	for _, g := range n.groups {
		var buf [4]int
		for _, ge := range w.runeGroupEnds(g.sub, q, e, buf[:0]) {
			ends = w.walkRunes(g.child, ge, e, ends)
		}
	}
	return ends
}

// runeGroupEnds follows a group's trie and returns where its alternatives
// end.
func (w *words) runeGroupEnds(n *rnode, q, e int, out []int) []int {
	if n.end {
		out = append(out, q)
	}
	if next := skipSpaces(w.text, q, e); next < e {
		r, size := utf8.DecodeRuneInString(w.text[next:])
		if c := n.next(lowerRune(r)); c != nil {
			out = w.runeGroupEnds(c, next+size, e, out)
		}
	}
	return out
}

func skipSpaces(text string, q, e int) int {
	for q < e {
		r, size := utf8.DecodeRuneInString(text[q:])
		if !unicode.IsSpace(r) {
			break
		}
		q += size
	}
	return q
}

// sentenceAt returns the end of the sentence that starts at s, where the
// next one starts, and whether it is a question.
func sentenceAt(text string, s int) (e, next int, question bool) {
	for e = s; e < len(text); {
		r, size := utf8.DecodeRuneInString(text[e:])
		switch r {
		case '?', '？', '؟':
			return e, e + size, true
		case '\n', '。', '!', '！':
			return e, e + size, false
		case '.':
			if e+1 == len(text) || text[e+1] == ' ' || text[e+1] == '\n' {
				return e, e + size, false
			}
		}
		e += size
	}
	return e, e, false
}

func hasCJK(s string) bool {
	for _, r := range s {
		if isCJK(r) {
			return true
		}
	}
	return false
}

func isASCIIAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

func endsWithASCIIAlnum(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isASCIIAlnum(r)
}

func startsWithASCIIAlnum(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isASCIIAlnum(r)
}

// isClauseBreak reports whether r ends a clause in the substring tables.
func isClauseBreak(r rune) bool {
	return strings.ContainsRune(",;:()[]{}\"|、，；：（）「」『』—–…~", r)
}

// countsCJK decides whether text[p:q], matching r in the sentence [s, e),
// is a claim.
func (w *words) countsCJK(r *compiled, s, p, q, e int, question bool) bool {
	l, text := r.lang, w.text
	statement := r.kind != KindDelegation
	if statement && question {
		return false
	}
	// Not inside a Latin word ("domain" is not "main").
	if endsWithASCIIAlnum(text[p:q]) && startsWithASCIIAlnum(text[q:e]) {
		return false
	}
	before := strings.TrimRightFunc(text[s:p], unicode.IsSpace)
	after := strings.TrimLeftFunc(text[q:e], unicode.IsSpace)
	if endsWithQuote(before) && startsWithQuote(after) {
		return false
	}
	for _, x := range l.subNegBefore {
		if strings.HasSuffix(before, x) {
			return false
		}
	}
	for _, x := range r.notAfterSub {
		if strings.HasSuffix(before, x) {
			return false
		}
	}
	for _, x := range r.notBeforeSub {
		if startsWithAffix(after, x) {
			return false
		}
	}
	if statement {
		for _, x := range l.subAfter {
			if startsWithAffix(after, x) {
				return false
			}
		}
	}
	// A negator earlier in the clause cancels a completion (还没有全部完成);
	// blockage and requests are negative or conditional themselves
	// (没有密钥我无法继续), so only negBefore, right before them, does.
	clause := clauseTail(before)
	for _, x := range l.subNegators {
		if r.kind == KindDone && strings.Contains(clause, x) {
			return false
		}
	}
	if statement {
		for _, x := range l.subHypotheticals {
			if strings.Contains(clause, x) {
				return false
			}
		}
	}
	if r.final && after != "" {
		first, _ := utf8.DecodeRuneInString(after)
		if !isClauseBreak(first) && !hasAnyAffix(after, l.subJoiners) {
			return false
		}
	}
	return true
}

// startsWithAffix: s starts with x; an x ending in $ must also end its
// clause there ("か$" is the question particle, not the か of から).
func startsWithAffix(s, x string) bool {
	if stem, ok := strings.CutSuffix(x, "$"); ok {
		rest, ok := strings.CutPrefix(s, stem)
		if !ok {
			return false
		}
		r, _ := utf8.DecodeRuneInString(rest)
		return rest == "" || isClauseBreak(r) || unicode.IsSpace(r)
	}
	return strings.HasPrefix(s, x)
}

func hasAnyAffix(s string, list []string) bool {
	for _, x := range list {
		if startsWithAffix(s, x) {
			return true
		}
	}
	return false
}

// clauseTail returns the end of before within its clause, at most
// cjkWindow characters.
func clauseTail(before string) string {
	i, n := len(before), 0
	for i > 0 && n < cjkWindow {
		r, size := utf8.DecodeLastRuneInString(before[:i])
		if isClauseBreak(r) {
			break
		}
		i -= size
		n++
	}
	return before[i:]
}
