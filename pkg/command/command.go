// Package command understands shell command lines as programs and their
// arguments, using a real shell parser (mvdan.cc/sh/v3) rather than regular
// expressions. It answers the question validators ask: did this command line
// run this program with these arguments? `echo npm test` does not run
// `npm test`; `cd web && CI=1 npm test -- --coverage` does.
package command

import (
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Call is one simple command: its words after quote removal. Words that are
// not static (parameter or command substitutions) are kept as their source
// text with Dynamic set.
type Call struct {
	Argv    []string
	Dynamic bool
}

// Parse returns the simple commands in line, in order, including those in
// pipelines, lists (&&, ||, ;), subshells, blocks and command substitutions.
// Leading variable assignments are dropped. A line that does not parse is
// split on white space as a fallback, so matching still works conservatively.
func Parse(line string) []Call {
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(line), "")
	parsers.Put(p)
	if err != nil {
		return []Call{{Argv: strings.Fields(line)}}
	}
	var calls []Call
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 {
			return true
		}
		var c Call
		for _, w := range ce.Args {
			lit, static := wordString(w)
			c.Argv = append(c.Argv, lit)
			if !static {
				c.Dynamic = true
			}
		}
		calls = append(calls, c)
		return true
	})
	return calls
}

// parsers reuses shell parsers: a new one allocates several KiB of buffers,
// most of the cost of parsing a short command line. A Parser may parse many
// inputs, one at a time.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// wordString returns the word with quotes removed when it is static.
func wordString(w *syntax.Word) (string, bool) {
	var b strings.Builder
	static := true
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

// wrappers are programs that run their arguments as a command: a match may
// start after them (and after their options).
var wrappers = map[string]bool{
	"command": true, "env": true, "exec": true, "nice": true, "nohup": true, "sudo": true,
	"time": true, "timeout": true, "xargs": true, "stdbuf": true, "ionice": true,
}

// runners run a named tool: `python -m pytest`, `npx jest`, `uv run pytest`,
// `poetry run pytest`, `bundle exec rspec`, `pnpm exec vitest`.
var runners = [][]string{
	{"python", "-m"}, {"python3", "-m"}, {"npx"}, {"pnpx"}, {"bunx"}, {"uv", "run"}, {"poetry", "run"},
	{"pipenv", "run"}, {"bundle", "exec"}, {"pnpm", "exec"}, {"yarn", "exec"}, {"npm", "exec"}, {"hatch", "run"},
}

// Programs returns the argv suffixes of c at which a program starts: argv
// itself, and after any wrapper (with its options) or runner prefix.
func (c Call) Programs() [][]string {
	var out [][]string
	argv := c.Argv
	for len(argv) > 0 {
		out = append(out, argv)
		head := baseName(argv[0])
		switch {
		case wrappers[head]:
			argv = argv[1:]
			// Skip the wrapper's options and, for env, assignments; for
			// timeout, its duration.
			for len(argv) > 0 && (strings.HasPrefix(argv[0], "-") || strings.Contains(argv[0], "=") && head == "env" || head == "timeout" && isDuration(argv[0])) {
				argv = argv[1:]
			}
		default:
			skipped := false
			for _, r := range runners {
				if len(argv) > len(r) && baseName(argv[0]) == r[0] && slices.Equal(argv[1:len(r)], r[1:]) {
					argv = argv[len(r):]
					skipped = true
					break
				}
			}
			if !skipped {
				return out
			}
		}
	}
	return out
}

// Program returns the innermost program c runs (after wrappers and
// runners) as its base name and its arguments; "" when there is none.
func (c Call) Program() (name string, argv []string) {
	progs := c.Programs()
	if argv = progs[len(progs)-1]; len(argv) == 0 {
		return "", nil
	}
	return baseName(argv[0]), argv
}

func isDuration(s string) bool {
	s = strings.TrimRight(s, "smhd")
	return s != "" && strings.Trim(s, "0123456789.") == ""
}

func baseName(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 && !strings.HasPrefix(p, "./") {
		return p[i+1:]
	}
	return p
}

// Runs reports whether line runs want (itself a command line, e.g.
// "go test ./..."): some program in line starts with want's words. Words
// compare exactly; the program name also matches by base name
// (/usr/bin/go ~ go).
func Runs(line, want string) bool {
	w, ok := Want(want)
	return ok && RunsParsed(Parse(line), w)
}

// Want parses the command a validator looks for: ok only when it is one
// simple command with at least a program name.
func Want(want string) (argv []string, ok bool) {
	w := Parse(want)
	if len(w) != 1 || len(w[0].Argv) == 0 {
		return nil, false
	}
	return w[0].Argv, true
}

// RunsParsed is Runs over a line already parsed (Parse) and a want from
// Want: for callers that test many lines against one want, or one line many
// times.
func RunsParsed(calls []Call, want []string) bool {
	if len(want) == 0 {
		return false
	}
	for _, c := range calls {
		for _, prog := range c.Programs() {
			if hasPrefix(prog, want) {
				return true
			}
		}
	}
	return false
}

func hasPrefix(argv, want []string) bool {
	if len(argv) < len(want) {
		return false
	}
	if argv[0] != want[0] && baseName(argv[0]) != baseName(want[0]) {
		return false
	}
	return slices.Equal(argv[1:len(want)], want[1:])
}

// Mentions reports whether some argument of some command in line equals
// token or ends with "/"+token (a path given relative to another directory).
func Mentions(line, token string) bool { return MentionsParsed(Parse(line), token) }

// MentionsParsed is Mentions over a line already parsed (Parse).
func MentionsParsed(calls []Call, token string) bool {
	token = strings.TrimPrefix(token, "./")
	if token == "" {
		return false
	}
	for _, c := range calls {
		for _, a := range c.Argv[min(1, len(c.Argv)):] {
			a = strings.TrimPrefix(a, "./")
			if a == token || strings.HasSuffix(a, "/"+token) || strings.HasSuffix(token, "/"+a) && strings.Contains(a, "/") {
				return true
			}
		}
	}
	return false
}

// Program returns the name of the first program line runs (after wrappers
// and runners), or "".
func Program(line string) string {
	for _, c := range Parse(line) {
		if name, _ := c.Program(); name != "" {
			return name
		}
	}
	return ""
}
