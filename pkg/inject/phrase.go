package inject

import (
	"math/bits"
	"regexp"
	"regexp/syntax"
	"strings"
)

// A phrase rule matches text that speaks to the agent. Its expression is
// tried only where one of its anchors starts (at a word start, or at a
// punctuation byte for markup), on the ASCII-folded text, and must match
// from that anchor on: the scan costs one pass over the text plus an
// expression per anchor hit.
type phrase struct {
	id      string
	anchors []string
	re      *regexp.Regexp // anchored at the start
	// forms are re's top-level alternatives, compiled apart: small
	// programs that fail within a few bytes of a non-matching anchor.
	forms  []*regexp.Regexp
	conf   Confidence
	markup bool // a markup rule: it may start at punctuation
	// weak, when set, lowers a match to Low when the text right after it
	// matches (a human's "disregard the above instructions if you use brew").
	weak *regexp.Regexp
}

// span bounds the text an expression may match past its anchor.
const span = 200

const agentNoun = `(?:ai|a\.i\.|llms?|large language models?|language models?|ai (?:agents?|assistants?|models?|systems?|tools?)|` +
	`assistants?|chatbots?|coding (?:agents?|assistants?)|claude(?: code)?|chatgpt|gpt-?\d*|copilot|cursor|gemini|codex|devin|` +
	`autonomous agents?|agents?)`

const directive = `(?:you must|you should|you need to|you will|you are|you're|please|do not|don't|never|always|ignore|disregard|` +
	`run|execute|immediately|instead|make sure|be sure to|remember to|first|now|send|read|delete|reply|respond|output|print|add|include|` +
	`insert|tell|include|use|open|fetch|call|invoke|write)\b`

var rules = []phrase{
	{
		id: "override.ignore",
		anchors: words(
			"ignore;disregard;forget;override;bypass;set aside;do not follow;don't follow;stop following;abandon"),
		re: regexp.MustCompile(
			`^(?:ignore|disregard|forget(?: about)?|override|bypass|set aside|do not follow|don't follow|stop following|abandon)` +
				`\s+(?:(?:all|any|each|every|of|the|your|my|these|those|its|their|everything)\s+)*` +
				`(?:(?:previous|prior|preceding|above|earlier|former|original|initial|system|safety|developer|prior|other|given|existing)\s+)+` +
				`(?:instructions?|prompts?|rules?|directions?|directives?|guidelines?|guidance|context|messages?|constraints?|` +
				`commands?|orders?|programming|polic(?:y|ies)|restrictions?|tasks?)\b` +
				`|^(?:forget|ignore|disregard)\s+(?:everything|all(?: of)? (?:that|this)|what)\s+` +
				`(?:above|before|(?:you(?:'ve| have)? )?(?:been told|were told|read|were given)|(?:i|we) (?:said|told you))`),
		weak: regexp.MustCompile(`^\s*(?:if|for|when|unless|on|in case|from the|of the|in the|in section|that apply)\b`),
		conf: High,
	},
	{
		id: "role.reassign",
		anchors: words(
			"you are now;you're now;from now on;your new;your real;your true;your actual;new instructions;new system;updated instructions;real instructions;enable ;enter ;activate ;act as;pretend;you are no longer;you're no longer"),
		re: regexp.MustCompile(`^(?:you are now|you're now)\s+(?:(?:a|an|the|my)\s+(?:[a-z-]+\s+){0,3}?` +
			`(?:assistant|ai|agent|model|bot|chatbot|hacker|admin|administrator|root user|persona|character)\b|dan\b|` +
			`in (?:developer|god|admin|debug|jailbreak|jailbroken|unrestricted|dan|maintenance) mode|` +
			`no longer (?:bound|restricted|limited|an? (?:ai|assistant)|claude|chatgpt)|free (?:of|from)|unrestricted|jailbroken|unfiltered|` +
			`operating (?:without|outside))` +
			`|^(?:you are|you're) no longer (?:bound|restricted|limited|an? (?:ai|assistant|language model)|required to follow|claude|chatgpt)` +
			`|^from now on,?\s+(?:you (?:will|must|are|shall|should) (?:act|respond|answer|reply|ignore|obey|only|never|behave|pretend|be an?)|` +
			`(?:act|respond|answer|reply|ignore|obey) )` +
			`|^your (?:new|real|true|actual|updated) (?:task|instructions?|goal|objective|role|purpose|mission|directives?|orders|job)` +
			`\s*(?:is|are|:|will be)` +
			`|^(?:new|updated|real|actual) (?:system )?(?:instructions|directives|system prompt|orders)\s*(?::|follow|below|are)` +
			`|^(?:enable|enter|activate)\s+(?:dan|god|jailbreak|unrestricted|unfiltered) mode` +
			`|^act as (?:an? )?(?:unrestricted|unfiltered|jailbroken|evil|uncensored|rogue)` +
			`|^pretend (?:you (?:are|have) no|that you (?:are|have) no|to have no) (?:restrictions|rules|guidelines|limits|filters)`),
		conf: High,
	},
	{
		id: "address.agent",
		anchors: words(
			"if you;when you;in case you;note ;message ;instruction;attention;notice;reminder;important;hey ;hi ;hello ;dear ;to the ;to any ;to all ;ai;a.i.;llm;large ;language ;assistant;chatbot;coding ;claude;chatgpt;gpt;copilot;cursor;gemini;codex;devin;autonomous"),
		re: regexp.MustCompile(`^(?:if|when|in case) you(?:'re| are)\s+(?:an?\s+|the\s+)?(?:[a-z-]+\s+){0,2}?` + agentNoun +
			`(?:\s+(?:reading|processing|summari[sz]ing|parsing|crawling|browsing|scraping|analy[sz]ing|looking at|reviewing|indexing|` +
			`that|who|with access)|\s*[,.:;!]|\s+(?:then|you must|please))` +
			`|^(?:note|message|instructions?|attention|notice|reminder|important(?: note| message| notice)?|hey|hi|hello|dear)\s*` +
			`(?:to|for)?\s*(?:all\s+|any\s+|the\s+)?(?:automated\s+|autonomous\s+)?` + agentNoun + `(?:\s+[a-z]+){0,2}\s*[:,!-]` +
			`|^(?:to|for) (?:the |any |all )?(?:automated |autonomous )?` + agentNoun +
			`(?:\s+(?:reading|processing|summari[sz]ing|parsing|reviewing) (?:this|these)[a-z ]{0,20})?\s*:` +
			`|^(?:ai|a\.i\.|llms?|large language models?|language models?|ai (?:agents?|assistants?|models?)|assistants?|chatbots?|` +
			`coding (?:agents?|assistants?)|claude(?: code)?|chatgpt|copilot|gemini|codex|devin|autonomous agents?)` +
			`(?:\s+(?:reading|processing|summari[sz]ing|parsing|browsing|reviewing) (?:this|the)[^.:,\n]{0,40})?\s*[:,]\s*` + directive),
		conf: High,
	},
	{
		id:      "conceal",
		anchors: []string{"do not", "don't", "never", "without", "keep ", "hide ", "the user", "silently", "secretly", "quietly"},
		re: regexp.MustCompile(`^(?:do not|don't|never|without)\s+(?:tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|alert(?:ing)?|` +
			`mention(?:ing)?|reveal(?:ing)?|show(?:ing)?|let(?:ting)?|report(?:ing)?|disclos(?:e|ing)|warn(?:ing)?)\s+` +
			`(?:this\s+|it\s+|anything\s+|any of this\s+)?(?:to\s+)?the\s+(?:user|human|developer|operator)` +
			`(?:\s+(?:know|see|about|that|of|what)|\s*[.,;!]|\s+and\b|$)` +
			`|^(?:keep|hide) (?:this|it|these (?:instructions|steps)|the (?:above|following)) (?:secret |hidden )?from the (?:user|human)` +
			`|^the (?:user|human) (?:must not|should not|shouldn't|does not need to|doesn't need to|must never) (?:know|see|be told|find out|notice)` +
			`|^(?:silently|secretly|quietly|covertly)\s+(?:run|execute|send|upload|post|add|append|copy|delete|remove|install|exfiltrate|` +
			`include|insert|modify|change|read|fetch|curl)\b`),
		conf: High,
	},
	{
		id: "exfil",
		anchors: words(
			"collect;gather;dump;grab;harvest;send;post;upload;exfiltrate;transmit;forward;email;leak;copy;include;append"),
		re: regexp.MustCompile(`^(?:collect|gather|dump|grab|harvest|read) (?:all |the |your |every )?(?:environment variables|env vars|` +
			`secrets|credentials|api keys|tokens|ssh keys|session cookies|passwords) and (?:send|post|upload|transmit|forward|email) ` +
			`(?:them|it|everything) (?:to|at)\b` +
			`|^(?:send|post|upload|exfiltrate|transmit|forward|email|leak|copy|include|append)\s+` +
			`(?:[a-z']+\s+){0,4}?(?:contents? of\s+)?(?:the\s+|your\s+|all\s+|any\s+)*` +
			`(?:~/\.ssh\S*|id_rsa|id_ed25519|\.env\b|\.aws/credentials|aws credentials|private keys?|ssh keys?|environment variables|` +
			`env vars|secrets|credentials|api keys|access tokens|session cookies|\.npmrc|\.netrc|/etc/passwd|/etc/shadow)` +
			`[^\n]{0,80}?\b(?:to|at|into)\s+(?:https?://|[a-z0-9-]+\.(?:com|net|org|io|xyz|ru|top|site|dev|sh)\b|` +
			`[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+|` +
			`this (?:url|endpoint|address|webhook|server)|the (?:following|webhook|endpoint)|a (?:public )?(?:gist|pastebin))`),
		conf: Medium,
	},
	{
		id:      "prompt.leak",
		anchors: []string{"reveal", "print", "output", "repeat", "show", "display", "leak", "dump", "tell me", "include", "paste"},
		re: regexp.MustCompile(`^(?:reveal|print|output|repeat|show|display|leak|dump|tell me|include|paste)\s+(?:me\s+)?` +
			`(?:your|the)\s+(?:(?:entire|full|complete|original|hidden|initial|exact|verbatim)\s+)*` +
			`(?:system prompt|system message|initial instructions|hidden instructions|instructions above|prompt above|` +
			`text above|conversation so far|rules you were given)`),
		weak: regexp.MustCompile(`^\s*(?:using|via|from|for debugging|to the console|to stdout|to the log)\b`),
		conf: Medium,
	},
	{
		id:     "markup.role",
		markup: true,
		anchors: words(
			"<|;[inst];[/inst];<<sys>>;<</sys>>;<start_of_turn>;<end_of_turn>;<system;</system;<sys>;<admin>;<developer;<instructions>;<important>;###;system;[system;(system"),
		re: regexp.MustCompile(`^<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|` +
			`begin_of_text|end_of_text|im_sep|channel|message|end|start|return|call|constrain)\|>` +
			`|^\[/?inst\]|^<</?sys>>|^<(?:start|end)_of_turn>` +
			`|^</?(?:system|system[-_]prompt|system[-_]message|system[-_]reminder|sys|admin|developer[-_]?(?:message|instructions?)|` +
			`instructions|important)>[^<]{40}` +
			`|^#{1,4}\s*(?:new\s+|updated\s+)?(?:system|admin|developer)\s*(?:message|instructions?|override|prompt)?\s*:` +
			`|^#{1,4}\s*(?:new|updated)\s+(?:system\s+)?(?:instructions|prompt)\b` +
			`|^\[(?:system|system message|system note|admin)\]\s*[:-]?\s*[a-z]` +
			`|^\((?:system|system message|system note)\)\s*[:-]?\s*[a-z]` +
			`|^(?:system|system prompt|system message|system override)\s*:\s*(?:you|ignore|new|from now|the assistant|always|never|` +
			`override|important|disregard|forget|your)\b`),
		conf: High,
	},
	{
		id:     "markup.toolcall",
		markup: true,
		anchors: words(
			"<tool;</tool;<function;<|tool;<|python_tag|>;[tool_calls];<" + "invoke;<use_tool;\"type\";<parameter"),
		re: regexp.MustCompile(`^</?(?:tool_call|tool_calls|tool_use|tool_result|tool_code|function_call|function_calls|functioncall|` +
			`use_tool|invoke|parameter)\b` +
			`|^<\|(?:tool_call|tool_calls|python_tag|tool_response)\|>|^<\|python_tag\|>|^\[tool_calls\]` +
			`|^"type"\s*:\s*"(?:tool_use|function_call|tool_call)"`),
		conf: High,
	},
}

// words splits a list of anchors separated by ";".
func words(s string) []string { return strings.Split(s, ";") }

// anchorIndex lists the anchors by their first two bytes: bucket[b0<<8|b1]
// indexes buckets (0: none); keys has the bit b0<<8|b1 set for the pairs
// with a bucket (8 KiB, where bucket is 64), first the bytes an anchor
// starts with. quad has the bit quadHash of the first four bytes of each
// anchor of four bytes or more set, and short the pairs that start a
// shorter one.
var anchorIndex = func() (idx struct {
	bucket  [1 << 16]uint8
	keys    [1 << 16 / 64]uint64
	short   [1 << 16 / 64]uint64
	quad    [1 << 16 / 64]uint64
	first   [256]bool
	buckets [][]anchorRef
}) {
	idx.buckets = [][]anchorRef{nil}
	progs := map[*regexp.Regexp]*syntax.Prog{}
	for i := range rules {
		for _, alt := range alternatives(rules[i].re.String()) {
			rules[i].forms = append(rules[i].forms, regexp.MustCompile(alt))
		}
		for _, a := range rules[i].anchors {
			// the forms an anchor can start: those that spell it (escapes
			// removed), or all of them when none does
			var forms []*regexp.Regexp
			for _, f := range rules[i].forms {
				src := strings.ReplaceAll(f.String(), `\`, "")
				lead := strings.TrimPrefix(strings.TrimPrefix(src, "^"), "(?:")
				if lead != "" && !isLetter(lead[0]) && lead[0] != a[0] {
					continue // the form starts with other punctuation
				}
				if strings.Contains(src, strings.TrimSpace(a)) {
					forms = append(forms, f)
				}
			}
			if forms == nil {
				forms = rules[i].forms
			}
			// of those, the ones the prefilter cannot rule out after the anchor
			var fs []form
			for _, f := range forms {
				if progs[f] == nil {
					progs[f] = compileProg(f)
				}
				if f, ok := newForm(f, progs[f], a); ok {
					fs = append(fs, f)
				}
			}
			if fs == nil {
				continue
			}
			k := uint16(a[0])<<8 | uint16(a[1])
			if idx.bucket[k] == 0 {
				idx.bucket[k] = uint8(len(idx.buckets))
				idx.buckets = append(idx.buckets, nil)
			}
			b := idx.bucket[k]
			idx.buckets[b] = append(idx.buckets[b], newAnchorRef(a, i, fs))
			idx.keys[k>>6] |= 1 << (k & 63)
			if len(a) < 4 {
				idx.short[k>>6] |= 1 << (k & 63)
			} else {
				h := quadHash(a, 0)
				idx.quad[h>>6] |= 1 << (h & 63)
			}
			idx.first[a[0]] = true
		}
	}
	return idx
}()

// alternatives splits an expression at its top-level "|".
func alternatives(expr string) []string {
	var out []string
	depth, class, from := 0, false, 0
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			out = append(out, expr[from:i])
			from = i + 1
		}
	}
	return append(out, expr[from:])
}

type anchorRef struct {
	anchor string
	rule   int // index into rules
	forms  []form
	// head is the anchor's first eight bytes as leUint64 reads them
	// (zeros past a shorter one's end), mask has the bits of those it has:
	// an anchor that does not start at i fails (word & mask) == head for
	// nearly all texts, without a call.
	head, mask uint64
}

// newAnchorRef makes the reference to anchor a of rules[rule].
func newAnchorRef(a string, rule int, forms []form) anchorRef {
	ref := anchorRef{anchor: a, rule: rule, forms: forms}
	for k := 0; k < min(8, len(a)); k++ {
		ref.head |= uint64(a[k]) << (8 * k)
		ref.mask |= 0xff << (8 * k)
	}
	return ref
}

// word8 is the eight bytes of s from i as leUint64 reads them, zeros past
// its end.
func word8(s string, i int) uint64 {
	if i+8 <= len(s) {
		return leUint64(s[i:])
	}
	var w uint64
	for k := 0; i+k < len(s); k++ {
		w |= uint64(s[i+k]) << (8 * k)
	}
	return w
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' }

func isWord(c byte) bool { return wordByte[c] }

// wordByte: letters, digits, '_' and the bytes of non-ASCII runes.
var wordByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c >= 0x80
	}
	return t
}()

// phrases runs the phrase rules over low, the folded text w.
func phrases(w, low string, fences []region) []Finding {
	fs, _, _ := phrasesMarking(w, low, fences, false)
	return fs
}

// phrasesMarking is phrases; with mark, it also returns hidden's markers
// at word starts and punctuation, found on the same walk, and where runs
// of single letters start (split.go).
//
// The walk visits the bytes where something may start: word starts (any
// anchor) and the punctuation in walkClass (markup anchors, markers). It
// finds them eight bytes at a time, from the class bits of each byte,
// without a branch per byte: in prose, a test per byte of whether it ends
// a word was mispredicted at most word ends.
func phrasesMarking(w, low string, fences []region, mark bool) (fs []Finding, marks []marker, splits []int) {
	p := phraseScan{w: w, low: low, fences: fences, single: -2 * splitGap}
	n := len(low)
	// prevWord is 0x80 when the byte before the chunk is a word byte.
	var prevWord uint64
	for base := 0; base+1 < n; base += 8 { // every anchor is two bytes or more
		c := low[base:min(n, base+8)]
		if len(c) < 8 { // the last bytes, padded with zeros (no class)
			var chunk [8]byte
			copy(chunk[:], c)
			c = string(chunk[:])
		}
		m := uint64(walkClass[c[0]]) | uint64(walkClass[c[1]])<<8 | uint64(walkClass[c[2]])<<16 |
			uint64(walkClass[c[3]])<<24 | uint64(walkClass[c[4]])<<32 | uint64(walkClass[c[5]])<<40 |
			uint64(walkClass[c[6]])<<48 | uint64(walkClass[c[7]])<<56
		words := m & 0x8080808080808080
		events := words&^(words<<8|prevWord) | (m&0x4040404040404040)<<1
		prevWord = words >> 56
		for ; events != 0; events &= events - 1 {
			i := base + bits.TrailingZeros64(events)>>3
			if i+1 >= n {
				break
			}
			if !wordByte[low[i]] {
				// punctuation: markup anchors start here, and any anchor
				// when no word precedes
				if anchorIndex.first[low[i]] && hasAnchor(low, i) {
					p.at(i, i == 0 || !wordByte[low[i-1]])
				}
				if mark && punctMark[low[i]] {
					marks = markPunct(marks, low, i)
				}
				continue
			}
			// a word starts at i: try it, and the byte after a JSON escape
			// (\n, \t, \r: a word starts after it); only markup anchors
			// start mid-word, and none with a letter
			if hasAnchor(low, i) {
				p.at(i, true)
			}
			if mark && wordMark[low[i]] {
				marks = markWord(marks, low, i)
			}
			if !wordByte[low[i+1]] && isLetter(low[i]) { // a single letter: runs of them are split words
				p.singleLetter(i)
			}
			if j := i + 1; i > 0 && low[i-1] == '\\' && (low[i] == 'n' || low[i] == 't' || low[i] == 'r') && j+1 < n &&
				wordByte[low[j]] && hasAnchor(low, j) {
				p.at(j, true)
			}
		}
	}
	return p.out, marks, p.splits
}

// walkClass has the bit 0x80 for a word byte and 0x40 for the punctuation
// the walk of phrasesMarking stops at: a markup anchor's first byte, or a
// marker's.
var walkClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case wordByte[c]:
			t[c] = 0x80
		case anchorIndex.first[c] || punctMark[c]:
			t[c] = 0x40
		}
	}
	return t
}()

// hasAnchor reports whether an anchor may start at low[i]: one starts
// with its two bytes, and it is one of the anchors shorter than four bytes
// or the first four bytes from i hash as one of the others' do.
func hasAnchor(low string, i int) bool {
	k := uint16(low[i])<<8 | uint16(low[i+1])
	if anchorIndex.keys[k>>6]&(1<<(k&63)) == 0 {
		return false
	}
	if anchorIndex.short[k>>6]&(1<<(k&63)) != 0 || i+4 > len(low) {
		return true
	}
	h := quadHash(low, i)
	return anchorIndex.quad[h>>6]&(1<<(h&63)) != 0
}

// quadHash hashes s[i:i+4] to 16 bits (Fibonacci hashing).
func quadHash(s string, i int) uint32 {
	_ = s[i+3]
	w := uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
	return w * 2654435769 >> 16
}

// phraseScan is the state of one phrases pass.
type phraseScan struct {
	w, low string
	fences []region
	out    []Finding
	last   [16]int // where each rule's last match ended: a rule's matches do not overlap
	// the last single letter followed by a separator, how many such came
	// before it each splitGap bytes after the one before, and where each
	// run of splitRun of them started
	single, streak int
	splits         []int
}

// singleLetter counts the single letter at i towards a run of them (a
// letter and a separator each; split.go). It is kept out of the walk's
// loop: one-letter words are few, and inlined it cost the loop registers
// (a scan of the page took 0.5% more instructions).
//
//go:noinline
func (p *phraseScan) singleLetter(i int) {
	if i == p.single+splitGap && splitSeparator[p.low[i-1]] {
		p.streak++
	} else {
		p.streak = 1
	}
	p.single = i
	if p.streak == splitRun {
		p.splits = append(p.splits, i-(splitRun-1)*splitGap)
	}
}

// at tries the anchors that start at low[i]; atWord: i starts a word.
func (p *phraseScan) at(i int, atWord bool) {
	low := p.low
	w := word8(low, i)
	for _, ref := range anchorIndex.buckets[anchorIndex.bucket[uint16(low[i])<<8|uint16(low[i+1])]] {
		if w&ref.mask != ref.head {
			continue
		}
		rule := &rules[ref.rule]
		if !atWord && !rule.markup || !strings.HasPrefix(low[i:], ref.anchor) || p.last[ref.rule] > i {
			continue
		}
		// an anchor ends a word, or a plural: "post" is not "postgres"
		if e := i + len(ref.anchor); e < len(low) && isLetter(ref.anchor[len(ref.anchor)-1]) && isLetter(low[e]) && low[e] != 's' {
			continue
		}
		end := min(len(low), i+span)
		var loc []int
		for k := range ref.forms {
			f := &ref.forms[k]
			if !f.mayMatch(low[i:end], len(ref.anchor)) {
				continue
			}
			if l := f.re.FindStringIndex(low[i:end]); l != nil && (loc == nil || l[1] > loc[1]) {
				loc = l
			}
		}
		if loc == nil {
			continue
		}
		f := Finding{Rule: rule.id, Confidence: rule.conf, Start: i, End: i + loc[1]}
		if rule.weak != nil && rule.weak.MatchString(low[f.End:end]) {
			f.Confidence = Low
		}
		if in(p.fences, f.Start) || mentioned(p.w, f.Start, f.End) {
			f.Confidence = Low
		}
		p.last[ref.rule] = f.End
		p.out = append(p.out, f)
	}
}

// judge runs the phrase rules over a piece of text that is no part of the
// scanned text's offsets (a decoded payload, a hidden region) and returns
// the highest confidence found, or cue's verdict.
func judge(s string) Confidence {
	low := fold(s)
	var c Confidence
	fs, _, splits := phrasesMarking(s, low, nil, false)
	if splits != nil { // the same speech with its letters split
		fs = append(fs, splitPhrases(s, splits, fs)...)
	}
	for _, f := range fs {
		c = max(c, f.Confidence)
	}
	c = max(c, cue(low))
	if d, ok := deleet(low); ok { // the same speech in leetspeak
		for _, f := range phrases(s, d, nil) {
			c = max(c, f.Confidence)
		}
		c = max(c, cue(d))
	}
	if hasNonASCII(s) { // the same speech in look-alike letters
		if lat, _, ok := latinize(s); ok {
			latLow := fold(lat)
			for _, f := range phrases(lat, latLow, nil) {
				c = max(c, f.Confidence)
			}
			c = max(c, cue(latLow))
		}
	}
	return c
}

// mentioned reports whether w[start:end] is quoted as a mention rather
// than used: inside backticks; or a quotation that holds little more than
// the match (the closing quote within three bytes of its end: a list of
// attack strings, a test table); or a short quotation in prose (the opening
// quote after a space or a line break that follows prose, the closing quote
// within 80 bytes, on the same line). A quoted value (after ":", "=", "[",
// "{", ",", a tab) that goes on is not a mention: a JSON answer's strings
// are quoted.
func mentioned(w string, start, end int) bool {
	j := start - 1
	if j >= 0 && w[j] == ' ' {
		j--
	}
	if j < 0 {
		return false
	}
	open := w[j]
	if open == '`' {
		return true
	}
	var closeq string
	prose := false
	switch {
	case open == '"' || open == '\'':
		closeq = string(open)
		k := j - 1
		for k >= 0 && (w[k] == ' ' || w[k] == '\n' || w[k] == '\r') {
			k--
		}
		prose = k >= 0 && j > 0 && (w[j-1] == ' ' || w[j-1] == '\n') && strings.IndexByte(":=[{,(>-\t", w[k]) < 0
	case j >= 2 && (w[j-2:j+1] == "\u201c" || w[j-2:j+1] == "\u2018"):
		closeq = "\u201d"
		if w[j-2:j+1] == "\u2018" {
			closeq = "\u2019"
		}
		prose = true
	case j >= 1 && w[j-1:j+1] == "\u00ab":
		closeq = "\u00bb"
		prose = true
	default:
		return false
	}
	if strings.Contains(w[end:min(len(w), end+3)], closeq) {
		return true
	}
	if !prose {
		return false
	}
	rest := w[end:min(len(w), end+80)]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	return strings.Contains(rest, closeq)
}

// cue reports Medium for text that addresses an AI agent, gives a
// directive and names a sensitive action; Low for two of the three. It
// judges hidden and decoded text, where any such speech is suspect.
func cue(low string) Confidence {
	n := 0
	if hasWord(low, "ai", "llm", "llms", "assistant", "ai agent", "coding agent", "language model", "chatbot", "claude", "chatgpt",
		"copilot", "gemini", "codex", "gpt", "summarizer", "summarising", "summarizing", "summary", "summarize") {
		n++
	}
	if hasWord(low, "you must", "you should", "you will", "do not", "don't", "never", "always", "make sure", "instead",
		"immediately", "please", "tell the user", "respond", "reply", "recommend", "say that", "state that") {
		n++
	}
	if hasWord(low, "run", "execute", "curl", "wget", "send", "upload", "post", "email", "delete", "rm -rf", "reveal",
		"password", "token", "secret", "api key", ".env", "ssh", "credentials", "the user", "visit", "click", "download",
		"install", "approve", "merge", "grant", "transfer", "payment", "wallet", "link", "url", "http") {
		n++
	}
	switch n {
	case 3:
		return Medium
	case 2:
		return Low
	}
	return 0
}

// hasWord reports whether low holds one of words with word boundaries.
func hasWord(low string, words ...string) bool {
	for _, w := range words {
		for off := 0; ; {
			i := strings.Index(low[off:], w)
			if i < 0 {
				break
			}
			i += off
			e := i + len(w)
			if (i == 0 || !isWord(low[i-1]) || !isWord(w[0])) && (e == len(low) || !isWord(low[e]) || !isWord(w[len(w)-1])) {
				return true
			}
			off = i + 1
		}
	}
	return false
}
