// Package shell is claimcheck's one model of a shell command line: how it
// parses (mvdan.cc/sh/v3, as Bash), what its words are once quotes,
// escapes, variables and substitutions are evaluated as far as they can
// be without running anything (Walker, Field), which program a simple
// command runs once wrappers such as sudo, env, timeout and xargs are
// peeled (Unwrap, Programs), what the programs it knows do with their
// arguments (Lookup, the catalogue), and what a one-line interpreter
// program hands to the operating system (ReadCode).
//
// It judges nothing: the PreToolUse gate decides what is allowed, the
// verifier what a command proves; both read commands through this package.
package shell

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Parse parses src as Bash.
func Parse(src string) (*syntax.File, error) {
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

// parsers reuses parsers: a new one allocates several KiB of buffers, most
// of the cost of parsing a short command line. A Parser may parse many
// inputs, one at a time.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Unquote returns a word as written with its quotes removed: the text a
// reader sees, not the value the shell computes (Walker does that).
// Expansions and substitutions stay as their source text, and static is
// false.
func Unquote(w *syntax.Word) (text string, static bool) {
	var b strings.Builder
	static = true
	var add func(parts []syntax.WordPart)
	add = func(parts []syntax.WordPart) {
		for _, p := range parts {
			switch x := p.(type) {
			case *syntax.Lit:
				b.WriteString(x.Value)
			case *syntax.SglQuoted:
				b.WriteString(x.Value)
			case *syntax.DblQuoted:
				add(x.Parts)
			default:
				static = false
				var sb strings.Builder
				_ = syntax.NewPrinter().Print(&sb, p)
				b.WriteString(sb.String())
			}
		}
	}
	add(w.Parts)
	return b.String(), static
}
