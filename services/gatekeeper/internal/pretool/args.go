package pretool

import (
	"path"
	"slices"
	"strings"
)

// opts is a parsed argument list: options with their values, and
// operands.
type opts struct {
	list     []opt
	operands []field
	rest     []field // with stopAtOperand: the first operand and everything after it
}

type opt struct {
	name string // "-x" or "--long"
	val  field
	has  bool // val is set
}

// optSpec says which options take a value.
type optSpec struct {
	short         string   // short options that take a value, e.g. "ugC"
	long          []string // long options that take a value (when not given as --x=v)
	stopAtOperand bool     // options end at the first operand (wrappers, POSIX)
	numeric       bool     // -N (a number) is an option (nice -10)
}

// parse splits args by spec, GNU style: clusters (-rf), attached values
// (-ofile, --out=file), -- ending options.
func parse(args []field, spec optSpec) opts {
	var o opts
	for i := 0; i < len(args); i++ {
		f := args[i]
		s := f.s
		switch {
		case s == "--":
			o.operands = append(o.operands, args[i+1:]...)
			if spec.stopAtOperand {
				o.rest = args[i+1:]
			}
			return o
		case strings.HasPrefix(s, "--") && !f.dyn:
			name, val, ok := strings.Cut(s, "=")
			op := opt{name: name}
			if ok {
				op.val, op.has = field{s: val, glob: f.glob, dyn: f.dyn, download: f.download, decoded: f.decoded, proc: f.proc}, true
			} else if slices.Contains(spec.long, name[2:]) && i+1 < len(args) {
				i++
				op.val, op.has = args[i], true
			}
			o.list = append(o.list, op)
		case len(s) > 1 && s[0] == '-' && !f.dyn:
			if spec.numeric && strings.Trim(s[1:], "0123456789") == "" {
				o.list = append(o.list, opt{name: s})
				continue
			}
			for j := 1; j < len(s); j++ {
				c := s[j]
				op := opt{name: "-" + string(c)}
				if strings.IndexByte(spec.short, c) >= 0 {
					if j+1 < len(s) {
						op.val, op.has = field{s: s[j+1:], glob: f.glob}, true
					} else if i+1 < len(args) {
						i++
						op.val, op.has = args[i], true
					}
					o.list = append(o.list, op)
					break
				}
				o.list = append(o.list, op)
			}
		default:
			o.operands = append(o.operands, f)
			if spec.stopAtOperand {
				o.operands = append(o.operands, args[i+1:]...)
				o.rest = args[i:]
				return o
			}
		}
	}
	return o
}

// has reports whether any of the named options was given.
func (o opts) has(names ...string) bool {
	for _, op := range o.list {
		if slices.Contains(names, op.name) {
			return true
		}
	}
	return false
}

// values returns the values of the named options, in order.
func (o opts) values(names ...string) []field {
	var out []field
	for _, op := range o.list {
		if op.has && slices.Contains(names, op.name) {
			out = append(out, op.val)
		}
	}
	return out
}

// value returns the last value of the named options.
func (o opts) value(names ...string) (field, bool) {
	vs := o.values(names...)
	if len(vs) == 0 {
		return field{}, false
	}
	return vs[len(vs)-1], true
}

// baseName is the program name as the shell would find it: the last path
// segment.
func baseName(prog string) string {
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		return prog[i+1:]
	}
	return prog
}

// cmdText renders argv for a message.
func cmdText(argv []field) string {
	parts := make([]string, 0, len(argv))
	for _, f := range argv {
		s := display(f.s)
		if s == "" || strings.ContainsAny(s, " \t\n'\"") {
			s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		parts = append(parts, s)
	}
	return quote(strings.Join(parts, " "))
}

// shellQuote quotes s for re-parsing as one word; markers stay as bytes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func joinQuoted(argv []field) string {
	parts := make([]string, 0, len(argv))
	for _, f := range argv {
		parts = append(parts, shellQuote(f.s))
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
