package finalblock

import "strings"

// rule is one reviewed claim phrase. phrase is a sequence of words matched
// whole, case-insensitively, against the words of the prose; a group
// "(a|b c|)" matches any one of its alternatives, and an empty alternative
// makes it optional. Words are what the tokenizer produces: letters, digits
// and the identifier characters _ - . / \ ' @ # $ % + = ~ &, lower case, with
// ’ read as '; "<code>" matches an inline code span.
//
// Every phrase is also cancelled by the general rules in phrase.go (negation
// and, for done and blocked, hypotheticals and questions); the fields below
// add exceptions that only make sense for this phrase.
type rule struct {
	kind string
	// scope: what a done phrase asserts (a Scope constant); "" is ScopeWork.
	scope  string
	phrase string
	// The phrase does not count right after one of these words.
	notAfter string
	// The phrase does not count right before one of these words.
	notBefore string
	// The phrase does not count after one of these words earlier in its
	// clause.
	unless string
	// The phrase counts only as a predicate: right after a linking word
	// (is, 's, now, all, have, …) or at the end of its clause.
	predicate bool
}

// Word lists shared by several rules.
const (
	// An adjective before a noun, not a claim: "the fixed size".
	determiners = "a an the this that these those some any each every its their our your my his her another"
	// Describing how code works, not reporting work: "resolved at runtime".
	describing = "by via using through as in inside within on at like per lazily automatically internally"
	// Verbs a human could do or provide for the agent.
	asks = "(send|provide|share|give|upload|paste|grant|forward|attach|add|create|run|restart|install|set|generate|export|enable|rotate|log in|sign in)"
	// First-person inability: "I couldn't", "we were unable to".
	cannot      = "(i|we) (can't|cannot|can not|couldn't|could not|wasn't able to|weren't able to|was not able to|were not able to|was unable to|were unable to|am unable to|am not able to|are unable to|are not able to)"
	cannotShort = "(i'm|we're) (unable to|not able to|still unable to|still not able to)"
	// Subjects of "… pass": a test run, a tool, or an inline code span
	// ("`go test ./...` passes").
	testSubjects = "(all |all the |the |all of the |)(tests|test|specs|spec|checks|suite|suites|build|builds|ci|lint|linter|linters|pipeline|benchmarks|<code>)"
)

// rules is the reviewed phrase list. Add a row to extend it; the tests in
// phrase_test.go show what each kind must and must not match.
var rules = []rule{
	// done: the work is finished, fixed, passing or working.
	{kind: KindDone, phrase: "done", predicate: true, unless: "what how",
		notBefore: describing + " so to when if once differently"},
	{kind: KindDone, phrase: "complete", predicate: true},
	{kind: KindDone, phrase: "(completed|finished|shipped)", notAfter: determiners},
	{kind: KindDone, phrase: "fixed", notAfter: determiners,
		notBefore: "point size sizes width length number rate delay timeout interval format seed amount offset price cost order set window"},
	{kind: KindDone, phrase: "implemented", notAfter: determiners, notBefore: describing + " with here there"},
	{kind: KindDone, phrase: "resolved", notAfter: determiners, notBefore: describing + " to relative from against when"},
	{kind: KindDone, phrase: "verified", notAfter: determiners, notBefore: "by via against when if before after at"},
	{kind: KindDone, phrase: "successfully"},
	{kind: KindDone, phrase: testSubjects + " (now |all |also |still |)(pass|passes|passed|passing|succeed|succeeds|succeeded)"},
	{kind: KindDone, phrase: testSubjects + " (is|are|was|were) (now |all |still |)(passing|green|clean)"},
	{kind: KindDone, phrase: "(all|everything|they) (now |all |still |)(pass|passes|passed|passing|green)"},
	{kind: KindDone, phrase: "(everything|everything's|it's|that's) (now |)(passing|green)"},
	{kind: KindDone, phrase: "(it|this|that|everything|fix|change|patch) (now |also |)(works|worked)",
		notAfter: "how way what where why", notBefore: "by like as via through on with differently similarly the for in when if"},
	{kind: KindDone, phrase: "(works|working|worked) (now|again|correctly|fine|perfectly|as expected|as intended)"},
	{kind: KindDone, phrase: "(now|is|are|it's|everything's|that's) working",
		notBefore: "on with through to towards toward for against around in as"},
	{kind: KindDone, phrase: "(compiles|builds|compiled|built) (cleanly|successfully|fine|now|without errors|without warnings)"},
	{kind: KindDone, phrase: "ready (to|for) (merge|ship|deploy|release|review|go|production|use|land)"},
	{kind: KindDone, phrase: "all set", predicate: true, notBefore: "to for up"},
	{kind: KindDone,
		phrase:   "(deployed|released|merged|landed|pushed|rolled out) (it |them |this |the fix |the change |)(to|into|in) (production|prod|main|master|staging|the main branch|release)",
		notAfter: determiners + " be been"},
	{kind: KindDone, phrase: "good to go", notBefore: "to for"},
	{kind: KindDone, phrase: "(has|have|is|are|was|were) (now |)(been |)(addressed|taken care of|sorted out)"},
	{kind: KindDone, phrase: "(fix|fixes|change|changes|patch|patches) (is|are) (now |)in place"},
	{kind: KindDone, phrase: "(0|zero) (failures|failed|failing|errors)"},

	// blocked: the agent cannot go on by itself.
	{kind: KindBlocked, phrase: "blocked (by|on)"},
	{kind: KindBlocked,
		phrase: "(i'm|i am|we're|we are|i was|we were|i've been|we've been|i remain|we remain) (still |currently |now |)(blocked|stuck)"},
	{kind: KindBlocked, phrase: "(cannot|can't|can not|unable to|couldn't|could not) (proceed|continue)"},
	{kind: KindBlocked, phrase: cannot + " (connect|authenticate|reach|log in|sign in|get access|run|build|install|push|deploy)"},
	{kind: KindBlocked, phrase: cannotShort + " (connect|authenticate|reach|log in|sign in|get access|run|build|install|push|deploy)"},
	{kind: KindBlocked,
		phrase: "(i|we) (don't|do not|didn't|did not) have (access|permission|permissions|credentials|the credentials|the permissions|rights|the rights|write access|read access)"},
	{kind: KindBlocked, phrase: "(i|we) (have|had) no (access|permission|permissions|credentials)"},

	// delegation: the agent asks the human to do or provide something.
	{kind: KindDelegation, phrase: "need you to"},
	{kind: KindDelegation, phrase: "(please|could you|can you|would you|could you please|can you please|would you please) " + asks},
	{kind: KindDelegation, phrase: "(send|forward) (me|us)"},
	{kind: KindDelegation, phrase: "provide (me|us) with"},
	{kind: KindDelegation, phrase: "(you'll|you will) (need|have) to"},
	{kind: KindDelegation,
		phrase: "(i|we) (need|require) your (approval|input|confirmation|decision|help|credentials|password|token|key|permission|access)"},
	{kind: KindDelegation, phrase: "waiting (for|on) (you|your)"},
	{kind: KindDelegation, phrase: cannot + " (access|fetch|download|retrieve|open|view|read)"},
	{kind: KindDelegation, phrase: cannotShort + " (access|fetch|download|retrieve|open|view|read)"},
}

// General rules: words that cancel a phrase when they come before it in the
// same clause, within window words.
const window = 6

var (
	// negators cancel every kind ("not done", "no tests pass"); so does any
	// word ending in n't.
	negators = wordSet(
		"not no never none nothing nobody neither nor without cannot hardly barely almost nearly partially partly mostly half")
	// hypotheticals cancel done and blocked ("once it's done", "if I can't
	// access it", "this will be fixed"); so do words ending in 'll or 'd. A
	// conditional request is still a request, so they do not cancel
	// delegation.
	hypotheticals = wordSet(
		"if once when whenever until unless whether before after till will would shall might may going want wants wanted hope expect assuming assume suppose supposed ensure ensures let's")
	// hypotheticalPairs are two-word hypotheticals and intentions ("needs
	// to be fixed", "let me check it works", "to verify the fix works").
	hypotheticalPairs = wordSet(
		"to be|to get|can be|could be|need to|needs to|have to|has to|make sure|makes sure|making sure|to verify|to confirm|to check|to ensure|to see|to test|let me|let us", "|")
	// imperatives at the start of a clause tell the reader what to do
	// ("verify that all tests pass"); later in a clause they are reports
	// ("I can verify that all tests pass" is not cancelled).
	imperatives = wordSet("check confirm verify test see run try ensure make")
	// leadIns may come before an imperative at the start of a clause.
	leadIns = wordSet("please then just also now simply first next")
	// conjunctions start a new clause ("I didn't touch the API, and all
	// tests pass").
	conjunctions = wordSet("and but so then because since although though while whereas however therefore thus which")
	// linking words make the next word a predicate ("it is done", "all
	// done"); so do words ending in 's, 're, 'm or 've.
	linking = wordSet(
		"is are was were am be been being now all fully finally already completely totally entirely basically have has had looks look seems seem")
)

func wordSet(list string, sep ...string) map[string]bool {
	var words []string
	if len(sep) > 0 {
		words = strings.Split(list, sep[0])
	} else {
		words = strings.Fields(list)
	}
	set := make(map[string]bool, len(words))
	for _, w := range words {
		set[w] = true
	}
	return set
}

// node is a node of the phrase trie.
type node struct {
	next  map[string]*node
	rules []*compiled // phrases that end here
}

// compiled is a rule with its word sets built.
type compiled struct {
	rule
	notAfter, notBefore, unless map[string]bool
}

// trie holds every expansion of every rule.
var trie = buildTrie(rules)

func buildTrie(rs []rule) *node {
	root := &node{}
	for _, r := range rs {
		c := &compiled{rule: r, notAfter: wordSet(r.notAfter), notBefore: wordSet(r.notBefore), unless: wordSet(r.unless)}
		for _, seq := range expand(r.phrase) {
			if len(seq) == 0 {
				continue
			}
			n := root
			for _, w := range seq {
				if n.next == nil {
					n.next = make(map[string]*node)
				}
				child := n.next[w]
				if child == nil {
					child = &node{}
					n.next[w] = child
				}
				n = child
			}
			n.rules = append(n.rules, c)
		}
	}
	return root
}

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
			end := strings.IndexByte(p, ' ')
			if end < 0 {
				end = len(p)
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
