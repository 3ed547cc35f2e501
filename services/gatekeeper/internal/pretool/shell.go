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
type stream struct {
	download bool     // bytes fetched from the network
	decoded  bool     // bytes decoded from base64, hex, …
	static   *string  // the exact bytes, when known
	items    []string // the items a command lists (find's start points), for xargs
}

func staticStream(s string) stream { return stream{static: &s} }

// silent is the output of a command that prints nothing (cd, x=1).
func silent() stream { return staticStream("") }

// taint is what passes through a filter: the origin, not the bytes.
func (s stream) taint() stream { return stream{download: s.download, decoded: s.decoded} }

// then is s followed by t (a list of commands writing to one output).
func (s stream) then(t stream) stream {
	out := stream{download: s.download || t.download, decoded: s.decoded || t.decoded}
	if s.static != nil && t.static != nil {
		joined := *s.static + *t.static
		out.static = &joined
	}
	return out
}

// state is what the analysis knows of the shell at one point.
type state struct {
	cwd       string           // absolute, or "" when unknown
	vars      map[string]field // assigned variables (a dynamic value keeps its taint)
	args      []field          // positional parameters, when argsKnown
	argsKnown bool
	aliases   map[string]string // defined aliases; unknownMaybeEmpty when the value is dynamic
	funcs     map[string]stream // defined functions and what they output
	downloads map[string]bool   // files written with downloaded content
	scripts   map[string]string // files written with static content (echo … > x.sh)
	ifsDirty  bool              // IFS was assigned: field splitting is unknown
	stdin     stream
}

func (s *state) clone() *state {
	c := *s
	c.vars = maps.Clone(s.vars)
	c.aliases = maps.Clone(s.aliases)
	c.funcs = maps.Clone(s.funcs)
	c.downloads = maps.Clone(s.downloads)
	c.scripts = maps.Clone(s.scripts)
	c.args = append([]field(nil), s.args...)
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
	st := &state{
		cwd: ctx.cwd, vars: map[string]field{}, argsKnown: true,
		aliases: map[string]string{}, funcs: map[string]stream{}, downloads: map[string]bool{}, scripts: map[string]string{},
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
func (a *analysis) script(src string, st *state, depth int) {
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
func (a *analysis) subshell(stmts []*syntax.Stmt, st *state, depth int) stream {
	sub := st.clone()
	sub.stdin = stream{}
	return a.stmts(stmts, sub, depth)
}

// substitutions analyses the command and process substitutions inside a
// node the analysis does not otherwise interpret (arithmetic, [[ ]], …).
func (a *analysis) substitutions(n syntax.Node, st *state, depth int) {
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

func (a *analysis) stmts(list []*syntax.Stmt, st *state, depth int) stream {
	var out stream
	for i, s := range list {
		if a.stop() {
			break
		}
		o := a.stmt(s, st, depth)
		if i == 0 {
			out = o
		} else {
			out = out.then(o)
		}
	}
	return out
}

func (a *analysis) stmt(s *syntax.Stmt, st *state, depth int) stream {
	a.steps++
	in := st.stdin
	var outFiles []fpath
	for _, r := range s.Redirs {
		if a.stop() {
			return stream{}
		}
		a.redirect(r, st, depth, &in, &outFiles)
	}
	saved := st.stdin
	st.stdin = in
	out := a.command(s.Cmd, st, depth)
	st.stdin = saved
	if s.Cmd == nil {
		out = in // $(< file)
	}
	if len(outFiles) > 0 {
		for _, f := range outFiles {
			a.wrote(st, f.key(), out)
		}
		out = stream{}
	}
	return out
}

// wrote records what a command wrote to a file, for a later command that
// runs the file (curl … > x.sh; sh x.sh).
func (a *analysis) wrote(st *state, key string, out stream) {
	delete(st.scripts, key)
	if out.download || out.decoded {
		st.downloads[key] = true
		return
	}
	delete(st.downloads, key)
	if out.static != nil && len(*out.static) <= 64<<10 {
		st.scripts[key] = *out.static
	}
}

func isStdout(r *syntax.Redirect) bool { return r.N == nil || r.N.Value == "1" }

// redirect applies one redirection: writes and reads are checked, stdin
// and stdout are noted.
func (a *analysis) redirect(r *syntax.Redirect, st *state, depth int, in *stream, outFiles *[]fpath) {
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
	f := a.ctx.resolve(t.s, st.cwd)
	f.glob = t.glob
	if f.abs && len(f.segs) >= 3 && f.segs[0] == "dev" && (f.segs[1] == "tcp" || f.segs[1] == "udp") {
		host := f.segs[2]
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		a.p.checkShellURL(a.v, "a /dev/"+f.segs[1]+" redirection", "http://"+host+"/")
	}
	switch r.Op {
	case syntax.RdrIn:
		a.p.checkRead(a.v, a.ctx, f, readOpts{what: "an input redirection (<)"})
		if r.N == nil || r.N.Value == "0" {
			*in = a.fileStream(f, st)
		}
	case syntax.DplIn:
	case syntax.DplOut:
		if t.s == "-" || strings.Trim(t.s, "0123456789") == "" {
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
func (a *analysis) fileStream(f fpath, st *state) stream {
	k := f.key()
	if st.downloads[k] || strings.HasPrefix(k, "/dev/tcp/") || strings.HasPrefix(k, "/dev/udp/") {
		return stream{download: true}
	}
	if s, ok := st.scripts[k]; ok {
		return staticStream(s)
	}
	return stream{}
}

// fieldStream turns an evaluated here-document or here-string into the
// stream a command reads.
func (a *analysis) fieldStream(f field, suffix string) stream {
	s := stream{download: f.download, decoded: f.decoded}
	if !f.dyn {
		text := f.s + suffix
		s.static = &text
	}
	return s
}

func (a *analysis) command(cmd syntax.Command, st *state, depth int) stream {
	if a.stop() {
		return stream{}
	}
	switch c := cmd.(type) {
	case nil:
		return stream{}
	case *syntax.CallExpr:
		return a.call(c, st, depth)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			return a.pipeline(c, st, depth)
		}
		return a.stmt(c.X, st, depth).then(a.stmt(c.Y, st, depth))
	case *syntax.Subshell:
		return a.stmts(c.Stmts, st.clone(), depth)
	case *syntax.Block:
		return a.stmts(c.Stmts, st, depth)
	case *syntax.IfClause:
		var out stream
		for cl := c; cl != nil && !a.stop(); cl = cl.Else {
			out = out.then(a.stmts(cl.Cond, st, depth)).then(a.stmts(cl.Then, st, depth))
		}
		return out.taint()
	case *syntax.WhileClause:
		return a.stmts(c.Cond, st, depth).then(a.stmts(c.Do, st, depth)).taint()
	case *syntax.ForClause:
		return a.forLoop(c, st, depth)
	case *syntax.CaseClause:
		a.one(c.Word, st, depth, false)
		var out stream
		for _, item := range c.Items {
			for _, w := range item.Patterns {
				a.one(w, st, depth, false)
			}
			out = out.then(a.stmts(item.Stmts, st, depth))
		}
		return out.taint()
	case *syntax.FuncDecl:
		a.funcDecl(c, st, depth)
		return silent()
	case *syntax.DeclClause:
		a.decl(c, st, depth)
		return silent()
	case *syntax.TimeClause:
		if c.Stmt != nil {
			return a.stmt(c.Stmt, st, depth)
		}
	case *syntax.CoprocClause:
		if c.Stmt != nil {
			a.stmt(c.Stmt, st.clone(), depth)
		}
	default: // (( )), let, [[ ]], test declarations
		a.substitutions(cmd, st, depth)
	}
	return stream{}
}

// pipeline analyses each stage with the previous stage's output as its
// input.
func (a *analysis) pipeline(c *syntax.BinaryCmd, st *state, depth int) stream {
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
	in := st.stdin
	var out stream
	for _, s := range stages {
		if a.stop() {
			break
		}
		sub := st.clone()
		sub.stdin = in
		out = a.stmt(s, sub, depth)
		for k := range sub.downloads {
			st.downloads[k] = true
		}
		in = out
	}
	return out
}

func (a *analysis) forLoop(c *syntax.ForClause, st *state, depth int) stream {
	wi, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		a.substitutions(c.Loop, st, depth)
		return a.stmts(c.Do, st, depth).taint()
	}
	var items []field
	if wi.InPos.IsValid() {
		items = a.args(wi.Items, st, depth)
	} else if st.argsKnown {
		items = append(items, st.args...)
	}
	name := wi.Name.Value
	// Once with the variable unknown, then with each of the first static
	// items (for d in / /etc; do rm -rf "$d"; done).
	delete(st.vars, name)
	out := a.stmts(c.Do, st, depth)
	for i, it := range items {
		if i == 4 || a.stop() {
			break
		}
		if it.dyn {
			continue
		}
		st.vars[name] = it
		out = out.then(a.stmts(c.Do, st, depth))
	}
	delete(st.vars, name)
	return out.taint()
}

// funcDecl records a function, looks for a fork bomb and analyses the body
// as if it were called.
func (a *analysis) funcDecl(c *syntax.FuncDecl, st *state, depth int) {
	var names []string
	if c.Name != nil {
		names = append(names, c.Name.Value)
	}
	for _, n := range c.Names {
		names = append(names, n.Value)
	}
	for _, n := range names {
		st.funcs[n] = stream{}
		if c.Body != nil && forksItself(n, c.Body) {
			a.say(a.p.Actions.Destructive, msgForkBomb, detail{name: n})
			return
		}
	}
	if c.Body == nil {
		return
	}
	sub := st.clone()
	sub.args, sub.argsKnown = nil, false
	out := a.stmt(c.Body, sub, depth).taint()
	for k := range sub.downloads {
		st.downloads[k] = true
	}
	for _, n := range names {
		st.funcs[n] = out
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
func (a *analysis) assign(as *syntax.Assign, st *state, depth int) {
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
	var val field
	if as.Value != nil {
		val = a.one(as.Value, st, depth, false)
	}
	if name == "IFS" {
		st.ifsDirty = as.Array != nil || as.Append || val.dyn || val.s != " \t\n"
	}
	if as.Naked && as.Value == nil {
		return // declare X: the value does not change
	}
	old, known := st.vars[name]
	switch {
	case as.Array != nil || as.Index != nil:
		delete(st.vars, name)
	case as.Append && !known:
		val.s, val.dyn = unknownMaybeEmpty+val.s, true
		st.vars[name] = capValue(val)
	case as.Append:
		v := mergeField(old, val)
		v.s = old.s + val.s
		st.vars[name] = capValue(v)
	default:
		st.vars[name] = capValue(val)
	}
}

// capValue keeps variable values from growing without bound (x=$x$x …);
// a cut value is unknown from there on.
func capValue(f field) field {
	const max = 16 << 10
	if len(f.s) > max {
		f.s, f.dyn = f.s[:max]+unknownMaybeEmpty, true
	}
	f.proc = nil
	return f
}

func (a *analysis) decl(c *syntax.DeclClause, st *state, depth int) {
	for _, as := range c.Args {
		a.assign(as, st, depth)
	}
}

func (a *analysis) call(c *syntax.CallExpr, st *state, depth int) stream {
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			a.assign(as, st, depth)
		}
		return silent()
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
		return stream{}
	}
	return a.run(argv, st, depth)
}
