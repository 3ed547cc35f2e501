package shell

import "strings"

// Call is one simple command of a line as a Trace reaches it: its words,
// evaluated, and the working directory it runs in.
type Call struct {
	Argv []Field
	// Cwd is the directory the command runs in: absolute, or "" when the
	// line moved to a directory the walk cannot know (cd "$dir", popd).
	Cwd string
	// Moved is the last cd, pushd or popd (or env -C) that set Cwd, as
	// written; "" when the command runs where the line started.
	Moved string
}

// Traced is what Trace found in a line.
type Traced struct {
	Calls []Call
	// Written maps the files (Path.Key) the line wrote with content the
	// walk knows (cat > f <<EOF, echo … > f) to that content.
	Written map[string]string
	// Trouble is set when (part of) the line could not be read.
	Trouble bool
}

// Trace walks src, a command line run in cwd (absolute, or "" when
// unknown), and returns its simple commands in the order they run with the
// working directory of each: cd, pushd and popd move it (a directory the
// walk cannot evaluate makes it unknown), a subshell's moves end with the
// subshell, and env -C moves the command it runs. Wrapped commands
// (sudo, env, timeout …) are recorded once, as written. The files the line
// writes with known content are in Written. Markers in src are replaced
// first (Sanitize).
func Trace(src, cwd string) Traced {
	if !strings.HasPrefix(cwd, "/") || strings.ContainsAny(cwd, markers) {
		cwd = ""
	} else {
		cwd = "/" + strings.Join(SplitPath(cwd), "/")
	}
	t := &tracer{start: cwd}
	t.w = NewWalker(t, Config{MaxDepth: 2})
	st := NewState(cwd)
	t.w.Script(Sanitize(src), st, 0)
	out := Traced{Calls: t.calls, Trouble: t.trouble}
	for k, v := range st.Scripts {
		if out.Written == nil {
			out.Written = map[string]string{}
		}
		out.Written[k] = v
	}
	return out
}

// tracer is the Host of Trace.
type tracer struct {
	w       *Walker
	start   string
	calls   []Call
	moved   map[*State]string
	trouble bool
}

func (t *tracer) Run(argv []Field, st *State, depth int) Stream {
	t.w.Step()
	c := Call{Argv: argv, Cwd: st.Cwd, Moved: t.movedIn(st)}
	if c.Moved == "" && c.Cwd != t.start {
		c.Moved = "a cd earlier in the line"
	}
	// env -C dir cmd: cmd runs in dir.
	for inner := argv; len(inner) > 0; {
		w, ok := Unwrap(inner)
		if !ok || len(w.Command) == 0 {
			break
		}
		if w.Chdir != nil {
			c.Cwd = ChdirTo(*w.Chdir, c.Cwd)
			c.Moved = BaseName(inner[0].S) + " " + Display(w.Chdir.S)
		}
		inner = w.Command
	}
	t.calls = append(t.calls, c)
	p, _ := Lookup(BaseName(argv[0].S))
	switch p.Kind {
	case Cd:
		t.chdir(argv, st)
		return Silent()
	case Echo:
		return traceEcho(argv[1:])
	case Cat:
		if len(argv) == 1 {
			return st.Stdin
		}
	case CommandShell:
		if len(argv) >= 3 && argv[1].S == "-c" && !argv[2].Dyn {
			t.w.Script(argv[2].S, st.Clone(), depth+1)
		}
	}
	return Stream{}
}

// movedIn is the move that set st's directory.
func (t *tracer) movedIn(st *State) string {
	if t.moved == nil {
		return ""
	}
	return t.moved[st]
}

func (t *tracer) chdir(argv []Field, st *State) {
	base := BaseName(argv[0].S)
	var ops []Field
	for _, f := range argv[1:] {
		if f.S == "--" || strings.HasPrefix(f.S, "-") && len(f.S) > 1 && !f.Dyn {
			continue
		}
		ops = append(ops, f)
	}
	switch {
	case base == "popd", len(ops) == 0, ops[0].S == "-", strings.HasPrefix(ops[0].S, "+"):
		st.Cwd = "" // home, the previous directory or the stack: not followed
	default:
		st.Cwd = ChdirTo(ops[0], st.Cwd)
	}
	if t.moved == nil {
		t.moved = map[*State]string{}
	}
	var words []string
	for _, f := range argv {
		words = append(words, Display(f.S))
	}
	t.moved[st] = strings.Join(words, " ")
}

// ChdirTo is the directory cd dir moves to from cwd (absolute, or ""
// when unknown): "" when dir or cwd cannot be known.
func ChdirTo(dir Field, cwd string) string {
	if dir.Dyn || dir.Glob || strings.ContainsAny(dir.S, markers) || dir.S == "" || strings.HasPrefix(dir.S, "~") {
		return ""
	}
	f := Resolve(dir.S, cwd, SymbolicHome)
	if !f.Abs {
		return ""
	}
	return f.Key()
}

// traceEcho is what echo prints when its words are known.
func traceEcho(args []Field) Stream {
	newline := true
	if len(args) > 0 && args[0].S == "-n" {
		newline, args = false, args[1:]
	}
	var parts []string
	for _, a := range args {
		if a.Dyn || strings.HasPrefix(a.S, "-") {
			return Stream{}
		}
		parts = append(parts, a.S)
	}
	s := strings.Join(parts, " ")
	if newline {
		s += "\n"
	}
	return StaticStream(s)
}

func (t *tracer) Redirect(Redirect, *State) {}
func (t *tracer) Trouble(Trouble)           { t.trouble = true }
func (t *tracer) ForkBomb(string)           {}
func (t *tracer) Decided() bool             { return false }
