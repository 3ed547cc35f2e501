package pretool

import (
	"slices"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// Builtins that change the shell the rest of the command runs in.

// alias records aliases; Run refuses to guess what one runs.
func (a *analysis) alias(c call) shell.Stream {
	for _, f := range c.args() {
		if n, v, ok := strings.Cut(f.S, "="); ok && !strings.HasPrefix(f.S, "-") {
			if f.Dyn {
				v = shell.UnknownMaybeEmpty
			}
			c.st.Aliases[n] = v
		}
	}
	return shell.Silent()
}

func (a *analysis) unalias(c call) shell.Stream {
	for _, f := range c.args() {
		if f.S == "-a" {
			clear(c.st.Aliases)
		}
		delete(c.st.Aliases, f.S)
	}
	return shell.Silent()
}

// unset forgets functions (-f) or makes variables empty.
func (a *analysis) unset(c call) shell.Stream {
	o := c.opts()
	for _, f := range o.Operands {
		if o.Has("-f") {
			delete(c.st.Funcs, f.S)
		} else if shell.IsVarName(f.S) {
			c.st.Vars[f.S] = shell.Field{}
		}
	}
	return shell.Silent()
}

// read, mapfile and readarray assign what they read: the variables become
// unknown.
func (a *analysis) read(c call) shell.Stream {
	o := c.opts()
	for _, f := range append(o.Operands, o.Values("-a")...) {
		delete(c.st.Vars, f.S)
	}
	if c.base != "read" && len(o.Operands) == 0 {
		delete(c.st.Vars, "MAPFILE")
	}
	return shell.Stream{}
}

// set -- sets the positional parameters.
func (a *analysis) set(c call) shell.Stream {
	args := c.args()
	if i := slices.IndexFunc(args, func(f shell.Field) bool { return f.S == "--" }); i >= 0 {
		c.st.Args, c.st.ArgsKnown = append([]shell.Field(nil), args[i+1:]...), true
	}
	return shell.Silent()
}

func (a *analysis) shift(c call) shell.Stream {
	c.st.Args, c.st.ArgsKnown = nil, false
	return shell.Silent()
}

// trap runs its first operand as a script when a signal comes.
func (a *analysis) trap(c call) shell.Stream {
	if o := c.opts(); len(o.Operands) > 1 {
		a.nestedScript("trap", o.Operands[0], c.st, c.depth)
	}
	return shell.Stream{}
}

func (a *analysis) pwd(c call) shell.Stream {
	if c.st.Cwd != "" && c.st.Cwd != shell.SymbolicHome {
		return shell.StaticStream(c.st.Cwd + "\n")
	}
	return shell.Stream{}
}

// cwdOf resolves a directory for cd: "" when unknown.
func (a *analysis) cwdOf(dir shell.Field, st *shell.State) string {
	if dir.Dyn || dir.Glob {
		return ""
	}
	f := a.ctx.resolve(dir.S, st.Cwd)
	if !f.Abs {
		return ""
	}
	return f.Key()
}

// cd follows the working directory: cd, pushd and popd.
func (a *analysis) cd(c call) shell.Stream {
	a.chdir(c.base, c.opts(), c.st)
	return shell.Silent()
}

func (a *analysis) chdir(base string, o shell.Opts, st *shell.State) {
	if base == "popd" {
		st.Cwd = ""
		return
	}
	switch {
	case len(o.Operands) == 0 && base == "cd":
		if a.ctx.homeSet {
			st.Cwd = a.ctx.home
		} else {
			st.Cwd = shell.SymbolicHome
		}
	case len(o.Operands) == 0 || o.Operands[0].S == "-" || strings.HasPrefix(o.Operands[0].S, "+"):
		st.Cwd = ""
	default:
		a.readTarget(base, o.Operands[0], st, readOpts{namesOnly: true})
		st.Cwd = a.cwdOf(o.Operands[0], st)
	}
}

// echo returns what echo prints, when it is static.
func echo(args []shell.Field) shell.Stream {
	newline, escapes := true, false
	for len(args) > 0 && len(args[0].S) > 1 && args[0].S[0] == '-' && strings.Trim(args[0].S[1:], "neE") == "" {
		for _, c := range args[0].S[1:] {
			switch c {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	out := shell.Stream{}
	parts := make([]string, 0, len(args))
	for _, f := range args {
		if f.Dyn {
			out.Download = out.Download || f.Download
			out.Decoded = out.Decoded || f.Decoded
			return out
		}
		out.Download = out.Download || f.Download
		out.Decoded = out.Decoded || f.Decoded
		parts = append(parts, f.S)
	}
	s := strings.Join(parts, " ")
	if escapes {
		s = shell.AnsiC(strings.ReplaceAll(s, `\c`, "\x00"))
	}
	if newline {
		s += "\n"
	}
	out.Static = &s
	out.Items = strings.Fields(s)
	return out
}

// printf returns what printf prints, when it is static and the format uses
// only %s, %b, %c, %d and %%.
func (a *analysis) printf(c call) shell.Stream {
	args, st := c.args(), c.st
	if len(args) > 0 && args[0].S == "-v" {
		if len(args) > 1 {
			delete(st.Vars, args[1].S)
		}
		return shell.Stream{}
	}
	if len(args) > 0 && args[0].S == "--" {
		args = args[1:]
	}
	out := shell.Stream{}
	for _, f := range args {
		out.Download = out.Download || f.Download
		out.Decoded = out.Decoded || f.Decoded
		if f.Dyn {
			return out
		}
	}
	if len(args) == 0 {
		return out
	}
	format, rest := shell.AnsiC(args[0].S), args[1:]
	var b strings.Builder
	for pass := 0; pass == 0 || len(rest) > 0 && pass < 64; pass++ {
		consumed := false
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c != '%' || i+1 >= len(format) {
				b.WriteByte(c)
				continue
			}
			i++
			arg := ""
			switch format[i] {
			case '%':
				b.WriteByte('%')
				continue
			case 's', 'b', 'c', 'd', 'q':
				if len(rest) > 0 {
					arg, rest, consumed = rest[0].S, rest[1:], true
				}
			default:
				return out
			}
			switch format[i] {
			case 'b':
				arg = shell.AnsiC(arg)
			case 'c':
				if arg != "" {
					arg = arg[:1]
				}
			}
			b.WriteString(arg)
		}
		if !consumed {
			break
		}
	}
	s := b.String()
	out.Static = &s
	out.Items = strings.Fields(s)
	return out
}
