package finalblock

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Boundaries between two words.
const (
	brkNone     = iota
	brkClause   // , ; : ( ) " | - — 、 and the like
	brkSentence // . ! ? … 。 or a line end
)

// Special words of the patterns. A pattern word in angle brackets matches
// a class of tokens rather than one word.
const (
	codeWord = "<code>" // a CodePlaceholder
	passWord = "<pass>" // a check mark: ✅ ✔ ✓ ☑ 🟢 🟩
	failWord = "<fail>" // a cross or red mark: ❌ ✗ ✘ ✖ 🔴 ⛔ 🟥
	anyWord  = "<any>"  // any one word
)

// tokClass is a class of words that patterns match as a whole.
type tokClass uint8

const (
	clsNone tokClass = iota
	clsNum           // digits: 212
	clsAll           // a count of all: 212/212
	clsPart          // a count of part: 11/12
	clsPct           // a percentage: 40%, 12.5%
	clsMult          // a factor: 3x, 2.5×
	clsVer           // a version with a dot: v1.2.3, 0.12.0
	clsRef           // an issue or pull request: #481
	clsFile          // a file name or path: main.go, pkg/x.go
)

// classWords are the pattern words of the classes.
var classWords = [...]string{"", "<num>", "<n/n>", "<x/y>", "<pct>", "<mult>", "<ver>", "<ref>", "<file>"}

// token is one word of a field.
type token struct {
	start, end int      // the word in the normalised text, trimmed of edge quotes, dots and underscores
	word       string   // as normWord reads it; a special word for marks and code
	sentence   int32    // index of the sentence
	code       int32    // for codeWord: the index of the code span
	class      tokClass // clsNone or the class of the word
	brk        int8     // boundary between the previous word and this one
	// glued: the word touches code before ("`x`_done") or code or a call
	// after ("done()"), so it is part of an identifier.
	gluedBefore, gluedAfter bool
	nonASCII                bool
}

// words is a field split into words and sentences.
type words struct {
	text      string
	toks      []token
	question  []bool // per sentence: does it end with a question mark?
	sentStart []int  // per sentence: index of its first token
	failure   []int8 // per sentence: 0 not yet known, 1 no failure reported, 2 a failure reported
	codes     []string
	cjk       bool               // some word is Han, Kana or Hangul
	markers   map[markerKey]bool // sentenceHas, cached
}

// asciiWord marks the ASCII bytes that belong to a word: letters, digits
// and the identifier and path characters, so that done_test.go,
// --fixed-strings and pkg/done are single words that match no phrase.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("_-./\\'@#$%+=~&", byte(c)) >= 0
	}
	return t
}()

// isWordRune reports whether r belongs to a word.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiWord[r]
	}
	return r == '’' || r == 'ʼ' || r == '×' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// statusMark returns passWord or failWord for a status mark, "" for
// another rune. Variation selectors (✔️) are gone by now.
func statusMark(r rune) string {
	switch r {
	case '✅', '✔', '✓', '☑', '🟢', '🟩':
		return passWord
	case '❌', '❎', '✗', '✘', '✖', '🔴', '⛔', '🟥', '☒', '🚫':
		return failWord
	}
	return ""
}

// gapBreak classifies the text between two words.
func gapBreak(gap string) (brk int, question bool) {
	for i := 0; i < len(gap); i++ {
		c := gap[i]
		if c < utf8.RuneSelf {
			switch c {
			case '?':
				question = true
				brk = brkSentence
			case '\n', '.', '!':
				brk = brkSentence
			case ',', ';', ':', '(', ')', '[', ']', '{', '}', '"', '|', '-', '/':
				brk = max(brk, brkClause)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(gap[i:])
		switch r {
		case '？', '؟':
			question = true
			brk = brkSentence
		case '…', '。', '！', '।', '۔':
			brk = brkSentence
		case '“', '”', '«', '»', '–', '—', '，', '；', '：', '、', '،', '؛', '「', '」', '『', '』', '（', '）':
			brk = max(brk, brkClause)
		}
		i += size - 1
	}
	return brk, question
}

// tokenize splits a normalised field into words in one pass.
func tokenize(text string, codes []string) *words {
	w := &words{text: text, codes: codes, sentStart: []int{0}, toks: make([]token, 0, len(text)/6+1)}
	prevEnd, ncode := 0, 0
	emit := func(t token, rawStart, rawEnd int) {
		brk, q := gapBreak(text[prevEnd:t.start])
		if len(w.toks) == 0 {
			brk = brkSentence
		} else if brk == brkSentence {
			w.question = append(w.question, q)
			w.sentStart = append(w.sentStart, len(w.toks))
		}
		t.brk = int8(brk)
		t.sentence = int32(len(w.question))
		t.gluedBefore = t.gluedBefore || rawStart > 0 && text[rawStart-1] == '`'
		t.gluedAfter = t.gluedAfter || rawEnd < len(text) && strings.IndexByte("`([{<", text[rawEnd]) >= 0
		w.toks = append(w.toks, t)
		prevEnd = t.end
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c == '`' && strings.HasPrefix(text[i:], CodePlaceholder) {
			emit(token{start: i, end: i + len(CodePlaceholder), word: codeWord, code: int32(ncode)}, i, i+len(CodePlaceholder))
			ncode++
			i += len(CodePlaceholder)
			continue
		}
		if c < utf8.RuneSelf && !asciiWord[c] {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if m := statusMark(r); m != "" {
			emit(token{start: i, end: i + size, word: m}, i, i+size)
			i += size
			continue
		}
		if !isWordRune(r) {
			i += size
			continue
		}
		j, nonASCII := i, false
		for j < len(text) {
			c := text[j]
			if c < utf8.RuneSelf {
				if !asciiWord[c] {
					break
				}
				j++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r) {
				break
			}
			nonASCII = true
			if !w.cjk && isCJK(r) {
				w.cjk = true
			}
			j += size
		}
		s, e := trimWord(text, i, j)
		if s < e && hasAlnum(text[s:e]) {
			t := token{start: s, end: e, word: normWord(text[s:e]), code: -1, nonASCII: nonASCII}
			if !nonASCII {
				t.class = classify(t.word)
			}
			emit(t, i, j)
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
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			return true
		}
	}
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// classify returns the class of an ASCII word, "" for none.
func classify(w string) tokClass {
	c := w[0]
	switch {
	case '0' <= c && c <= '9':
	case c == 'v' && len(w) > 1 && '0' <= w[1] && w[1] <= '9':
		if isVersion(w[1:]) {
			return clsVer
		}
		return clsNone
	case c == '#':
		if len(w) > 1 && digits(w[1:]) == len(w)-1 {
			return clsRef
		}
		return clsNone
	default:
		if isFile(w) {
			return clsFile
		}
		return clsNone
	}
	n := digits(w)
	rest := w[n:]
	switch {
	case rest == "":
		return clsNum
	case rest[0] == '/':
		m := digits(rest[1:])
		if m == 0 || m != len(rest)-1 {
			return clsNone
		}
		if rest[1:] == w[:n] && strings.Trim(w[:n], "0") != "" {
			return clsAll
		}
		return clsPart
	case isVersion(w):
		return clsVer
	}
	num := n
	if rest[0] == '.' && digits(rest[1:]) > 0 {
		num += 1 + digits(rest[1:])
	}
	switch w[num:] {
	case "%":
		return clsPct
	case "x", "×":
		return clsMult
	}
	return clsNone
}

func digits(s string) int {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n
}

// isVersion: digits, a dot and digits, more dotted parts, and an optional
// pre-release or build suffix (1.26, 0.12.0, 2.0.0-rc.1).
func isVersion(s string) bool {
	n := digits(s)
	if n == 0 || n == len(s) || s[n] != '.' {
		return false
	}
	s = s[n:]
	for len(s) > 1 && s[0] == '.' && digits(s[1:]) > 0 {
		s = s[1+digits(s[1:]):]
	}
	return s == "" || s[0] == '-' || s[0] == '+'
}

// isFile: a path (a slash between letters) or a name with an extension of
// letters and digits (main.go, README.md) whose stem is longer than a
// letter (so e.g and i.e are not files).
func isFile(w string) bool {
	if i := strings.IndexByte(w, '/'); i > 0 && i < len(w)-1 && !strings.HasPrefix(w, "//") {
		return !strings.Contains(w, "://")
	}
	dot := strings.LastIndexByte(w, '.')
	if dot < 2 || dot == len(w)-1 || len(w)-dot > 6 {
		return false
	}
	for i := dot + 1; i < len(w); i++ {
		c := w[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// end is a position where a phrase of the trie ends.
type end struct {
	at    int
	rules []*compiled
}

// findWords returns the claim phrases of the word tables, leftmost-longest,
// without overlap.
func (w *words) findWords(out []found) []found {
	var (
		ends  []end
		rules []*compiled
	)
	for i := 0; i < len(w.toks); {
		ends = w.walk(wordTrie, i, i, ends[:0])
		matched := false
		for len(ends) > 0 && !matched {
			// The rules of every path that ends at the same word are
			// weighed together.
			at := ends[longest(ends)].at
			rules = rules[:0]
			kept := ends[:0]
			for _, e := range ends {
				if e.at == at {
					rules = append(rules, e.rules...)
				} else {
					kept = append(kept, e)
				}
			}
			ends = kept
			if pick := w.pick(rules, i, at); pick != nil {
				out = append(out, w.phrase(pick, i, at))
				i, matched = at, true
			}
		}
		if !matched {
			i++
		}
	}
	return out
}

// pick returns the rule, of those matching the words [i, j), that makes
// them a claim, or nil. Where the words are in several tables (Spanish and
// Portuguese "está terminado") and one table's rules cancel them (Spanish
// "no"), they are no claim: the language is not known for sure. Where
// several count, the table whose language's letters the sentence holds
// names the language, else the first.
func (w *words) pick(rules []*compiled, i, j int) *compiled {
	var pick *compiled
	for _, r := range rules {
		if !w.counts(r, i, j) {
			if missHook != nil {
				missHook(r)
			}
			continue
		}
		if pick == nil || pick.lang != r.lang && r.lang.markers != "" && w.sentenceHas(i, r.lang.markers) {
			pick = r
		}
	}
	if pick == nil || len(rules) == 1 {
		return pick
	}
	for _, r := range rules {
		if r.kind == pick.kind && r.lang != pick.lang && !w.counts(r, i, j) {
			return nil
		}
	}
	return pick
}

// sentenceHas reports whether the sentence of token i holds one of the
// runes of set.
func (w *words) sentenceHas(i int, set string) bool {
	s := w.toks[i].sentence
	key := markerKey{s, set}
	if has, ok := w.markers[key]; ok {
		return has
	}
	start, end := w.toks[w.sentStart[s]].start, len(w.text)
	if int(s)+1 < len(w.sentStart) {
		end = w.toks[w.sentStart[s+1]].start
	}
	has := strings.ContainsAny(w.text[start:end], set)
	if w.markers == nil {
		w.markers = map[markerKey]bool{}
	}
	w.markers[key] = has
	return has
}

type markerKey struct {
	sentence int32
	set      string
}

func longest(ends []end) int {
	k := 0
	for i := range ends {
		if ends[i].at > ends[k].at {
			k = i
		}
	}
	return k
}

// walk follows the trie from n over the tokens from j on (the phrase
// started at token i) and collects where phrases end. A token matches by
// its word, its class, <any>, or a stem or ending.
func (w *words) walk(n *node, i, j int, ends []end) []end {
	if j > i && len(n.rules) > 0 {
		ends = append(ends, end{j, n.rules})
	}
	if j >= len(w.toks) || j > i && !w.sameClause(j) {
		return ends
	}
	t := &w.toks[j]
	if c := n.next(t.word); c != nil {
		ends = w.walk(c, i, j+1, ends)
	}
	if t.class != clsNone {
		if c := n.next(classWords[t.class]); c != nil {
			ends = w.walk(c, i, j+1, ends)
		}
	}
	if j > i {
		if c := n.next(anyWord); c != nil {
			ends = w.walk(c, i, j+1, ends)
		}
	}
	for k := range n.affixes {
		if n.affixes[k].matches(t.word) {
			ends = w.walk(n.affixes[k].child, i, j+1, ends)
		}
	}
	for _, g := range n.groups {
		var buf [4]int
		for _, e := range w.groupEnds(g.sub, i, j, buf[:0]) {
			ends = w.walk(g.child, i, e, ends)
		}
	}
	return ends
}

// groupEnds follows a group's trie from token j (the phrase started at
// token i) and returns where its alternatives end.
func (w *words) groupEnds(n *node, i, j int, out []int) []int {
	if n.end {
		out = append(out, j)
	}
	if j >= len(w.toks) || j > i && !w.sameClause(j) {
		return out
	}
	t := &w.toks[j]
	if c := n.next(t.word); c != nil {
		out = w.groupEnds(c, i, j+1, out)
	}
	if t.class != clsNone {
		if c := n.next(classWords[t.class]); c != nil {
			out = w.groupEnds(c, i, j+1, out)
		}
	}
	return out
}

// sameClause: token j continues the clause of token j-1: no boundary, or
// a comma around a parenthetical ("пришлите, пожалуйста, ключ").
func (w *words) sameClause(j int) bool {
	t := &w.toks[j]
	return t.brk == brkNone || t.brk == brkClause && (parentheticals[t.word] || parentheticals[w.toks[j-1].word])
}

// found is a phrase in the normalised text.
type found struct {
	start, end int
	kind       string
	scope      string
	lang       string
	rule       *compiled // nil for status rows
}

func (w *words) phrase(r *compiled, i, j int) found {
	f := found{start: w.toks[i].start, end: w.toks[j-1].end, kind: r.kind, lang: r.lang.tag, rule: r}
	if r.kind == KindDone {
		f.scope = r.scope
		if f.scope == "" {
			f.scope = ScopeWork
		}
		switch f.scope {
		case ScopeTests, ScopeBuild, ScopeLint:
			for k := i; k < j; k++ {
				if t := w.toks[k]; t.word == codeWord && int(t.code) < len(w.codes) {
					if s := scopeOfCode(w.codes[t.code]); s != "" {
						f.scope = s
					}
					break
				}
			}
		}
	}
	return f
}

// scopeOfCode reads the scope of a claim about a command from the command
// ("`go vet ./...` is clean"), "" when it says nothing.
func scopeOfCode(code string) string {
	code = strings.ToLower(code)
	has := func(list ...string) bool {
		for _, s := range list {
			if strings.Contains(code, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("test", "spec", "jest", "mocha", "ctest"):
		return ScopeTests
	case has("lint", "vet", "fmt", "clippy", "ruff", "flake8", "mypy", "pyright", "tsc", "staticcheck", "prettier",
		"black", "typecheck", "type-check", "check"):
		return ScopeLint
	case has("build", "compile", "cargo check", "javac", "gcc", "clang"):
		return ScopeBuild
	}
	return ""
}

// counts decides whether the words [i, j) matching r are a claim.
func (w *words) counts(r *compiled, i, j int) bool {
	toks, l := w.toks, r.lang
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
	if r.predicate && !w.predicate(l, i, j) {
		return false
	}
	if r.final && !w.endsClause(r, j) {
		return false
	}
	for k := i; k < j && len(r.notIn) > 0; k++ {
		if r.notIn[toks[k].word] {
			return false
		}
	}
	if r.first && i > 0 && first.brk != brkSentence {
		return false
	}
	if r.noFailure && w.reportsFailure(first.sentence) {
		return false
	}
	// Done and blocked phrases state something, so questions and
	// hypotheticals cancel them; a delegation phrase is a request either way.
	statement := r.kind != KindDelegation
	if statement && w.question[first.sentence] {
		return false
	}
	needed := len(r.needs) == 0
	for k, steps := i-1, 0; k >= 0 && steps < window; k, steps = k-1, steps+1 {
		if !w.sameClause(k+1) && (toks[k+1].brk != brkClause || !l.complementizers[toks[k+1].word]) {
			break
		}
		word := toks[k].word
		if l.conjunctions[word] {
			break
		}
		if r.needs[word] {
			needed = true
		}
		if l.negators[word] || hasAffix(word, l.negSuffixes, true) || hasAffix(word, l.negPrefixes, false) || r.unless[word] {
			return false
		}
		if !statement {
			continue
		}
		if l.hypotheticals[word] || hasAffix(word, l.hypSuffixes, true) {
			return false
		}
		if k > 0 && toks[k].brk == brkNone && l.hypPairs[toks[k-1].word+" "+word] {
			return false
		}
		if l.imperatives[word] && w.clauseInitial(l, k) {
			return false
		}
	}
	if !needed {
		return false
	}
	if l.hasNegAfterWords {
		for k := j; k < len(toks) && k < j+afterWindow && toks[k].brk == brkNone; k++ {
			if l.negAfter[toks[k].word] || statement && l.askAfter[toks[k].word] {
				return false
			}
		}
	}
	return true
}

// Words looked at around a phrase: before it for negation and
// hypotheticals, after it for negAfter.
const (
	window      = 6
	afterWindow = 3
)

func containsWord(list, w string) bool {
	for _, x := range strings.Fields(list) {
		if x == w {
			return true
		}
	}
	return false
}

// hasAffix reports whether word ends (suffix) or starts with one of the
// affixes and is longer than it.
func hasAffix(word string, affixes []string, suffix bool) bool {
	for _, a := range affixes {
		if len(word) > len(a) && (suffix && strings.HasSuffix(word, a) || !suffix && strings.HasPrefix(word, a)) {
			return true
		}
	}
	return false
}

// endsClause: the phrase ending before token j ends its clause, or is
// followed by a word of r.endOr.
func (w *words) endsClause(r *compiled, j int) bool {
	toks := w.toks
	return j == len(toks) || toks[j].brk != brkNone || r.lang.conjunctions[toks[j].word] ||
		r.endOr != "" && containsWord(r.endOr, toks[j].word)
}

// predicate: after a linking word, or ending its clause.
func (w *words) predicate(l *lang, i, j int) bool {
	toks := w.toks
	if i > 0 && toks[i].brk == brkNone {
		prev := toks[i-1].word
		if l.linking[prev] || hasAffix(prev, l.linkSuffixes, true) {
			return true
		}
	}
	return j == len(toks) || toks[j].brk != brkNone || l.conjunctions[toks[j].word]
}

// clauseInitial: word k starts its clause, lead-ins aside.
func (w *words) clauseInitial(l *lang, k int) bool {
	toks := w.toks
	for k > 0 && toks[k].brk == brkNone && l.leadIns[toks[k-1].word] {
		k--
	}
	return k == 0 || toks[k].brk != brkNone || l.conjunctions[toks[k-1].word]
}

// failWords report a failure unless a zero or no comes right before
// ("0 failed").
var (
	failWords = wordSet("fail fails failed failing failure failures broken error errors red")
	zeroWords = wordSet("0 zero no none without")
)

// reportsFailure: does the sentence report a failure (a fail mark, a count
// of part, a failure word not counted as zero)?
func (w *words) reportsFailure(s int32) bool {
	if w.failure == nil {
		w.failure = make([]int8, len(w.question))
	}
	if w.failure[s] == 0 {
		w.failure[s] = 1
		for k := w.sentStart[s]; k < len(w.toks) && w.toks[k].sentence == s; k++ {
			t := w.toks[k]
			if t.word == failWord || t.class == clsPart ||
				failWords[t.word] && (k == 0 || t.brk != brkNone || !zeroWords[w.toks[k-1].word]) {
				w.failure[s] = 2
				break
			}
		}
	}
	return w.failure[s] == 2
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

const quotes = "\"'`“”‘’«»「」『』"

func endsWithQuote(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r != utf8.RuneError && strings.ContainsRune(quotes, r)
}

func startsWithQuote(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r != utf8.RuneError && strings.ContainsRune(quotes, r)
}
