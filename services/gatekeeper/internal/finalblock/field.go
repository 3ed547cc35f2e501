package finalblock

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Prose members of the final block, in the order Message.Phrases lists
// them after the prose.
const (
	fieldSummary             = "summary"
	fieldWhatSucceeded       = "what_succeeded"
	fieldWhatRemains         = "what_remains"
	fieldNextRouteOrQuestion = "next_route_or_question"
)

// readField finds the phrases and findings of one field and appends them
// to m. The field is normalised (see normalize) and matched there; offsets
// are mapped back to the text as written. mask: replace inline code spans
// (the block's members; scan has done it for the prose).
func (m *Message) readField(field, text string, codes []string, mask bool) {
	if text == "" {
		return
	}
	n := normalize(text, mask)
	if mask {
		codes = n.codes
	}
	w := tokenize(n.text, codes)
	nFindings := len(m.Findings)
	stats := w.scripts(field, text, &n, &m.Findings)
	fs := w.findWords(nil)
	if w.cjk {
		fs = w.findCJK(fs)
	}
	fs = w.findStatus(withoutOverlaps(fs))
	fs = withoutOverlaps(fs)
	for _, f := range fs {
		if matchHook != nil && f.rule != nil {
			matchHook(f.rule)
		}
		s, e := n.span(f.start, f.end)
		m.Phrases = append(m.Phrases, Phrase{Kind: f.kind, Scope: f.scope, Lang: f.lang, Field: field, Text: text[s:e], Offset: s})
	}
	if stats != nil {
		w.unread(field, text, &n, stats, fs, &m.Findings)
		slices.SortStableFunc(m.Findings[nFindings:], func(a, b Finding) int { return a.Offset - b.Offset })
	}
}

// matchHook, when set (by tests), sees the rule of every phrase found.
var matchHook func(*compiled)

// missHook, when set (by tests), sees every rule whose words were found
// but whose context cancelled them (a negation, a question, a
// hypothetical, a word the rule excludes).
var missHook func(*compiled)

// withoutOverlaps sorts the phrases of the several matchers by position
// and drops any that overlaps an earlier one (on a tie, the longer wins).
func withoutOverlaps(fs []found) []found {
	slices.SortStableFunc(fs, func(a, b found) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	out := fs[:0]
	last := -1
	for _, f := range fs {
		if f.start >= last {
			out = append(out, f)
			last = f.end
		}
	}
	return out
}

// coveredScripts are the scripts some table reads.
var coveredScripts = sync.OnceValue(func() map[scriptID]bool {
	set := map[scriptID]bool{}
	for _, name := range []string{"Latin", "Cyrillic", "Han", "Hiragana", "Katakana", "Hangul", "Bopomofo", "Devanagari", "Arabic"} {
		set[scripts().ids[name]] = true
	}
	return set
})

// sentenceScripts counts the letters of a sentence by script.
type sentenceScripts struct {
	covered int              // letters of covered scripts (Latin included)
	other   map[scriptID]int // letters of scripts no table reads
}

// scripts looks at the letters of every word that is not ASCII: it
// reports words that mix scripts, reads words written in look-alike
// letters as the table word they imitate, and counts letters by script per
// sentence for unread. It returns nil when no sentence holds letters of a
// script no table reads.
func (w *words) scripts(field, orig string, n *normalized, findings *[]Finding) []sentenceScripts {
	stats := make([]sentenceScripts, len(w.question))
	unreadScript := false
	covered := coveredScripts()
	var set scriptSet
	for k := range w.toks {
		t := &w.toks[k]
		if !t.nonASCII {
			if t.word[0] != '<' {
				stats[t.sentence].covered += t.end - t.start
			}
			continue
		}
		s, e := n.span(t.start, t.end)
		word := orig[s:e]
		mixed := false
		// Runs of letters (and marks) are checked one by one, so that
		// "файл.go" (a Russian word and an extension) is not mixed.
		runStart := -1
		set.ids = set.ids[:0]
		flush := func(at int) {
			if runStart >= 0 && set.mixed() {
				mixed = true
				*findings = append(*findings, Finding{Kind: FindingMixedScript, Field: field, Text: word[runStart:at],
					Offset: s + runStart, Detail: set.String()})
			}
			runStart = -1
			set.ids = set.ids[:0]
		}
		for i, r := range word {
			if !unicode.IsLetter(r) && !unicode.IsMark(r) {
				flush(i)
				continue
			}
			if runStart < 0 {
				runStart = i
			}
			id := scriptOf(r)
			set.add(id)
			if id == 0 || !unicode.IsLetter(r) {
				continue
			}
			if covered[id] {
				stats[t.sentence].covered++
				continue
			}
			unreadScript = true
			if stats[t.sentence].other == nil {
				stats[t.sentence].other = map[scriptID]int{}
			}
			stats[t.sentence].other[id]++
		}
		flush(len(word))
		if tw, ok := resolveConfusable(t.word, mixed); ok {
			t.word = tw
		}
	}
	if !unreadScript {
		return nil
	}
	return stats
}

// resultWords are results vocabulary in Latin letters that reads the same
// in any language: loanwords and status words.
var resultWords = wordSet("test tests testing build builds built deploy deployed deployment ci ok pass passed passes passing " +
	"fail failed fails failing failure status merge merged lint green red done success successful error errors coverage " +
	"release released pr commit pushed")

// unread reports the sentences written mostly in a script no table reads
// that carry results vocabulary (counts such as 12/12, percentages, status
// marks, Latin loanwords such as test, build, PASS) and in which no phrase
// was found: the gate cannot read what they claim.
func (w *words) unread(field, orig string, n *normalized, stats []sentenceScripts, fs []found, findings *[]Finding) {
	for s, st := range stats {
		other, top := 0, scriptID(0)
		for id, c := range st.other {
			other += c
			if top == 0 || c > st.other[top] || c == st.other[top] && id < top {
				top = id
			}
		}
		if other < 2 || other <= st.covered {
			continue
		}
		first, last := w.sentStart[s], w.sentStart[s]
		for last < len(w.toks) && int(w.toks[last].sentence) == s {
			last++
		}
		start, end := w.toks[first].start, w.toks[last-1].end
		if slices.ContainsFunc(fs, func(f found) bool { return f.start < end && f.end > start }) {
			continue
		}
		var vocab []string
		for k := first; k < last; k++ {
			t := w.toks[k]
			switch {
			case t.class == clsAll || t.class == clsPart || t.class == clsPct || t.word == passWord || t.word == failWord,
				!t.nonASCII && resultWords[t.word]:
				v := w.text[t.start:t.end]
				if !slices.Contains(vocab, v) {
					vocab = append(vocab, v)
				}
			}
		}
		if len(vocab) == 0 {
			continue
		}
		os, oe := n.span(start, end)
		*findings = append(*findings, Finding{Kind: FindingUnreadLanguage, Field: field, Text: orig[os:oe], Offset: os,
			Detail: fmt.Sprintf("%s text with results vocabulary: %s", scriptName(top), strings.Join(vocab, ", "))})
	}
}

// lowerRune lowers a rune for the substring tables.
func lowerRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}
