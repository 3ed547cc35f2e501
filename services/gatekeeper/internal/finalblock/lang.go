package finalblock

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// langSpec is one language's phrase table and the words that cancel its
// phrases. Word lists are separated by blanks, pair lists by "|".
//
// A word table (substr false) is matched word by word: see rule. A
// substring table (substr true: Japanese, Chinese, Korean, written without
// spaces between words or with particles glued to them) is matched rune by
// rune within a sentence, blanks skipped, and its lists hold substrings
// rather than words.
type langSpec struct {
	tag   string // BCP 47
	rules []rule
	// negators cancel every kind when they come before the phrase in its
	// clause; hypotheticals cancel done and blocked phrases (a conditional
	// request is still a request).
	negators, hypotheticals string
	// Word tables only.
	hypotheticalPairs string // "|"-separated pairs of words, as hypotheticals
	imperatives       string // at the start of a clause: an instruction to the reader
	leadIns           string // may come before an imperative
	conjunctions      string // start a new clause
	linking           string // make the next word a predicate (is, are, …)
	negAfter          string // cancel every kind when they follow the phrase in its clause (nicht, pas, inte)
	askAfter          string // cancel done and blocked when they follow it: question tags (Turkish mı, Vietnamese chưa)
	// complementizers open a clause that the look-back for negators and
	// hypotheticals crosses into the clause before ("Stellen Sie sicher,
	// dass alle Tests grün sind"; "Убедитесь, что все тесты проходят").
	complementizers string
	// parentheticals are set off by commas without ending the clause
	// ("Пришлите, пожалуйста, ключ").
	parentheticals string
	// markers are letters peculiar to the language: where the same words
	// are in two tables (Russian and Ukrainian "готово"), a sentence holding
	// one of them names the language.
	markers string
	// Affixes of single words: negSuffixes, negPrefixes act as negators,
	// hypSuffixes as hypotheticals, linkSuffixes as linking words
	// (English n't, 'll, 's).
	negSuffixes, negPrefixes, hypSuffixes, linkSuffixes string
	// Substring tables only.
	substr bool
	// negBefore: right before the phrase, a prefix that negates it (未, 미).
	negBefore string
	// after: right after the phrase, what makes a statement conditional,
	// a question or not yet (たら, か, 吗, 후, 면).
	after string
	// joiners may follow a phrase that must end its clause (rule.end).
	joiners string
}

// lang is a compiled langSpec.
type lang struct {
	tag                                                                   string
	substr                                                                bool
	negators, hypotheticals, hypPairs, imperatives, leadIns, conjunctions map[string]bool
	linking, negAfter, askAfter                                           map[string]bool
	negSuffixes, negPrefixes, hypSuffixes, linkSuffixes                   []string
	subNegators, subHypotheticals, subNegBefore, subAfter, subJoiners     []string
	hasNegAfterWords                                                      bool
	complementizers                                                       map[string]bool
	markers                                                               string
}

// langSpecs lists the tables. Where two tables hold the same words (the
// Russian and Ukrainian "готово"), the first listed names the language.
var langSpecs = []*langSpec{
	&english, &notation, &german, &french, &spanish, &portuguese, &italian, &dutch, &swedish,
	&polish, &czech, &russian, &ukrainian, &turkish, &vietnamese, &indonesian, &hindi, &arabic,
	&japanese, &chineseBoth, &chineseSimplified, &chineseTraditional, &korean,
}

// parentheticals of every table.
var parentheticals = map[string]bool{}

// languages are the compiled tables, in the order of langSpecs.
var languages = compileLanguages(langSpecs)

func compileLanguages(specs []*langSpec) []*lang {
	out := make([]*lang, len(specs))
	for i, s := range specs {
		l := &lang{tag: s.tag, substr: s.substr}
		if s.substr {
			l.subNegators, l.subHypotheticals = strings.Fields(s.negators), strings.Fields(s.hypotheticals)
			l.subNegBefore, l.subAfter, l.subJoiners = strings.Fields(s.negBefore), strings.Fields(s.after), strings.Fields(s.joiners)
		} else {
			l.negators, l.hypotheticals = normSet(s.negators), normSet(s.hypotheticals)
			l.hypPairs = wordSet(s.hypotheticalPairs, "|")
			l.imperatives, l.leadIns, l.conjunctions = normSet(s.imperatives), normSet(s.leadIns), normSet(s.conjunctions)
			l.linking, l.negAfter = normSet(s.linking), normSet(s.negAfter)
			l.negSuffixes, l.negPrefixes = normFields(s.negSuffixes), normFields(s.negPrefixes)
			l.hypSuffixes, l.linkSuffixes = normFields(s.hypSuffixes), normFields(s.linkSuffixes)
			l.askAfter = normSet(s.askAfter)
			l.hasNegAfterWords = len(l.negAfter)+len(l.askAfter) > 0
			l.complementizers = normSet(s.complementizers)
			for w := range normSet(s.parentheticals) {
				parentheticals[w] = true
			}
		}
		l.markers = s.markers
		out[i] = l
	}
	return out
}

func normFields(list string) []string {
	f := strings.Fields(list)
	for i, w := range f {
		f[i] = normWord(w)
	}
	return f
}

func normSet(list string) map[string]bool {
	set := map[string]bool{}
	for _, w := range normFields(list) {
		set[w] = true
	}
	return set
}

func wordSet(list string, sep ...string) map[string]bool {
	var words []string
	if len(sep) > 0 {
		words = strings.Split(list, sep[0])
	} else {
		words = strings.Fields(list)
	}
	set := make(map[string]bool, len(words))
	for _, w := range words {
		set[normWord(w)] = true
	}
	return set
}

// normWord is how a word is compared: lower case, ’ and ʼ read as ',
// dotless ı read as i (so that Turkish words match in capitals too), and
// Arabic written without vowel marks and tatweel, with the hamza forms of
// alef (أ إ آ) read as bare alef and alef maksura (ى) as yeh.
func normWord(s string) string {
	ascii := true
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if 'A' <= c && c <= 'Z' {
			upper = true
		}
	}
	if ascii {
		if upper {
			return strings.ToLower(s)
		}
		return s
	}
	s = strings.ToLower(s)
	if !strings.ContainsAny(s, "’ʼıأإآىـ\u064B\u064C\u064D\u064E\u064F\u0650\u0651\u0652\u0670") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '’' || r == 'ʼ':
			b.WriteByte('\'')
		case r == 'ı':
			b.WriteByte('i')
		case r == 'أ' || r == 'إ' || r == 'آ':
			b.WriteRune('ا')
		case r == 'ى':
			b.WriteRune('ي')
		case r == 'ـ' || (0x064B <= r && r <= 0x0652) || r == 0x0670:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// node is a node of the word trie.
type node struct {
	next    map[string]*node
	affixes []affix     // words matched by prefix or suffix
	rules   []*compiled // phrases that end here
}

// affix is a pattern word "stem*" (any word starting with stem) or
// "*ending" (any word ending so).
type affix struct {
	text   string
	suffix bool
	child  *node
}

func (a *affix) matches(word string) bool {
	if len(word) <= len(a.text) {
		return false
	}
	if a.suffix {
		return strings.HasSuffix(word, a.text)
	}
	return strings.HasPrefix(word, a.text)
}

// compiled is a rule with its word sets built.
type compiled struct {
	rule
	lang                                      *lang
	notAfter, notBefore, unless, needs, notIn map[string]bool
	notAfterSub, notBeforeSub                 []string // substring tables
	id                                        int      // index over all tables, for tests
}

// wordTrie holds every expansion of every rule of the word tables; runeTrie
// those of the substring tables.
var wordTrie, runeTrie = buildTries(langSpecs, languages)

// allRules lists the compiled rules, in table order.
var allRules []*compiled

func buildTries(specs []*langSpec, langs []*lang) (*node, *rnode) {
	words, runes := &node{}, &rnode{}
	for i, s := range specs {
		for _, r := range s.rules {
			c := &compiled{rule: r, lang: langs[i], id: len(allRules)}
			allRules = append(allRules, c)
			if s.substr {
				c.notAfterSub, c.notBeforeSub = strings.Fields(r.notAfter), strings.Fields(r.notBefore)
				for _, seq := range expand(r.phrase) {
					runes.add(normWord(strings.Join(seq, "")), c)
				}
				continue
			}
			c.notAfter, c.notBefore = wordSet(r.notAfter), wordSet(r.notBefore)
			c.unless, c.needs, c.notIn = wordSet(r.unless), wordSet(r.needs), wordSet(r.notIn)
			for _, seq := range expand(r.phrase) {
				if len(seq) > 0 {
					words.add(seq, c)
				}
			}
		}
	}
	return words, runes
}

func (n *node) add(seq []string, c *compiled) {
	for _, w := range seq {
		n = n.child(w)
	}
	n.rules = append(n.rules, c)
}

func (n *node) child(w string) *node {
	if len(w) > 1 && (strings.HasPrefix(w, "*") || strings.HasSuffix(w, "*")) {
		a := affix{text: normWord(strings.Trim(w, "*")), suffix: strings.HasPrefix(w, "*")}
		for _, old := range n.affixes {
			if old.text == a.text && old.suffix == a.suffix {
				return old.child
			}
		}
		a.child = &node{}
		n.affixes = append(n.affixes, a)
		return a.child
	}
	if !strings.HasPrefix(w, "<") {
		w = normWord(w)
	}
	if n.next == nil {
		n.next = make(map[string]*node)
	}
	child := n.next[w]
	if child == nil {
		child = &node{}
		n.next[w] = child
	}
	return child
}

// rnode is a node of the rune trie of the substring tables.
type rnode struct {
	next  map[rune]*rnode
	rules []*compiled
}

func (n *rnode) add(s string, c *compiled) {
	for _, r := range s {
		if unicode.IsSpace(r) {
			continue
		}
		if n.next == nil {
			n.next = make(map[rune]*rnode)
		}
		child := n.next[r]
		if child == nil {
			child = &rnode{}
			n.next[r] = child
		}
		n = child
	}
	if n != nil {
		n.rules = append(n.rules, c)
	}
}

// Rule builders for the tables: done(scope, phrase), blocked(phrase) and
// request(phrase) make a row; the methods add its exceptions.
func done(scope, phrase string) rule { return rule{kind: KindDone, scope: scope, phrase: phrase} }
func blocked(phrase string) rule     { return rule{kind: KindBlocked, phrase: phrase} }
func request(phrase string) rule     { return rule{kind: KindDelegation, phrase: phrase} }

// pred: counts only as a predicate.
func (r rule) pred() rule { r.predicate = true; return r }

// fin: counts only at the end of its clause, or before one of endOr.
func (r rule) fin(endOr ...string) rule {
	r.final, r.endOr = true, strings.Join(endOr, " ")
	return r
}

// na: not right after one of the words; nb: not right before one.
func (r rule) na(words string) rule { r.notAfter = words; return r }
func (r rule) nb(words string) rule { r.notBefore = words; return r }

// ul: not after one of the words earlier in its clause.
func (r rule) ul(words string) rule { r.unless = words; return r }

// needing: only after one of the words earlier in its clause.
func (r rule) needing(words string) rule { r.needs = words; return r }

// expand lists the word sequences a phrase pattern matches.
func expand(p string) [][]string {
	seqs := [][]string{nil}
	for {
		p = strings.TrimLeft(p, " ")
		if p == "" {
			return seqs
		}
		var alts [][]string
		if p[0] == '(' {
			end := strings.IndexByte(p, ')')
			if end < 0 {
				end = len(p)
			}
			for _, a := range strings.Split(p[1:end], "|") {
				alts = append(alts, strings.Fields(a))
			}
			p = p[min(end+1, len(p)):]
		} else {
			end := strings.IndexAny(p, " (")
			if end < 0 {
				end = len(p)
			}
			if end == 0 {
				end = 1
			}
			alts = [][]string{{p[:end]}}
			p = p[end:]
		}
		var out [][]string
		for _, s := range seqs {
			for _, a := range alts {
				seq := make([]string, 0, len(s)+len(a))
				out = append(out, append(append(seq, s...), a...))
			}
		}
		seqs = out
	}
}
