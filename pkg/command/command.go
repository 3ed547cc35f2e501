// Package command understands shell command lines as programs and their
// arguments, using a real shell parser (mvdan.cc/sh/v3) rather than regular
// expressions. It answers the question validators ask: did this command line
// run this program with these arguments? `echo npm test` does not run
// `npm test`; `cd web && CI=1 npm test -- --coverage` does. It reads lines
// through package shell, whose catalogue also decides which program a
// command runs behind wrappers (sudo -u root make) and runners (uv run
// pytest), as the PreToolUse gate does.
package command

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/claimcheck/claimcheck/pkg/shell"
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
	f, err := shell.Parse(line)
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
			lit, static := shell.Unquote(w)
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

// Programs returns the argv suffixes of c at which a program starts:
// argv itself, then the command of each wrapper (sudo, env, timeout, …)
// and the tool of each runner (python -m, npx, uv run, …), as
// shell.Programs reads them.
func (c Call) Programs() [][]string { return shell.Programs(c.Argv) }

// Program returns the innermost program c runs (after wrappers and
// runners) as its base name and its arguments; "" when there is none.
func (c Call) Program() (name string, argv []string) {
	progs := c.Programs()
	if argv = progs[len(progs)-1]; len(argv) == 0 {
		return "", nil
	}
	return baseName(argv[0]), argv
}

// baseName is the name a program is matched by: the last segment of its
// path, except that a program run by a ./ path is that file, not the
// program of that name on PATH (./go.sh is not go).
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
