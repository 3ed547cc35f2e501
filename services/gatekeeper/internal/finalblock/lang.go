package finalblock

import (
	"fmt"
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

// node is a node of the word trie. Most nodes have a child or two, so
// children are a slice until there are many (a map for each node would
// make building the trie slow).
type node struct {
	words   []string
	kids    []*node
	index   map[string]*node // when there are many children
	affixes []affix          // words matched by prefix or suffix
	groups  []groupEdge      // groups of many alternatives, matched by their own trie
	rules   []*compiled      // phrases that end here
	end     bool             // in a group's trie: an alternative ends here
}

// groupEdge is a group of a pattern with many alternatives, past the first
// word: its alternatives are a trie of their own (sub), and what follows
// the group hangs once from child, instead of once under each alternative
// (the English deploy row would otherwise need thousands of nodes).
type groupEdge struct {
	key        string
	sub, child *node
}

// bigGroup is how many alternatives make a group a groupEdge.
const bigGroup = 3

// groupTries caches the tries of the groups, by their text.
var groupTries = map[string]*node{}

// manyKids is when a node's children get an index.
const manyKids = 8

// next returns the child of a word, nil for none.
func (n *node) next(w string) *node {
	if n.index != nil {
		return n.index[w]
	}
	for i, x := range n.words {
		if x == w {
			return n.kids[i]
		}
	}
	return nil
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
			groups := parsePattern(r.phrase)
			if s.substr {
				c.notAfterSub, c.notBeforeSub = strings.Fields(r.notAfter), strings.Fields(r.notBefore)
				runes.insert(groups, c, true)
				continue
			}
			c.notAfter, c.notBefore = wordSet(r.notAfter), wordSet(r.notBefore)
			c.unless, c.needs, c.notIn = wordSet(r.unless), wordSet(r.needs), wordSet(r.notIn)
			words.insert(groups, c, true)
		}
	}
	return words, runes
}

// insert adds every sequence of the groups to the trie, group by group,
// so that a pattern with many alternatives shares its prefixes instead of
// being expanded first. atRoot: nothing matched yet (an empty sequence
// adds nothing).
func (n *node) insert(groups [][][]string, c *compiled, atRoot bool) {
	if len(groups) == 0 {
		if !atRoot && (len(n.rules) == 0 || n.rules[len(n.rules)-1] != c) {
			n.rules = append(n.rules, c)
		}
		return
	}
	if !atRoot && len(groups[0]) > bigGroup {
		key := strings.Join(strings.Fields(fmt.Sprint(groups[0])), " ")
		var child *node
		for _, g := range n.groups {
			if g.key == key {
				child = g.child
			}
		}
		if child == nil {
			sub := groupTries[key]
			if sub == nil {
				sub = &node{}
				for _, alt := range groups[0] {
					m := sub
					for _, w := range alt {
						m = m.child(w)
					}
					m.end = true
				}
				groupTries[key] = sub
			}
			child = &node{}
			n.groups = append(n.groups, groupEdge{key: key, sub: sub, child: child})
		}
		child.insert(groups[1:], c, false)
		return
	}
	for _, alt := range groups[0] {
		m := n
		for _, w := range alt {
			m = m.child(w)
		}
		m.insert(groups[1:], c, atRoot && len(alt) == 0)
	}
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
	if child := n.next(w); child != nil {
		return child
	}
	child := &node{}
	n.words, n.kids = append(n.words, w), append(n.kids, child)
	switch {
	case n.index != nil:
		n.index[w] = child
	case len(n.words) > manyKids:
		n.index = make(map[string]*node, len(n.words))
		for i, x := range n.words {
			n.index[x] = n.kids[i]
		}
	}
	return child
}

// rnode is a node of the rune trie of the substring tables.
type rnode struct {
	runes  []rune
	kids   []*rnode
	index  map[rune]*rnode // when there are many children
	groups []runeGroupEdge
	rules  []*compiled
	end    bool // in a group's trie: an alternative ends here
}

// runeGroupEdge is groupEdge for the rune trie.
type runeGroupEdge struct {
	key        string
	sub, child *rnode
}

var runeGroupTries = map[string]*rnode{}

func (n *rnode) next(r rune) *rnode {
	if n.index != nil {
		return n.index[r]
	}
	for i, x := range n.runes {
		if x == r {
			return n.kids[i]
		}
	}
	return nil
}

func (n *rnode) child(r rune) *rnode {
	if child := n.next(r); child != nil {
		return child
	}
	child := &rnode{}
	n.runes, n.kids = append(n.runes, r), append(n.kids, child)
	switch {
	case n.index != nil:
		n.index[r] = child
	case len(n.runes) > manyKids:
		n.index = make(map[rune]*rnode, len(n.runes))
		for i, x := range n.runes {
			n.index[x] = n.kids[i]
		}
	}
	return child
}

// insert adds every sequence of the groups, rune by rune, blanks left
// out, as node.insert does.
func (n *rnode) insert(groups [][][]string, c *compiled, atRoot bool) {
	if len(groups) == 0 {
		if !atRoot && (len(n.rules) == 0 || n.rules[len(n.rules)-1] != c) {
			n.rules = append(n.rules, c)
		}
		return
	}
	if !atRoot && len(groups[0]) > bigGroup {
		key := fmt.Sprint(groups[0])
		var child *rnode
		for _, g := range n.groups {
			if g.key == key {
				child = g.child
			}
		}
		if child == nil {
			sub := runeGroupTries[key]
			if sub == nil {
				sub = &rnode{}
				for _, alt := range groups[0] {
					sub.path(alt).end = true
				}
				runeGroupTries[key] = sub
			}
			child = &rnode{}
			n.groups = append(n.groups, runeGroupEdge{key: key, sub: sub, child: child})
		}
		child.insert(groups[1:], c, false)
		return
	}
	for _, alt := range groups[0] {
		m := n.path(alt)
		m.insert(groups[1:], c, atRoot && m == n)
	}
}

// path returns the node the words lead to, blanks left out.
func (n *rnode) path(words []string) *rnode {
	for _, w := range words {
		for _, r := range normWord(w) {
			if !unicode.IsSpace(r) {
				n = n.child(r)
			}
		}
	}
	return n
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

// parsePattern splits a phrase pattern into groups of alternatives, each
// alternative a sequence of words: "(i'm|i am) (still |)blocked" is
// [[[i'm] [i am]] [[still] []] [[blocked]]].
func parsePattern(p string) [][][]string {
	var groups [][][]string
	for {
		p = strings.TrimLeft(p, " ")
		if p == "" {
			return groups
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
		groups = append(groups, alts)
	}
}

// expand lists the word sequences a phrase pattern matches.
func expand(p string) [][]string {
	seqs := [][]string{nil}
	for _, alts := range parsePattern(p) {
		var out [][]string
		for _, s := range seqs {
			for _, a := range alts {
				seq := make([]string, 0, len(s)+len(a))
				out = append(out, append(append(seq, s...), a...))
			}
		}
		seqs = out
	}
	return seqs
}
