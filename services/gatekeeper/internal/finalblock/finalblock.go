// Package finalblock reads an agent's final message for the Stop gate: the
// fenced ```claimcheck JSON block that states what the turn achieved and
// cites the attestations backing it, the prose around that block, the
// completion, blockage and delegation claims that the prose and the block's
// prose members make in words (in some twenty languages) or in status
// notation, and findings the gate must see: words in mixed scripts, and
// results reported in a language no table reads.
//
// Parse is pure and total: it never panics, never fails, and runs in time
// linear in the message. A missing block is not an error (Message.Block is
// nil); a block that is present but malformed is reported in
// Message.BlockErr with a message that names the offending field, written
// for the agent to act on.
//
// What counts as prose. The phrase tripwire (seed 001: "runs only on the
// prose remainder after the fenced region is stripped") reads only the text a
// human would read as the agent's own words. The final block, every other
// fenced code block (```go, ~~~, …), every inline code span and every
// blockquote line (">") are left out, because quoting a tool's output ("PASS",
// "--- FAIL") or naming a test (TestDone, done_test.go) is not a claim. Inline
// code spans are replaced by the placeholder CodePlaceholder so that phrases
// such as "`go test ./...` passes" are still recognised as claims; a code span
// on its own never matches a phrase.
//
// Markdown is read the way CommonMark reads fenced code blocks (a fence is a
// run of at least three backticks or tildes; the closing fence uses the same
// character, is at least as long and carries no info string; a backtick fence
// whose info string holds a backtick is not a fence; an unclosed fence runs to
// the end of the message, so an unclosed final block is an error), with
// these deliberate simplifications, since the package does not build the
// container structure (lists, quotes) around a fence:
//   - fences, the final block's included, are recognised at any indentation,
//     because agents nest them in list items; indented (four-space) code
//     blocks are not recognised and read as prose;
//   - a closing fence may be indented up to three columns more than its
//     opening fence;
//   - a line whose first non-blank character is ">" is a quote; quotes end
//     at the first line without ">" (no lazy continuation), and fences inside
//     quotes are part of the quote, so a final block must not be quoted;
//   - code spans do not cross line ends.
//
// Claim phrases. Phrases are read in the prose and in the final block's
// prose members (summary, what_succeeded, what_remains,
// next_route_or_question; their inline code spans are masked the same
// way), and Message.Phrases lists them in that order, each with the Field
// it was found in and its Offset into that field's text.
//
// Normalisation. Before matching, a field is normalised: invisible format
// characters are removed (bidirectional controls, zero-width space, joiner
// and non-joiner, word joiner, BOM, soft hyphen, variation selectors, tag
// characters and the other default-ignorable code points: every Cf,
// Other_Default_Ignorable_Code_Point and Variation_Selector character but
// the visible prepended concatenation marks), then NFKC is applied
// (fullwidth and mathematical letters, ligatures). A word that mixes
// scripts, or is made only of characters whose UTS #39 confusable
// prototype is ASCII ("dоne" with a Cyrillic о, "ɑll" with a Latin alpha,
// Greek "ΟΚ"), and whose UTS #39 skeleton is the skeleton of a word of the
// tables, is read as that word; genuine words of other scripts are left
// alone (Russian "готово" is a table word itself, and "все" holds letters
// with no ASCII prototype). Matching runs on the normalised text; a map
// from its bytes back to the text as written gives Phrase.Text and Offset,
// so they quote the field as written, look-alikes and invisible characters
// included.
//
// Word tables. Most tables (English, German, French, Spanish, Portuguese,
// Italian, Dutch, Swedish, Polish, Czech, Russian, Ukrainian, Turkish,
// Vietnamese, Indonesian, Hindi, Arabic; rules*.go) are read word by
// word. A field is split into words (letters, digits, marks and the
// identifier characters of paths, flags and file names, so done_test.go,
// --fixed-strings and TestDone are single words that match nothing) and
// matched, case-insensitively and with ’ read as ' (and Arabic without
// vowel marks, ı as i), against every table at once, leftmost-longest. A
// match does not count when it is negated ("not done", "isn't fixed yet",
// "no tests pass", "almost done", "Es funktioniert nicht"), quoted as a
// mention (the "done" state), glued to code (done(), `x`_done), or
// excluded by its row (the fixed size, validation is done by the
// middleware); done and blocked phrases also do not count in questions
// ("Is it done?", "Tamamlandı mı?") or hypotheticals ("once it's done",
// "this will be fixed", "make sure all tests pass"). Requests stay requests
// when asked as questions or conditionally ("Could you send me the
// key?"). Negation and hypotheticals are looked for in the words before
// the phrase within its clause (across a comma before a complementizer:
// "Stellen Sie sicher, dass alle Tests grün sind"), and for some languages
// after it (nicht, pas, inte, değil); a line end ends a sentence. Hedged
// claims ("this should be fixed now") count. Where the same words are in
// several tables and one table's rules cancel them, they are no claim.
// Saying what was not run or verified is not a blockage: "I could not run
// the tests here; nothing is verified" yields no phrase.
//
// Substring tables. Japanese, Chinese (Simplified "zh-Hans", Traditional
// "zh-Hant", both "zh") and Korean (rules_ja.go, rules_zh.go, rules_ko.go)
// are written without spaces between words, or with particles glued to
// them, so they are matched rune by rune within a sentence, spaces
// skipped. Their rows end in a positive, finished form (完了しました,
// 通过了, 통과했습니다), what follows a phrase is checked for conditions,
// questions and "after" (たら, か, 吗, 后, 면, 여부), a bare noun (完了,
// 部署完成, 테스트 통과) counts only at the end of its clause, and a
// negator earlier in the clause (没有, 未, 미) cancels a done phrase.
//
// Scopes. A done phrase carries the Scope of what it asserts: ScopeWork
// for the work in general (done, fixed, works), or tests (all tests pass,
// 12/12 passed), build (it compiles), lint (vet is clean, no lint errors,
// formatted), deploy (deployed to production, is live), merge (merged into
// main, pushed), fetch (the endpoint returns 200), perf (40% faster),
// coverage (coverage is 85%), security (no vulnerabilities), deps (bumped
// x to v1.2.3), migration (migration applied) or change ("I updated
// `config.yaml`"). A phrase about an inline code span takes the scope of
// the command ("`go vet ./...` is clean" is lint).
//
// Status notation. Check marks (✅ ✔ ✓ ☑ 🟢) next to the name of a check
// ("✅ tests", "Build ✅"), "Build: ✅" and "Tests: 12/12" lines, and rows of
// Markdown tables and list items that pair a check with a pass ("| Unit
// tests | ✅ |", "| Lint | passing |", "- [x] migrations") are done
// phrases with Lang "und", scoped by the check they name (ScopeWork for a
// check mark or checked box beside anything else in a table or list).
// Crosses and red marks (❌ ✗ 🔴), FAIL, "3 failed" and counts of part
// (11/12) are no claim, and make a row that holds them none.
//
// Findings. A word that mixes scripts beyond UTS #39's highly restrictive
// combinations (Latin with Han and Kana, with Han and Bopomofo, or with
// Han and Hangul; Common and Inherited characters and digits aside) is a
// FindingMixedScript naming the scripts ("pаss": Latin+Cyrillic). A
// sentence written mostly in a script no table reads (Thai, Greek, Hebrew,
// Georgian, …) that carries results vocabulary any language shares (counts
// such as 12/12, percentages, status marks, and Latin loanwords such as
// test, build, deploy, CI, OK, PASS, FAIL) and in which no phrase was
// found is a FindingUnreadLanguage naming the script and the vocabulary.
// Text in an unread Latin-script language is not recognised as such.
package finalblock

import (
	"fmt"
	"strings"
)

// Block is the parsed final block.
type Block struct {
	Name                string // InfoString or LegacyInfoString: the info string used
	Type                string // one of TypeDone, TypePartial, TypeBlocked, TypeDelegation
	Summary             string
	Claims              []Claim
	WhatSucceeded       string
	WhatRemains         string
	NextRouteOrQuestion string
}

// Claim is one entry of the block's claims: a claim type and the id of the
// attestation that backs it. Other members of the JSON object are allowed and
// ignored.
type Claim struct {
	ClaimType     string
	AttestationID string
}

// Phrase is a claim the prose makes in words.
type Phrase struct {
	Kind string // KindDone, KindBlocked or KindDelegation
	// Scope says what a done phrase asserts (one of the Scope constants;
	// ScopeWork for the work in general); "" for the other kinds.
	Scope string
	Lang  string // the phrase table's language, a BCP 47 tag ("en", "de", …)
	// Field is where the phrase was found: FieldProse, or the name of a
	// prose member of the final block ("summary", "what_succeeded", …).
	Field  string
	Text   string // the words as written: the field's text[Offset:Offset+len(Text)]
	Offset int    // byte offset in the field's text (Message.Prose for FieldProse)
}

// Finding is something in the message that is not a phrase but that the
// gate must see: a word written in mixed scripts, or results vocabulary in a
// language no phrase table covers.
type Finding struct {
	Kind   string // FindingMixedScript or FindingUnreadLanguage
	Field  string // as Phrase.Field
	Text   string // the text found, as written
	Offset int    // as Phrase.Offset
	Detail string // for the reason: which scripts, which vocabulary
}

// Message is what Parse found.
type Message struct {
	Block    *Block // nil when there is no final block (or it failed to parse)
	BlockErr error  // non-nil when a final block is present but malformed (or several)
	Prose    string // the prose outside the final block and outside code/quotes
	// Phrases are the claims of the prose and of the block's prose members,
	// in the order FieldProse, summary, what_succeeded, what_remains,
	// next_route_or_question.
	Phrases  []Phrase
	Findings []Finding
}

// Values of Phrase.Field and Finding.Field.
const (
	FieldProse = "prose"
)

// Scopes of done phrases: what the claim asserts. The policy maps each to
// the validators whose attestations back it.
const (
	ScopeWork      = "work"      // the work in general: done, fixed, complete, works
	ScopeTests     = "tests"     // tests, specs, checks pass
	ScopeBuild     = "build"     // it builds, compiles
	ScopeChange    = "change"    // a file was changed
	ScopeDeploy    = "deploy"    // deployed, released, live, published
	ScopeMerge     = "merge"     // merged, pushed, landed
	ScopeFetch     = "fetch"     // fetched, reachable, the endpoint answers
	ScopeLint      = "lint"      // lint, static analysis, type check, formatting clean
	ScopePerf      = "perf"      // performance figures: faster, N% less time
	ScopeCoverage  = "coverage"  // coverage figures
	ScopeSecurity  = "security"  // security scan clean, no vulnerabilities
	ScopeDeps      = "deps"      // a dependency updated
	ScopeMigration = "migration" // a migration applied
)

// Kinds of Finding.
const (
	FindingMixedScript    = "mixed_script"
	FindingUnreadLanguage = "unread_language_results"
)

// Info strings that open a final block. The match is case-insensitive and
// looks at the first word of the info string only (```claimcheck json is a
// final block).
const (
	InfoString       = "claimcheck"
	LegacyInfoString = "brian_final" // the seed's name; still accepted
)

// Values of Block.Type.
const (
	TypeDone       = "done"
	TypePartial    = "partial"
	TypeBlocked    = "blocked"
	TypeDelegation = "delegation"
)

// Claim types a Claim may carry (the claim types of the policy).
const (
	ClaimDone       = "done"
	ClaimPartial    = "partial"
	ClaimBlocked    = "blocked"
	ClaimDelegation = "delegation"
)

// Kinds of Phrase.
const (
	KindDone       = "done"       // the work is finished, fixed, passing, working
	KindBlocked    = "blocked"    // the agent cannot go on by itself
	KindDelegation = "delegation" // the agent asks the human to do or provide something
)

// Limits on the final block.
const (
	MaxBlockBytes = 64 << 10 // bytes of JSON between the fences
	MaxClaims     = 32
)

// CodePlaceholder stands in Message.Prose for each inline code span.
const CodePlaceholder = "`…`"

// Parse reads a final message. It never panics; see the package comment for
// what counts as prose.
func Parse(msg string) Message {
	s := scan(msg)
	m := Message{Prose: s.prose}
	switch {
	case len(s.blocks) > 1:
		m.BlockErr = fmt.Errorf("%d %s blocks; give exactly one", len(s.blocks), s.blocks[0].name)
	case len(s.blocks) == 1:
		b := s.blocks[0]
		if !b.closed {
			m.BlockErr = fmt.Errorf("the %s block is not closed; end it with a line holding only %s", b.name,
				strings.Repeat(string(b.fence.char), b.fence.n))
			break
		}
		m.Block, m.BlockErr = parseBlock(b.name, b.content, b.size)
	}
	m.readField(FieldProse, m.Prose, s.codes, false)
	if b := m.Block; b != nil {
		m.readField(fieldSummary, b.Summary, nil, true)
		m.readField(fieldWhatSucceeded, b.WhatSucceeded, nil, true)
		m.readField(fieldWhatRemains, b.WhatRemains, nil, true)
		m.readField(fieldNextRouteOrQuestion, b.NextRouteOrQuestion, nil, true)
	}
	return m
}
