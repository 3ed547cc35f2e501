package finalblock

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Boundaries between two words.
const (
	brkNone     = iota
	brkClause   // , ; : ( ) " | - — and the like
	brkSentence // . ! ? … or a line end
)

// codeWord is the word of a CodePlaceholder.
const codeWord = "<code>"

// token is one word of the prose.
type token struct {
	start, end int    // the word in the prose, trimmed of edge quotes, dots and underscores
	word       string // lower case, ’ read as '
	brk        int    // boundary between the previous word and this one
	sentence   int    // index of the sentence
	// glued: the word touches code before ("`x`_done") or code or a call
	// after ("done()"), so it is part of an identifier.
	gluedBefore, gluedAfter bool
}

// words is the prose split into words and sentences.
type words struct {
	text     string
	toks     []token
	question []bool // per sentence: does it end with a question mark?
}

// isWordRune reports whether r belongs to a word. Identifier and path
// characters do, so that done_test.go, --fixed-strings and pkg/done are
// single words that match no phrase.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' ||
			strings.ContainsRune("_-./\\'@#$%+=~&", r)
	}
	return r == '’' || r == 'ʼ' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// gapBreak classifies the text between two words.
func gapBreak(gap string) (brk int, question bool) {
	for _, r := range gap {
		switch r {
		case '?', '？':
			question = true
			brk = brkSentence
		case '\n', '.', '!', '…', '。', '！':
			brk = brkSentence
		case ',', ';', ':', '(', ')', '[', ']', '{', '}', '"', '“', '”', '«', '»', '|', '-', '–', '—', '/', '，', '；', '：':
			brk = max(brk, brkClause)
		}
	}
	return brk, question
}

// tokenize splits the prose into words in one pass.
func tokenize(text string) words {
	w := words{text: text}
	prevEnd := 0
	emit := func(t token, rawStart, rawEnd int) {
		brk, q := gapBreak(text[prevEnd:t.start])
		if len(w.toks) == 0 {
			brk = brkSentence
		} else if brk == brkSentence {
			w.question = append(w.question, q)
		}
		t.brk = brk
		t.sentence = len(w.question)
		t.gluedBefore = t.gluedBefore || rawStart > 0 && text[rawStart-1] == '`'
		t.gluedAfter = t.gluedAfter || rawEnd < len(text) && strings.IndexByte("`([{<", text[rawEnd]) >= 0
		w.toks = append(w.toks, t)
		prevEnd = t.end
	}
	for i := 0; i < len(text); {
		if strings.HasPrefix(text[i:], CodePlaceholder) {
			emit(token{start: i, end: i + len(CodePlaceholder), word: codeWord}, i, i+len(CodePlaceholder))
			i += len(CodePlaceholder)
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		j := i + size
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r) {
				break
			}
			j += size
		}
		s, e := trimWord(text, i, j)
		if s < e && hasAlnum(text[s:e]) {
			emit(token{start: s, end: e, word: normalize(text[s:e])}, i, j)
		}
		i = j
	}
	_, q := gapBreak(text[prevEnd:])
	w.question = append(w.question, q)
	return w
}

// trimWord drops quotes, underscores (Markdown emphasis) and trailing dots
// from the edges of a word.
func trimWord(text string, s, e int) (int, int) {
	for s < e {
		r, size := utf8.DecodeRuneInString(text[s:e])
		if r != '\'' && r != '’' && r != 'ʼ' && r != '_' {
			break
		}
		s += size
	}
	for s < e {
		r, size := utf8.DecodeLastRuneInString(text[s:e])
		if r != '\'' && r != '’' && r != 'ʼ' && r != '_' && r != '.' {
			break
		}
		e -= size
	}
	return s, e
}

func hasAlnum(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

var apostrophes = strings.NewReplacer("’", "'", "ʼ", "'")

func normalize(s string) string {
	s = strings.ToLower(s)
	if strings.ContainsAny(s, "’ʼ") {
		s = apostrophes.Replace(s)
	}
	return s
}

// findPhrases returns the claim phrases of the prose, leftmost-longest,
// without overlap.
func findPhrases(prose string) []Phrase {
	w := tokenize(prose)
	var out []Phrase
	type end struct {
		at    int
		rules []*compiled
	}
	var ends []end
	for i := 0; i < len(w.toks); {
		ends = ends[:0]
		n := trie
		for j := i; j < len(w.toks); j++ {
			if j > i && w.toks[j].brk != brkNone {
				break
			}
			if n = n.next[w.toks[j].word]; n == nil {
				break
			}
			if len(n.rules) > 0 {
				ends = append(ends, end{j + 1, n.rules})
			}
		}
		matched := false
		for k := len(ends) - 1; k >= 0 && !matched; k-- {
			for _, r := range ends[k].rules {
				if w.counts(r, i, ends[k].at) {
					start, stop := w.toks[i].start, w.toks[ends[k].at-1].end
					scope := r.scope
					if r.kind == KindDone && scope == "" {
						scope = ScopeWork
					}
					out = append(out, Phrase{Kind: r.kind, Scope: scope, Lang: "en", Field: FieldProse, Text: prose[start:stop],
						Offset: start})
					i, matched = ends[k].at, true
					break
				}
			}
		}
		if !matched {
			i++
		}
	}
	return out
}

// counts decides whether the words [i, j) matching r are a claim.
func (w *words) counts(r *compiled, i, j int) bool {
	toks := w.toks
	first, last := toks[i], toks[j-1]
	if first.gluedBefore || last.gluedAfter {
		return false
	}
	// A quoted word is mentioned, not used: the "done" state.
	if endsWithQuote(w.text[w.prevEnd(i):first.start]) && startsWithQuote(w.text[last.end:w.nextStart(j)]) {
		return false
	}
	if i > 0 && first.brk == brkNone && r.notAfter[toks[i-1].word] {
		return false
	}
	if j < len(toks) && toks[j].brk == brkNone && r.notBefore[toks[j].word] {
		return false
	}
	if r.predicate && !w.predicate(i, j) {
		return false
	}
	// Done and blocked phrases state something, so questions and
	// hypotheticals cancel them; a delegation phrase is a request either way.
	statement := r.kind != KindDelegation
	if statement && w.question[first.sentence] {
		return false
	}
	for k, steps := i-1, 0; k >= 0 && steps < window; k, steps = k-1, steps+1 {
		if toks[k+1].brk != brkNone {
			break
		}
		word := toks[k].word
		if conjunctions[word] {
			break
		}
		if negators[word] || strings.HasSuffix(word, "n't") || r.unless[word] {
			return false
		}
		if !statement {
			continue
		}
		if hypotheticals[word] || strings.HasSuffix(word, "'ll") || strings.HasSuffix(word, "'d") {
			return false
		}
		if k > 0 && toks[k].brk == brkNone && hypotheticalPairs[toks[k-1].word+" "+word] {
			return false
		}
		if imperatives[word] && w.clauseInitial(k) {
			return false
		}
	}
	return true
}

// predicate: after a linking word, or ending its clause.
func (w *words) predicate(i, j int) bool {
	toks := w.toks
	if i > 0 && toks[i].brk == brkNone {
		prev := toks[i-1].word
		if linking[prev] || strings.HasSuffix(prev, "'s") || strings.HasSuffix(prev, "'re") ||
			strings.HasSuffix(prev, "'m") || strings.HasSuffix(prev, "'ve") {
			return true
		}
	}
	return j == len(toks) || toks[j].brk != brkNone || conjunctions[toks[j].word]
}

// clauseInitial: word k starts its clause, lead-ins aside.
func (w *words) clauseInitial(k int) bool {
	toks := w.toks
	for k > 0 && toks[k].brk == brkNone && leadIns[toks[k-1].word] {
		k--
	}
	return k == 0 || toks[k].brk != brkNone || conjunctions[toks[k-1].word]
}

func (w *words) prevEnd(i int) int {
	if i == 0 {
		return 0
	}
	return w.toks[i-1].end
}

func (w *words) nextStart(j int) int {
	if j == len(w.toks) {
		return len(w.text)
	}
	return w.toks[j].start
}

const quotes = "\"'`“”‘’«»"

func endsWithQuote(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r != utf8.RuneError && strings.ContainsRune(quotes, r)
}

func startsWithQuote(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r != utf8.RuneError && strings.ContainsRune(quotes, r)
}
