package pretool

import (
	"path"
	"slices"
	"strings"
)

// opts is a parsed argument list: options with their values, and
// operands.
type Opts struct {
	List     []Opt
	Operands []Field
	Rest     []Field // with stopAtOperand: the first operand and everything after it
}

type Opt struct {
	Name   string // "-x" or "--long"
	Val    Field
	HasVal bool // val is set
}

// optSpec says which options take a value.
type Spec struct {
	Short         string   // short options that take a value, e.g. "ugC"
	Long          []string // long options that take a value (when not given as --x=v)
	StopAtOperand bool     // options end at the first operand (wrappers, POSIX)
	Numeric       bool     // -N (a number) is an option (nice -10)
}

// parse splits args by spec, GNU style: clusters (-rf), attached values
// (-ofile, --out=file), -- ending options.
func ParseArgs(args []Field, spec Spec) Opts {
	var o Opts
	for i := 0; i < len(args); i++ {
		f := args[i]
		s := f.S
		switch {
		case s == "--":
			o.Operands = append(o.Operands, args[i+1:]...)
			if spec.StopAtOperand {
				o.Rest = args[i+1:]
			}
			return o
		case strings.HasPrefix(s, "--") && !f.Dyn:
			name, val, ok := strings.Cut(s, "=")
			op := Opt{Name: name}
			if ok {
				op.Val, op.HasVal = Field{S: val, Glob: f.Glob, Dyn: f.Dyn, Download: f.Download, Decoded: f.Decoded, Proc: f.Proc}, true
			} else if slices.Contains(spec.Long, name[2:]) && i+1 < len(args) {
				i++
				op.Val, op.HasVal = args[i], true
			}
			o.List = append(o.List, op)
		case len(s) > 1 && s[0] == '-' && !f.Dyn:
			if spec.Numeric && strings.Trim(s[1:], "0123456789") == "" {
				o.List = append(o.List, Opt{Name: s})
				continue
			}
			for j := 1; j < len(s); j++ {
				c := s[j]
				op := Opt{Name: "-" + string(c)}
				if strings.IndexByte(spec.Short, c) >= 0 {
					if j+1 < len(s) {
						op.Val, op.HasVal = Field{S: s[j+1:], Glob: f.Glob}, true
					} else if i+1 < len(args) {
						i++
						op.Val, op.HasVal = args[i], true
					}
					o.List = append(o.List, op)
					break
				}
				o.List = append(o.List, op)
			}
		default:
			o.Operands = append(o.Operands, f)
			if spec.StopAtOperand {
				o.Operands = append(o.Operands, args[i+1:]...)
				o.Rest = args[i:]
				return o
			}
		}
	}
	return o
}

// has reports whether any of the named options was given.
func (o Opts) Has(names ...string) bool {
	for _, op := range o.List {
		if slices.Contains(names, op.Name) {
			return true
		}
	}
	return false
}

// values returns the values of the named options, in order.
func (o Opts) Values(names ...string) []Field {
	var out []Field
	for _, op := range o.List {
		if op.HasVal && slices.Contains(names, op.Name) {
			out = append(out, op.Val)
		}
	}
	return out
}

// value returns the last value of the named options.
func (o Opts) Value(names ...string) (Field, bool) {
	vs := o.Values(names...)
	if len(vs) == 0 {
		return Field{}, false
	}
	return vs[len(vs)-1], true
}

// baseName is the program name as the shell would find it: the last path
// segment.
func BaseName(prog string) string {
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		return prog[i+1:]
	}
	return prog
}

// cmdText renders argv for a message.
func cmdText(argv []Field) string {
	parts := make([]string, 0, len(argv))
	for _, f := range argv {
		s := Display(f.S)
		if s == "" || strings.ContainsAny(s, " \t\n'\"") {
			s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		parts = append(parts, s)
	}
	return quote(strings.Join(parts, " "))
}

// shellQuote quotes s for re-parsing as one word; markers stay as bytes.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func JoinQuoted(argv []Field) string {
	parts := make([]string, 0, len(argv))
	for _, f := range argv {
		parts = append(parts, Quote(f.S))
	}
	return strings.Join(parts, " ")
}

// lastSeg is the file name a download to "the remote name" gets.
func lastSeg(url string) string {
	u := url
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	u, _, _ = strings.Cut(u, "?")
	u, _, _ = strings.Cut(u, "#")
	_, p, ok := strings.Cut(u, "/")
	if !ok {
		return "index.html"
	}
	b := path.Base("/" + p)
	if b == "/" || b == "." {
		return "index.html"
	}
	return b
}
