package shell

import (
	"slices"
	"strings"
)

// Opts is a parsed argument list: options with their values, and
// operands.
type Opts struct {
	List     []Opt
	Operands []Field
	Rest     []Field // with StopAtOperand: the first operand and everything after it
}

// Opt is one option and its value.
type Opt struct {
	Name   string // "-x" or "--long"
	Val    Field
	HasVal bool // Val is set
}

// Spec says which options of a program take a value.
type Spec struct {
	Short         string   // short options that take a value, e.g. "ugC"
	Long          []string // long options that take a value (when not given as --x=v)
	StopAtOperand bool     // options end at the first operand (wrappers, POSIX)
	Numeric       bool     // -N (a number) is an option (nice -10)
}

// ParseArgs splits args by spec, GNU style: clusters (-rf), attached values
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

// Has reports whether any of the named options was given.
func (o Opts) Has(names ...string) bool {
	for _, op := range o.List {
		if slices.Contains(names, op.Name) {
			return true
		}
	}
	return false
}

// Values returns the values of the named options, in order.
func (o Opts) Values(names ...string) []Field {
	var out []Field
	for _, op := range o.List {
		if op.HasVal && slices.Contains(names, op.Name) {
			out = append(out, op.Val)
		}
	}
	return out
}

// Value returns the last value of the named options.
func (o Opts) Value(names ...string) (Field, bool) {
	vs := o.Values(names...)
	if len(vs) == 0 {
		return Field{}, false
	}
	return vs[len(vs)-1], true
}

// BaseName is the program name as the shell would find it: the last path
// segment.
func BaseName(prog string) string {
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		return prog[i+1:]
	}
	return prog
}

// Quote quotes s for re-parsing as one word; markers stay as bytes.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// JoinQuoted quotes each word and joins them: argv as a command line.
func JoinQuoted(argv []Field) string {
	parts := make([]string, 0, len(argv))
	for _, f := range argv {
		parts = append(parts, Quote(f.S))
	}
	return strings.Join(parts, " ")
}

// SkipAssignments drops NAME=value words before a command (sudo, env).
func SkipAssignments(argv []Field) []Field {
	for len(argv) > 0 {
		n, _, ok := strings.Cut(argv[0].S, "=")
		if !ok || !IsVarName(n) {
			break
		}
		argv = argv[1:]
	}
	return argv
}

// IsVarName reports whether s is a shell variable name.
func IsVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !isAlpha(c) && (i == 0 || !isDigit(c)) {
			return false
		}
	}
	return true
}

// JoinFields joins words the way a program that runs "$*" through sh -c
// (watch, sg) sees them.
func JoinFields(fs []Field) Field {
	var out Field
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		out = MergeField(out, f)
		parts = append(parts, f.S)
	}
	out.S = strings.Join(parts, " ")
	out.Glob = false
	return out
}
