package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxSteps bounds the work of one walk (words evaluated, commands
// classified); beyond it the script is "too complex".
const maxSteps = 50000

// Host judges what a Walker finds: the simple commands a script runs and
// the files its redirections name. It answers for what programs do; the
// walker knows only the shell.
type Host interface {
	// Run classifies one simple command, its words evaluated (never
	// empty), and returns what the command outputs.
	Run(argv []Field, st *State, depth int) Stream
	// Redirect is told of each redirection to or from a file (not
	// here-documents).
	Redirect(r Redirect, st *State)
	// Trouble is told why (part of) the script could not be analysed.
	Trouble(t Trouble)
	// ForkBomb is told of a function that calls itself in a pipeline or in
	// the background; the walk does not analyse its body.
	ForkBomb(name string)
	// Decided reports that the host has its answer: the walk may stop.
	Decided() bool
}

// Access is what a redirection does with its file.
type Access int

// Accesses.
const (
	NoAccess Access = iota // fd duplication (<&, >&N)
	Read                   // <
	Write                  // >, >>, >|, &>, &>>, <>, >&file
)

// Redirect is one redirection to or from a file.
type Redirect struct {
	Op     string // as written: ">", ">>", ">&", "<>", …
	Access Access
	Target Field // the word, evaluated
	Path   Path  // the word, resolved against the working directory
}

// TroubleKind says why a script could not be analysed.
type TroubleKind int

// Kinds of trouble.
const (
	Unparsable   TroubleKind = iota // the script does not parse as Bash (Err)
	TooDeep                         // nested scripts go deeper than the limit
	TooManySteps                    // the walk's work budget is spent
	TooManyWords                    // a brace expansion makes too many words
)

// Trouble is a reason a script could not be analysed.
type Trouble struct {
	Kind  TroubleKind
	Err   error // Unparsable: the parser's error
	Depth int   // how deeply nested the script is (0: the command itself)
}

// Config sets up a Walker.
type Config struct {
	// Home is the home directory, absolute and clean; "" when unknown, so
	// ~ and $HOME stay symbolic (SymbolicHome).
	Home string
	// MaxDepth bounds how deeply nested scripts (bash -c, eval, …) are
	// followed.
	MaxDepth int
}

// Walker evaluates shell source statically: it parses it, follows its
// statements, pipelines, substitutions, functions and variables, evaluates
// each word as far as it can be known without running anything, and hands
// each simple command and redirection to its Host.
type Walker struct {
	host      Host
	home      string // absolute, or SymbolicHome
	homeSet   bool
	maxDepth  int
	steps     int
	exhausted bool
}

// NewWalker returns a walker reporting to host.
func NewWalker(host Host, cfg Config) *Walker {
	w := &Walker{host: host, home: SymbolicHome, maxDepth: cfg.MaxDepth}
	if cfg.Home != "" {
		w.home, w.homeSet = cfg.Home, true
	}
	return w
}

// Resolve resolves a word against cwd and the walker's home.
func (w *Walker) Resolve(s, cwd string) Path { return Resolve(s, cwd, w.home) }

// Step counts one unit of work.
func (w *Walker) Step() { w.steps++ }

// Stop reports whether the walk can end: the host has decided, or the
// step budget is spent.
func (w *Walker) Stop() bool {
	if w.steps > maxSteps && !w.exhausted {
		w.tooComplex(TooManySteps)
	}
	return w.host.Decided() || w.exhausted
}

func (w *Walker) tooComplex(k TroubleKind) {
	w.exhausted = true
	w.host.Trouble(Trouble{Kind: k})
}

// Script parses and walks shell source: the command itself (depth 0), or
// a nested script (bash -c, eval, sh <<EOF, an alias) one level deeper.
func (w *Walker) Script(src string, st *State, depth int) {
	if w.Stop() {
		return
	}
	if depth > w.maxDepth {
		w.host.Trouble(Trouble{Kind: TooDeep, Depth: depth})
		return
	}
	w.steps += 1 + len(src)/64
	f, err := Parse(src)
	if err != nil {
		w.host.Trouble(Trouble{Kind: Unparsable, Err: err, Depth: depth})
		return
	}
	w.stmts(f.Stmts, st, depth)
}

// subshell analyses $(…) or <(…) and returns what it outputs.
func (w *Walker) subshell(stmts []*syntax.Stmt, st *State, depth int) Stream {
	sub := st.Clone()
	sub.Stdin = Stream{}
	return w.stmts(stmts, sub, depth)
}

// substitutions analyses the command and process substitutions inside a
// node the walk does not otherwise interpret (arithmetic, [[ ]], …).
func (w *Walker) substitutions(n syntax.Node, st *State, depth int) {
	syntax.Walk(n, func(n syntax.Node) bool {
		if w.Stop() {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			w.subshell(x.Stmts, st, depth)
			return false
		case *syntax.ProcSubst:
			w.subshell(x.Stmts, st, depth)
			return false
		}
		return true
	})
}

func (w *Walker) stmts(list []*syntax.Stmt, st *State, depth int) Stream {
	var out Stream
	for i, s := range list {
		if w.Stop() {
			break
		}
		o := w.stmt(s, st, depth)
		if i == 0 {
			out = o
		} else {
			out = out.Then(o)
		}
	}
	return out
}

func (w *Walker) stmt(s *syntax.Stmt, st *State, depth int) Stream {
	w.steps++
	in := st.Stdin
	var outFiles []Path
	for _, r := range s.Redirs {
		if w.Stop() {
			return Stream{}
		}
		w.redirect(r, st, depth, &in, &outFiles)
	}
	saved := st.Stdin
	st.Stdin = in
	out := w.command(s.Cmd, st, depth)
	st.Stdin = saved
	if s.Cmd == nil {
		out = in // $(< file)
	}
	if len(outFiles) > 0 {
		for _, f := range outFiles {
			w.Wrote(st, f.Key(), out)
		}
		out = Stream{}
	}
	return out
}

// Wrote records what a command wrote to a file (its Path.Key), for a later
// command that runs the file (curl … > x.sh; sh x.sh).
func (w *Walker) Wrote(st *State, key string, out Stream) {
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

// redirect applies one redirection: the host checks the file, the walk
// notes what the command reads and where its output goes.
func (w *Walker) redirect(r *syntax.Redirect, st *State, depth int, in *Stream, outFiles *[]Path) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		body := w.one(r.Hdoc, st, depth, true)
		*in = w.fieldStream(body, "")
		return
	case syntax.WordHdoc:
		body := w.one(r.Word, st, depth, false)
		*in = w.fieldStream(body, "\n")
		return
	}
	t := w.one(r.Word, st, depth, false)
	f := w.Resolve(t.S, st.Cwd)
	f.Glob = t.Glob
	rd := Redirect{Op: r.Op.String(), Target: t, Path: f}
	switch r.Op {
	case syntax.RdrIn:
		rd.Access = Read
	case syntax.DplIn:
	case syntax.DplOut:
		if t.S != "-" && strings.Trim(t.S, "0123456789") != "" {
			rd.Access = Write
		}
	default: // >, >>, >|, &>, &>>, <>
		rd.Access = Write
	}
	w.host.Redirect(rd, st)
	switch r.Op {
	case syntax.RdrIn:
		if r.N == nil || r.N.Value == "0" {
			*in = w.fileStream(f, st)
		}
	case syntax.DplIn, syntax.RdrInOut:
	case syntax.DplOut:
		if rd.Access == Write {
			*outFiles = append(*outFiles, f)
		}
	default:
		if isStdout(r) || r.Op == syntax.RdrAll || r.Op == syntax.AppAll || r.Op == syntax.RdrAllClob || r.Op == syntax.AppAllClob {
			*outFiles = append(*outFiles, f)
		}
	}
}

// fileStream is what reading a file yields: downloaded or known static
// content; bash's /dev/tcp and /dev/udp are the network.
func (w *Walker) fileStream(f Path, st *State) Stream {
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
func (w *Walker) fieldStream(f Field, suffix string) Stream {
	s := Stream{Download: f.Download, Decoded: f.Decoded}
	if !f.Dyn {
		text := f.S + suffix
		s.Static = &text
	}
	return s
}

func (w *Walker) command(cmd syntax.Command, st *State, depth int) Stream {
	if w.Stop() {
		return Stream{}
	}
	switch c := cmd.(type) {
	case nil:
		return Stream{}
	case *syntax.CallExpr:
		return w.call(c, st, depth)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			return w.pipeline(c, st, depth)
		}
		return w.stmt(c.X, st, depth).Then(w.stmt(c.Y, st, depth))
	case *syntax.Subshell:
		return w.stmts(c.Stmts, st.Clone(), depth)
	case *syntax.Block:
		return w.stmts(c.Stmts, st, depth)
	case *syntax.IfClause:
		var out Stream
		for cl := c; cl != nil && !w.Stop(); cl = cl.Else {
			out = out.Then(w.stmts(cl.Cond, st, depth)).Then(w.stmts(cl.Then, st, depth))
		}
		return out.Taint()
	case *syntax.WhileClause:
		return w.stmts(c.Cond, st, depth).Then(w.stmts(c.Do, st, depth)).Taint()
	case *syntax.ForClause:
		return w.forLoop(c, st, depth)
	case *syntax.CaseClause:
		w.one(c.Word, st, depth, false)
		var out Stream
		for _, item := range c.Items {
			for _, pat := range item.Patterns {
				w.one(pat, st, depth, false)
			}
			out = out.Then(w.stmts(item.Stmts, st, depth))
		}
		return out.Taint()
	case *syntax.FuncDecl:
		w.funcDecl(c, st, depth)
		return Silent()
	case *syntax.DeclClause:
		w.decl(c, st, depth)
		return Silent()
	case *syntax.TimeClause:
		if c.Stmt != nil {
			return w.stmt(c.Stmt, st, depth)
		}
	case *syntax.CoprocClause:
		if c.Stmt != nil {
			w.stmt(c.Stmt, st.Clone(), depth)
		}
	default: // (( )), let, [[ ]], test declarations
		w.substitutions(cmd, st, depth)
	}
	return Stream{}
}

// pipeline analyses each stage with the previous stage's output as its
// input.
func (w *Walker) pipeline(c *syntax.BinaryCmd, st *State, depth int) Stream {
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 &&
			!s.Negated && !s.Background {
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
		if w.Stop() {
			break
		}
		sub := st.Clone()
		sub.Stdin = in
		out = w.stmt(s, sub, depth)
		for k := range sub.Downloads {
			st.Downloads[k] = true
		}
		in = out
	}
	return out
}

func (w *Walker) forLoop(c *syntax.ForClause, st *State, depth int) Stream {
	wi, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		w.substitutions(c.Loop, st, depth)
		return w.stmts(c.Do, st, depth).Taint()
	}
	var items []Field
	if wi.InPos.IsValid() {
		items = w.args(wi.Items, st, depth)
	} else if st.ArgsKnown {
		items = append(items, st.Args...)
	}
	name := wi.Name.Value
	// Once with the variable unknown, then with each of the first static
	// items (for d in / /etc; do rm -rf "$d"; done).
	delete(st.Vars, name)
	out := w.stmts(c.Do, st, depth)
	for i, it := range items {
		if i == 4 || w.Stop() {
			break
		}
		if it.Dyn {
			continue
		}
		st.Vars[name] = it
		out = out.Then(w.stmts(c.Do, st, depth))
	}
	delete(st.Vars, name)
	return out.Taint()
}

// funcDecl records a function, looks for a fork bomb and analyses the body
// as if it were called.
func (w *Walker) funcDecl(c *syntax.FuncDecl, st *State, depth int) {
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
			w.host.ForkBomb(n)
			return
		}
	}
	if c.Body == nil {
		return
	}
	sub := st.Clone()
	sub.Args, sub.ArgsKnown = nil, false
	out := w.stmt(c.Body, sub, depth).Taint()
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
func (w *Walker) assign(as *syntax.Assign, st *State, depth int) {
	if as.Array != nil {
		w.substitutions(as.Array, st, depth)
	}
	if as.Index != nil {
		w.substitutions(as.Index, st, depth)
	}
	if as.Name == nil {
		if as.Value != nil {
			w.one(as.Value, st, depth, false)
		}
		return
	}
	name := as.Name.Value
	var val Field
	if as.Value != nil {
		val = w.one(as.Value, st, depth, false)
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

func (w *Walker) decl(c *syntax.DeclClause, st *State, depth int) {
	for _, as := range c.Args {
		w.assign(as, st, depth)
	}
}

func (w *Walker) call(c *syntax.CallExpr, st *State, depth int) Stream {
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			w.assign(as, st, depth)
		}
		return Silent()
	}
	// Assignments before a command apply to it alone.
	for _, as := range c.Assigns {
		if as.Value != nil {
			w.one(as.Value, st, depth, false)
		}
		if as.Array != nil {
			w.substitutions(as.Array, st, depth)
		}
	}
	argv := w.args(c.Args, st, depth)
	if len(argv) == 0 {
		return Stream{}
	}
	return w.host.Run(argv, st, depth)
}
