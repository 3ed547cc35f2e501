package pretool

import (
	"maps"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxSteps bounds the work of one command's analysis (words evaluated,
// commands classified); beyond it the command is "too complex".
const maxSteps = 50000

// analysis is the state of one shell command's classification.
type analysis struct {
	p         *Policy
	ctx       *context
	v         *verdict
	steps     int
	exhausted bool
}

// stream describes what flows out of a command (into a pipe or a command
// substitution) or into it.
type Stream struct {
	Download bool     // bytes fetched from the network
	Decoded  bool     // bytes decoded from base64, hex, …
	Static   *string  // the exact bytes, when known
	Items    []string // the items a command lists (find's start points), for xargs
}

func StaticStream(s string) Stream { return Stream{Static: &s} }

// silent is the output of a command that prints nothing (cd, x=1).
func Silent() Stream { return StaticStream("") }

// taint is what passes through a filter: the origin, not the bytes.
func (s Stream) Taint() Stream { return Stream{Download: s.Download, Decoded: s.Decoded} }

// then is s followed by t (a list of commands writing to one output).
func (s Stream) Then(t Stream) Stream {
	out := Stream{Download: s.Download || t.Download, Decoded: s.Decoded || t.Decoded}
	if s.Static != nil && t.Static != nil {
		joined := *s.Static + *t.Static
		out.Static = &joined
	}
	return out
}

// state is what the analysis knows of the shell at one point.
type State struct {
	Cwd       string           // absolute, or "" when unknown
	Vars      map[string]Field // assigned variables (a dynamic value keeps its taint)
	Args      []Field          // positional parameters, when argsKnown
	ArgsKnown bool
	Aliases   map[string]string // defined aliases; unknownMaybeEmpty when the value is dynamic
	Funcs     map[string]Stream // defined functions and what they output
	Downloads map[string]bool   // files written with downloaded content
	Scripts   map[string]string // files written with static content (echo … > x.sh)
	ifsDirty  bool              // IFS was assigned: field splitting is unknown
	Stdin     Stream
}

func (s *State) Clone() *State {
	c := *s
	c.Vars = maps.Clone(s.Vars)
	c.Aliases = maps.Clone(s.Aliases)
	c.Funcs = maps.Clone(s.Funcs)
	c.Downloads = maps.Clone(s.Downloads)
	c.Scripts = maps.Clone(s.Scripts)
	c.Args = append([]Field(nil), s.Args...)
	return &c
}

// checkCommand classifies a Bash (or PowerShell) command line.
func (p *Policy) checkCommand(v *verdict, ctx *context, cmd string) {
	if len(cmd) > p.Limits.MaxCommandBytes {
		v.say(Deny, msgShellTooLong, detail{size: len(cmd), limit: p.Limits.MaxCommandBytes})
		return
	}
	if strings.ContainsAny(cmd, "\x00\x01\x02") {
		v.say(Deny, msgControlBytes, detail{})
		return
	}
	a := &analysis{p: p, ctx: ctx, v: v}
	st := &State{
		Cwd: ctx.cwd, Vars: map[string]Field{}, ArgsKnown: true,
		Aliases: map[string]string{}, Funcs: map[string]Stream{}, Downloads: map[string]bool{}, Scripts: map[string]string{},
	}
	a.script(cmd, st, 0)
}

// stop reports whether the analysis can end: the call is denied already,
// or the step budget is spent.
func (a *analysis) stop() bool {
	if a.steps > maxSteps && !a.exhausted {
		a.tooComplex(msgTooManySteps)
	}
	return a.v.denied() || a.exhausted
}

func (a *analysis) tooComplex(m msg) {
	a.exhausted = true
	a.say(a.p.Actions.Unparsable, m, detail{})
}

func (a *analysis) say(act string, m msg, d detail) { a.v.say(action(act), m, d) }

// script parses and analyses shell source: the command itself, or a
// nested script (bash -c, eval, sh <<EOF, an alias) one level deeper.
func (a *analysis) script(src string, st *State, depth int) {
	if a.stop() {
		return
	}
	if depth > a.p.Limits.MaxShellDepth {
		a.say(a.p.Actions.Unparsable, msgTooDeep, detail{limit: a.p.Limits.MaxShellDepth})
		return
	}
	a.steps += 1 + len(src)/64
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		m := msgUnparsable
		if depth > 0 {
			m = msgNestedUnparsable
		}
		a.say(a.p.Actions.Unparsable, m, detail{err: err.Error()})
		return
	}
	a.stmts(f.Stmts, st, depth)
}

// subshell analyses $(…) or <(…) and returns what it outputs.
func (a *analysis) subshell(stmts []*syntax.Stmt, st *State, depth int) Stream {
	sub := st.Clone()
	sub.Stdin = Stream{}
	return a.stmts(stmts, sub, depth)
}

// substitutions analyses the command and process substitutions inside a
// node the analysis does not otherwise interpret (arithmetic, [[ ]], …).
func (a *analysis) substitutions(n syntax.Node, st *State, depth int) {
	syntax.Walk(n, func(n syntax.Node) bool {
		if a.stop() {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			a.subshell(x.Stmts, st, depth)
			return false
		case *syntax.ProcSubst:
			a.subshell(x.Stmts, st, depth)
			return false
		}
		return true
	})
}

func (a *analysis) stmts(list []*syntax.Stmt, st *State, depth int) Stream {
	var out Stream
	for i, s := range list {
		if a.stop() {
			break
		}
		o := a.stmt(s, st, depth)
		if i == 0 {
			out = o
		} else {
			out = out.Then(o)
		}
	}
	return out
}

func (a *analysis) stmt(s *syntax.Stmt, st *State, depth int) Stream {
	a.steps++
	in := st.Stdin
	var outFiles []Path
	for _, r := range s.Redirs {
		if a.stop() {
			return Stream{}
		}
		a.redirect(r, st, depth, &in, &outFiles)
	}
	saved := st.Stdin
	st.Stdin = in
	out := a.command(s.Cmd, st, depth)
	st.Stdin = saved
	if s.Cmd == nil {
		out = in // $(< file)
	}
	if len(outFiles) > 0 {
		for _, f := range outFiles {
			a.wrote(st, f.Key(), out)
		}
		out = Stream{}
	}
	return out
}

// wrote records what a command wrote to a file, for a later command that
// runs the file (curl … > x.sh; sh x.sh).
func (a *analysis) wrote(st *State, key string, out Stream) {
	delete(st.Scripts, key)
	if out.Download || out.Decoded {
		st.Downloads[key] = true
		return
	}
	delete(st.Downloads, key)
	if out.Static != nil && len(*out.Static) <= 64<<10 {
		st.Scripts[key] = *out.Static
	}
}

func isStdout(r *syntax.Redirect) bool { return r.N == nil || r.N.Value == "1" }

// redirect applies one redirection: writes and reads are checked, stdin
// and stdout are noted.
func (a *analysis) redirect(r *syntax.Redirect, st *State, depth int, in *Stream, outFiles *[]Path) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		body := a.one(r.Hdoc, st, depth, true)
		*in = a.fieldStream(body, "")
		return
	case syntax.WordHdoc:
		body := a.one(r.Word, st, depth, false)
		*in = a.fieldStream(body, "\n")
		return
	}
	t := a.one(r.Word, st, depth, false)
	f := a.ctx.resolve(t.S, st.Cwd)
	f.Glob = t.Glob
	if f.Abs && len(f.Segs) >= 3 && f.Segs[0] == "dev" && (f.Segs[1] == "tcp" || f.Segs[1] == "udp") {
		host := f.Segs[2]
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		a.p.checkShellURL(a.v, "a /dev/"+f.Segs[1]+" redirection", "http://"+host+"/")
	}
	switch r.Op {
	case syntax.RdrIn:
		a.p.checkRead(a.v, a.ctx, f, readOpts{what: "an input redirection (<)"})
		if r.N == nil || r.N.Value == "0" {
			*in = a.fileStream(f, st)
		}
	case syntax.DplIn:
	case syntax.DplOut:
		if t.S == "-" || strings.Trim(t.S, "0123456789") == "" {
			return
		}
		a.writeTarget(">&", t, st, false)
		*outFiles = append(*outFiles, f)
	case syntax.RdrInOut:
		a.writeTarget("<>", t, st, false)
	default: // >, >>, >|, &>, &>>
		a.writeTarget(r.Op.String(), t, st, false)
		if isStdout(r) || r.Op == syntax.RdrAll || r.Op == syntax.AppAll || r.Op == syntax.RdrAllClob || r.Op == syntax.AppAllClob {
			*outFiles = append(*outFiles, f)
		}
	}
}

// fileStream is what reading a file yields: downloaded or known static
// content; bash's /dev/tcp and /dev/udp are the network.
func (a *analysis) fileStream(f Path, st *State) Stream {
	k := f.Key()
	if st.Downloads[k] || strings.HasPrefix(k, "/dev/tcp/") || strings.HasPrefix(k, "/dev/udp/") {
		return Stream{Download: true}
	}
	if s, ok := st.Scripts[k]; ok {
		return StaticStream(s)
	}
	return Stream{}
}

// fieldStream turns an evaluated here-document or here-string into the
// stream a command reads.
func (a *analysis) fieldStream(f Field, suffix string) Stream {
	s := Stream{Download: f.Download, Decoded: f.Decoded}
	if !f.Dyn {
		text := f.S + suffix
		s.Static = &text
	}
	return s
}

func (a *analysis) command(cmd syntax.Command, st *State, depth int) Stream {
	if a.stop() {
		return Stream{}
	}
	switch c := cmd.(type) {
	case nil:
		return Stream{}
	case *syntax.CallExpr:
		return a.call(c, st, depth)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			return a.pipeline(c, st, depth)
		}
		return a.stmt(c.X, st, depth).Then(a.stmt(c.Y, st, depth))
	case *syntax.Subshell:
		return a.stmts(c.Stmts, st.Clone(), depth)
	case *syntax.Block:
		return a.stmts(c.Stmts, st, depth)
	case *syntax.IfClause:
		var out Stream
		for cl := c; cl != nil && !a.stop(); cl = cl.Else {
			out = out.Then(a.stmts(cl.Cond, st, depth)).Then(a.stmts(cl.Then, st, depth))
		}
		return out.Taint()
	case *syntax.WhileClause:
		return a.stmts(c.Cond, st, depth).Then(a.stmts(c.Do, st, depth)).Taint()
	case *syntax.ForClause:
		return a.forLoop(c, st, depth)
	case *syntax.CaseClause:
		a.one(c.Word, st, depth, false)
		var out Stream
		for _, item := range c.Items {
			for _, w := range item.Patterns {
				a.one(w, st, depth, false)
			}
			out = out.Then(a.stmts(item.Stmts, st, depth))
		}
		return out.Taint()
	case *syntax.FuncDecl:
		a.funcDecl(c, st, depth)
		return Silent()
	case *syntax.DeclClause:
		a.decl(c, st, depth)
		return Silent()
	case *syntax.TimeClause:
		if c.Stmt != nil {
			return a.stmt(c.Stmt, st, depth)
		}
	case *syntax.CoprocClause:
		if c.Stmt != nil {
			a.stmt(c.Stmt, st.Clone(), depth)
		}
	default: // (( )), let, [[ ]], test declarations
		a.substitutions(cmd, st, depth)
	}
	return Stream{}
}

// pipeline analyses each stage with the previous stage's output as its
// input.
func (a *analysis) pipeline(c *syntax.BinaryCmd, st *State, depth int) Stream {
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 && !s.Negated && !s.Background {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		stages = append(stages, s)
	}
	flatten(c.X)
	flatten(c.Y)
	in := st.Stdin
	var out Stream
	for _, s := range stages {
		if a.stop() {
			break
		}
		sub := st.Clone()
		sub.Stdin = in
		out = a.stmt(s, sub, depth)
		for k := range sub.Downloads {
			st.Downloads[k] = true
		}
		in = out
	}
	return out
}

func (a *analysis) forLoop(c *syntax.ForClause, st *State, depth int) Stream {
	wi, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		a.substitutions(c.Loop, st, depth)
		return a.stmts(c.Do, st, depth).Taint()
	}
	var items []Field
	if wi.InPos.IsValid() {
		items = a.args(wi.Items, st, depth)
	} else if st.ArgsKnown {
		items = append(items, st.Args...)
	}
	name := wi.Name.Value
	// Once with the variable unknown, then with each of the first static
	// items (for d in / /etc; do rm -rf "$d"; done).
	delete(st.Vars, name)
	out := a.stmts(c.Do, st, depth)
	for i, it := range items {
		if i == 4 || a.stop() {
			break
		}
		if it.Dyn {
			continue
		}
		st.Vars[name] = it
		out = out.Then(a.stmts(c.Do, st, depth))
	}
	delete(st.Vars, name)
	return out.Taint()
}

// funcDecl records a function, looks for a fork bomb and analyses the body
// as if it were called.
func (a *analysis) funcDecl(c *syntax.FuncDecl, st *State, depth int) {
	var names []string
	if c.Name != nil {
		names = append(names, c.Name.Value)
	}
	for _, n := range c.Names {
		names = append(names, n.Value)
	}
	for _, n := range names {
		st.Funcs[n] = Stream{}
		if c.Body != nil && forksItself(n, c.Body) {
			a.say(a.p.Actions.Destructive, msgForkBomb, detail{name: n})
			return
		}
	}
	if c.Body == nil {
		return
	}
	sub := st.Clone()
	sub.Args, sub.ArgsKnown = nil, false
	out := a.stmt(c.Body, sub, depth).Taint()
	for k := range sub.Downloads {
		st.Downloads[k] = true
	}
	for _, n := range names {
		st.Funcs[n] = out
	}
}

// forksItself reports whether the body of function name calls name in a
// pipeline or a background statement (:(){ :|:& };:).
func forksItself(name string, body *syntax.Stmt) bool {
	found := false
	var stmt func(s *syntax.Stmt, risky bool)
	list := func(ss []*syntax.Stmt, risky bool) {
		for _, s := range ss {
			stmt(s, risky)
		}
	}
	stmt = func(s *syntax.Stmt, risky bool) {
		if s == nil || found {
			return
		}
		risky = risky || s.Background || s.Coprocess
		switch c := s.Cmd.(type) {
		case *syntax.CallExpr:
			if risky && len(c.Args) > 0 && c.Args[0].Lit() == name {
				found = true
			}
		case *syntax.BinaryCmd:
			pipe := c.Op == syntax.Pipe || c.Op == syntax.PipeAll
			stmt(c.X, risky || pipe)
			stmt(c.Y, risky || pipe)
		case *syntax.Block:
			list(c.Stmts, risky)
		case *syntax.Subshell:
			list(c.Stmts, risky)
		case *syntax.IfClause:
			for cl := c; cl != nil; cl = cl.Else {
				list(cl.Cond, risky)
				list(cl.Then, risky)
			}
		case *syntax.WhileClause:
			list(c.Cond, risky)
			list(c.Do, risky)
		case *syntax.ForClause:
			list(c.Do, risky)
		case *syntax.CaseClause:
			for _, it := range c.Items {
				list(it.Stmts, risky)
			}
		}
	}
	stmt(body, false)
	return found
}

// assign records a variable assignment of the shell.
func (a *analysis) assign(as *syntax.Assign, st *State, depth int) {
	if as.Array != nil {
		a.substitutions(as.Array, st, depth)
	}
	if as.Index != nil {
		a.substitutions(as.Index, st, depth)
	}
	if as.Name == nil {
		if as.Value != nil {
			a.one(as.Value, st, depth, false)
		}
		return
	}
	name := as.Name.Value
	var val Field
	if as.Value != nil {
		val = a.one(as.Value, st, depth, false)
	}
	if name == "IFS" {
		st.ifsDirty = as.Array != nil || as.Append || val.Dyn || val.S != " \t\n"
	}
	if as.Naked && as.Value == nil {
		return // declare X: the value does not change
	}
	old, known := st.Vars[name]
	switch {
	case as.Array != nil || as.Index != nil:
		delete(st.Vars, name)
	case as.Append && !known:
		val.S, val.Dyn = UnknownMaybeEmpty+val.S, true
		st.Vars[name] = capValue(val)
	case as.Append:
		v := MergeField(old, val)
		v.S = old.S + val.S
		st.Vars[name] = capValue(v)
	default:
		st.Vars[name] = capValue(val)
	}
}

// capValue keeps variable values from growing without bound (x=$x$x …);
// a cut value is unknown from there on.
func capValue(f Field) Field {
	const max = 16 << 10
	if len(f.S) > max {
		f.S, f.Dyn = f.S[:max]+UnknownMaybeEmpty, true
	}
	f.Proc = nil
	return f
}

func (a *analysis) decl(c *syntax.DeclClause, st *State, depth int) {
	for _, as := range c.Args {
		a.assign(as, st, depth)
	}
}

func (a *analysis) call(c *syntax.CallExpr, st *State, depth int) Stream {
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			a.assign(as, st, depth)
		}
		return Silent()
	}
	// Assignments before a command apply to it alone.
	for _, as := range c.Assigns {
		if as.Value != nil {
			a.one(as.Value, st, depth, false)
		}
		if as.Array != nil {
			a.substitutions(as.Array, st, depth)
		}
	}
	argv := a.args(c.Args, st, depth)
	if len(argv) == 0 {
		return Stream{}
	}
	return a.run(argv, st, depth)
}
