package scrub

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// A requirement is a conjunction of clauses, each a set of lower-case
// ASCII strings: a text the expression matches in holds, for every
// clause, at least one of its strings (compared in lower case). An empty
// requirement holds for every text.
type requirement [][]string

// maxClause bounds a clause's alternatives; a wider one is dropped (it
// would filter little and cost a search per alternative).
const maxClause = 16

// required derives a requirement from a parsed expression. It is
// conservative: wherever it cannot be sure a node needs some text, it
// requires nothing of that node, so a text without the requirement can
// never hold a match.
func required(re *syntax.Regexp) requirement {
	if set, ok := exact(re); ok {
		return clauseOf(set)
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
		return nil
	case syntax.OpConcat:
		// Runs of children that match a few exact strings are joined into
		// the strings the run matches ("-" then "H" or "-header" is "-h"
		// or "--header"); every other child adds its own requirement.
		var out requirement
		var run []string
		flush := func() {
			out = append(out, clauseOf(run)...)
			run = nil
		}
		for _, sub := range re.Sub {
			set, ok := exact(sub)
			if !ok {
				flush()
				out = append(out, required(sub)...)
				continue
			}
			if run == nil {
				run = set
				continue
			}
			if joined := cross(run, set); joined != nil {
				run = joined
				continue
			}
			flush()
			run = set
		}
		flush()
		return out
	case syntax.OpAlternate:
		// Every alternative must require something; one clause of each
		// (its most selective) joined makes a clause for the whole.
		var clause []string
		for _, sub := range re.Sub {
			r := required(sub)
			if len(r) == 0 {
				return nil
			}
			clause = append(clause, best(r)...)
		}
		return clauseOf(clause)
	default: // star, quest, wide classes, any character
		return nil
	}
}

// exact returns the lower-cased strings re matches, when they are few
// and ASCII.
func exact(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true
	case syntax.OpLiteral:
		s := string(re.Rune)
		if !isASCII(s) {
			return nil, false
		}
		return []string{strings.ToLower(s)}, true
	case syntax.OpCharClass:
		var set []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi >= utf8.RuneSelf || hi-lo >= maxClause {
				return nil, false
			}
			for c := lo; c <= hi; c++ {
				set = append(set, strings.ToLower(string(c)))
			}
		}
		return normal(set)
	case syntax.OpCapture:
		return exact(re.Sub[0])
	case syntax.OpQuest:
		set, ok := exact(re.Sub[0])
		if !ok {
			return nil, false
		}
		return normal(append(set, ""))
	case syntax.OpAlternate:
		var set []string
		for _, sub := range re.Sub {
			s, ok := exact(sub)
			if !ok {
				return nil, false
			}
			set = append(set, s...)
		}
		return normal(set)
	case syntax.OpConcat:
		set := []string{""}
		for _, sub := range re.Sub {
			s, ok := exact(sub)
			if !ok {
				return nil, false
			}
			if set = cross(set, s); set == nil {
				return nil, false
			}
		}
		return set, true
	}
	return nil, false
}

// cross is every string of a followed by one of b, or nil when there
// would be more than maxClause.
func cross(a, b []string) []string {
	if len(a)*len(b) > maxClause {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	set, _ := normal(out)
	return set
}

// normal sorts and deduplicates a set; ok is false when it is too wide.
func normal(set []string) ([]string, bool) {
	slices.Sort(set)
	set = slices.Compact(set)
	return set, len(set) <= maxClause
}

// clauseOf is the requirement that one of set occurs: none when set is
// too wide or holds the empty string (which every text holds).
func clauseOf(set []string) requirement {
	set, ok := normal(set)
	if !ok || len(set) == 0 || slices.Contains(set, "") {
		return nil
	}
	return requirement{set}
}

// best is the clause of r whose shortest string is longest (the rarest,
// roughly).
func best(r requirement) []string {
	shortest := func(c []string) int {
		n := -1
		for _, s := range c {
			if n < 0 || len(s) < n {
				n = len(s)
			}
		}
		return n
	}
	return slices.MaxFunc(r, func(a, b []string) int { return shortest(a) - shortest(b) })
}

// holds reports whether lower (a lower-cased ASCII text) meets r.
func (r requirement) holds(lower string) bool {
	for _, clause := range r {
		if !slices.ContainsFunc(clause, func(s string) bool { return strings.Contains(lower, s) }) {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
