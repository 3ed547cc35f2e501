package shell

import "slices"

// Wrapped is what a wrapper does with its arguments: at most one of run a
// command, run a script, edit files.
type Wrapped struct {
	Command []Field // the command it runs; empty when none
	Chdir   *Field  // the directory Command runs in (env -C), when given
	Items   bool    // it runs Command (echo when empty) once for each item of its input (xargs)
	Script  *Field  // a shell script it runs instead (su -c 'cmd', watch 'cmd')
	Via     string  // how Script is given, for messages: "su -c", "env -S", "watch"
	Edits   []Field // files it edits (sudo -e, sudoedit)
	Opts    Opts    // its options
}

// Unwrap reads the arguments of the wrapper argv runs (p.Wrap is set).
func (p *Program) Unwrap(argv []Field) Wrapped {
	w, base := p.Wrap, BaseName(argv[0].S)
	o := ParseArgs(argv[1:], p.Spec)
	out := Wrapped{Opts: o, Items: w.Then == RunsItems}
	rest := o.Operands
	if w.Assigns {
		rest = SkipAssignments(rest)
	}
	switch {
	case o.Has(w.Edit...) || w.Then == EditsFiles:
		out.Edits = o.Operands
		return out
	}
	if s, ok := o.Value(w.Split...); ok {
		out.Script = &Field{S: s.S + " " + JoinQuoted(rest), Dyn: s.Dyn, Download: s.Download, Decoded: s.Decoded}
		out.Via = base + " " + w.Split[0]
		return out
	}
	if s, ok := o.Value(w.Script...); ok {
		out.Script, out.Via = &s, base+" "+w.Script[0]
		return out
	}
	if o.Has(w.Inert...) || len(rest) <= w.Operands {
		return out
	}
	rest = rest[w.Operands:]
	if w.ScriptAfter && slices.Contains(w.Script, rest[0].S) {
		if len(rest) > 1 {
			out.Script, out.Via = &rest[1], base+" "+w.Script[0]
		}
		return out
	}
	switch {
	case w.Then == RunsNothing:
	case w.Then == RunsScript && !o.Has(w.RunWith...):
		s := JoinFields(rest)
		out.Script, out.Via = &s, base
	default:
		out.Command = rest
		if d, ok := o.Value(w.Chdir...); ok {
			out.Chdir = &d
		}
	}
	return out
}

// Unwrap reads argv's wrapper, if its program is one.
func Unwrap(argv []Field) (Wrapped, bool) {
	if len(argv) == 0 {
		return Wrapped{}, false
	}
	p, _ := Lookup(BaseName(argv[0].S))
	if p.Wrap == nil {
		return Wrapped{}, false
	}
	return p.Unwrap(argv), true
}

// Programs returns the suffixes of argv, a simple command's words, at
// which a program starts: argv itself, then the command each wrapper runs
// (sudo -u root env X=1 make → env X=1 make → make) and the tool each
// runner runs (python -m pytest → pytest, uv run pytest → pytest). A
// wrapper that runs no command, or only a shell script (su -c, watch
// 'cmd'), ends the list.
func Programs(argv []string) [][]string {
	var out [][]string
	for len(argv) > 0 {
		out = append(out, argv)
		p, _ := Lookup(BaseName(argv[0]))
		switch {
		case p.Wrap != nil:
			w := p.Unwrap(fields(argv))
			argv = argv[:0:0]
			for _, f := range w.Command {
				argv = append(argv, f.S)
			}
		case p.RunsTool && p.Tool == "" && len(argv) > 1:
			argv = argv[1:]
		case p.RunsTool && p.Tool != "" && len(argv) > 2 && argv[1] == p.Tool:
			argv = argv[2:]
		default:
			return out
		}
	}
	return out
}

// fields are words known as they are.
func fields(argv []string) []Field {
	out := make([]Field, len(argv))
	for i, s := range argv {
		out[i] = Field{S: s}
	}
	return out
}
