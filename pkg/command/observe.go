package command

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// Observation says what a tool call's record shows of a program the line
// ran: whether its output reached the record whole (Output), and whether
// the line's exit status is its own (Status). `go test ./... | tail -3`
// runs go test, but a failing package's lines may be cut (output not
// seen); `npm test || true` and `make test; echo done` exit 0 whatever
// the tests did (status not seen). Why names the first reason each is
// false.
type Observation struct {
	Ran       bool
	Output    bool
	Status    bool
	OutputWhy string
	StatusWhy string
}

// Observe reports how line ran want (from Want), taking the best of its
// runs: a run whose output is seen and one whose status is seen may be
// different runs. A line that does not parse ran nothing observable.
func Observe(line string, want []string) Observation {
	var o Observation
	if len(want) == 0 {
		return o
	}
	f, err := shell.Parse(line)
	if err != nil {
		if RunsParsed(Parse(line), want) {
			o.Ran = true
			o.OutputWhy, o.StatusWhy = "the command line does not parse as shell", "the command line does not parse as shell"
		}
		return o
	}
	w := &observer{want: want, out: &o}
	w.stmts(f.Stmts, seen{})
	return o
}

// seen is what the context of a command hides: its output (why) and its
// exit status (why).
type seen struct {
	outputHidden, statusHidden string
}

type observer struct {
	want     []string
	pipefail bool
	out      *Observation
}

func (w *observer) stmts(list []*syntax.Stmt, c seen) {
	for i, st := range list {
		sc := c
		if i < len(list)-1 && sc.statusHidden == "" {
			sc.statusHidden = "a later command in the line decides its exit status"
		}
		w.stmt(st, sc)
	}
}

func (w *observer) stmt(st *syntax.Stmt, c seen) {
	if st == nil {
		return
	}
	switch {
	case c.statusHidden != "":
	case st.Negated:
		c.statusHidden = "it ran negated (!)"
	case st.Background || st.Coprocess:
		c.statusHidden = "it ran in the background"
	}
	for _, r := range st.Redirs {
		if c.outputHidden == "" && redirectsStdout(r) {
			c.outputHidden = "its output was redirected (" + r.Op.String() + ")"
		}
	}
	w.command(st.Cmd, c)
}

// redirectsStdout: > file, >> file, &> file, >| file (not >&2, which keeps
// the output in the record as stderr).
func redirectsStdout(r *syntax.Redirect) bool {
	fd := "1"
	if r.N != nil {
		fd = r.N.Value
	}
	switch r.Op {
	case syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
		return true
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob:
		return fd == "1"
	case syntax.DplOut:
		// 1>&- closes it; 1>&2 keeps it in the record.
		return fd == "1" && r.Word != nil && r.Word.Lit() == "-"
	}
	return false
}

func (w *observer) command(cmd syntax.Command, c seen) {
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		w.call(x, c)
	case *syntax.BinaryCmd:
		switch x.Op {
		case syntax.Pipe, syntax.PipeAll:
			left := c
			if left.outputHidden == "" && !passThrough(x.Y) {
				left.outputHidden = "its output went through `" + stageName(x.Y) + "`"
			}
			if left.statusHidden == "" && !w.pipefail {
				left.statusHidden = "it was not the last command of a pipeline (and pipefail was not set)"
			}
			w.stmt(x.X, left)
			w.stmt(x.Y, c)
		case syntax.AndStmt:
			w.stmt(x.X, c)
			w.stmt(x.Y, c)
		default: // ||
			m := c
			if m.statusHidden == "" {
				m.statusHidden = "`||` ignores its failure"
			}
			w.stmt(x.X, m)
			w.stmt(x.Y, m)
		}
	case *syntax.Subshell:
		w.stmts(x.Stmts, c)
	case *syntax.Block:
		w.stmts(x.Stmts, c)
	case *syntax.TimeClause:
		w.stmt(x.Stmt, c)
	case nil:
	default:
		// if, while, for, case, functions, [[ ]], declarations: calls
		// inside ran (or not) in ways the exit status does not tell.
		m := c
		if m.statusHidden == "" {
			m.statusHidden = "it ran inside a compound command (if, while, for, case, a function)"
		}
		syntax.Walk(cmd, func(n syntax.Node) bool {
			if ce, ok := n.(*syntax.CallExpr); ok {
				w.record(ce, m)
			}
			return true
		})
	}
}

func (w *observer) call(ce *syntax.CallExpr, c seen) {
	// Command substitutions in the words: their output is captured.
	sub := seen{outputHidden: "it ran inside $(…), its output captured", statusHidden: "it ran inside $(…)"}
	for _, word := range ce.Args {
		for _, part := range word.Parts {
			syntax.Walk(part, func(n syntax.Node) bool {
				if cs, ok := n.(*syntax.CmdSubst); ok {
					w.stmts(cs.Stmts, sub)
					return false
				}
				return true
			})
		}
	}
	w.record(ce, c)
	// set -o pipefail (also -eo pipefail, -euo pipefail) for later pipes.
	if argv := staticArgv(ce); len(argv) >= 3 && argv[0] == "set" {
		for i := 1; i+1 < len(argv); i++ {
			if strings.HasPrefix(argv[i], "-") && strings.HasSuffix(argv[i], "o") && argv[i+1] == "pipefail" {
				w.pipefail = true
			}
		}
	}
}

func (w *observer) record(ce *syntax.CallExpr, c seen) {
	argv := staticArgv(ce)
	if len(argv) == 0 || !RunsParsed([]Call{{Argv: argv}}, w.want) {
		return
	}
	o := w.out
	if !o.Ran {
		o.OutputWhy, o.StatusWhy = c.outputHidden, c.statusHidden
	}
	o.Ran = true
	if c.outputHidden == "" {
		o.Output, o.OutputWhy = true, ""
	}
	if c.statusHidden == "" {
		o.Status, o.StatusWhy = true, ""
	}
}

func staticArgv(ce *syntax.CallExpr) []string {
	var argv []string
	for _, word := range ce.Args {
		s, _ := shell.Unquote(word)
		argv = append(argv, s)
	}
	return argv
}

// passThrough: the rest of a pipeline keeps everything it is given (tee,
// cat with no options).
func passThrough(st *syntax.Stmt) bool {
	if st == nil || len(st.Redirs) > 0 {
		return false
	}
	switch x := st.Cmd.(type) {
	case *syntax.CallExpr:
		argv := staticArgv(x)
		if len(argv) == 0 {
			return false
		}
		switch baseName(argv[0]) {
		case "tee":
			return !slices.ContainsFunc(argv[1:], func(a string) bool { return a == "-p" || strings.HasPrefix(a, "--output-error") })
		case "cat":
			return len(argv) == 1
		}
		return false
	case *syntax.BinaryCmd:
		return (x.Op == syntax.Pipe || x.Op == syntax.PipeAll) && passThrough(x.X) && passThrough(x.Y)
	}
	return false
}

// stageName names the first command of a pipeline stage.
func stageName(st *syntax.Stmt) string {
	for st != nil {
		switch x := st.Cmd.(type) {
		case *syntax.CallExpr:
			if argv := staticArgv(x); len(argv) > 0 {
				return strings.Join(argv[:min(len(argv), 3)], " ")
			}
			return "a command"
		case *syntax.BinaryCmd:
			st = x.X
			continue
		}
		break
	}
	return "another command"
}
