package pretool

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// field is one word of a command after static evaluation: quotes and
// escapes removed, known variables substituted, $IFS and unquoted
// expansions split. Unknown expansions leave a marker in s.
type field struct {
	s        string
	dyn      bool    // holds an expansion whose value is unknown
	glob     bool    // holds unquoted glob characters
	download bool    // holds the output of a command substitution that downloads
	decoded  bool    // holds the output of a command substitution that decodes
	proc     *stream // the word is a process substitution <(…): what it reads
}

// maxBraceWords caps the words one brace expansion may produce.
const maxBraceWords = 4096

// args evaluates command words into fields, brace expansion first.
func (a *analysis) args(words []*syntax.Word, st *state, depth int) []field {
	var out []field
	for _, w := range words {
		if a.stop() {
			return out
		}
		cp := *w
		if !syntax.SplitBraces(&cp) {
			out = append(out, a.word(&cp, st, depth)...)
			continue
		}
		n := 0
		for bw, err := range expand.BracesSeq(nil, &cp) {
			if err != nil || n == maxBraceWords {
				a.tooComplex(msgTooManyWords)
				break
			}
			n++
			out = append(out, a.word(bw, st, depth)...)
		}
	}
	return out
}

// one evaluates a word that is not split (a redirection target, an
// assignment value, a here-document) into a single field. quoted applies
// double-quote escaping rules (here-documents).
func (a *analysis) one(w *syntax.Word, st *state, depth int, quoted bool) field {
	if w == nil {
		return field{}
	}
	a.steps++
	e := &evaluator{a: a, st: st, depth: depth, noSplit: true}
	e.parts(w.Parts, quoted, true)
	e.flush(true)
	if len(e.out) == 0 {
		return field{}
	}
	return e.out[0]
}

// word evaluates one word into zero or more fields.
func (a *analysis) word(w *syntax.Word, st *state, depth int) []field {
	a.steps++
	e := &evaluator{a: a, st: st, depth: depth}
	e.parts(w.Parts, false, true)
	e.flush(false)
	return e.out
}

type evaluator struct {
	a       *analysis
	st      *state
	depth   int
	noSplit bool // assignment-like context: no field splitting
	out     []field
	cur     field
	started bool
	b       strings.Builder
}

func (e *evaluator) text(s string) {
	e.b.WriteString(s)
	e.started = true
}

// flush ends the current field; keep keeps it even when empty.
func (e *evaluator) flush(keep bool) {
	if e.started || keep {
		e.cur.s = e.b.String()
		e.out = append(e.out, e.cur)
	}
	if e.noSplit && len(e.out) > 1 {
		joined := e.out[0]
		for _, f := range e.out[1:] {
			joined = mergeField(joined, f)
			joined.s += " " + f.s
		}
		e.out = []field{joined}
	}
	e.cur, e.started = field{}, false
	e.b.Reset()
}

func mergeField(a, b field) field {
	a.dyn = a.dyn || b.dyn
	a.glob = a.glob || b.glob
	a.download = a.download || b.download
	a.decoded = a.decoded || b.decoded
	if a.proc == nil {
		a.proc = b.proc
	}
	return a
}

// split inserts an expansion's value: unquoted values are split into
// fields on blanks (default $IFS); after an assignment to IFS the split is
// unknown.
func (e *evaluator) split(val string, quoted bool) {
	if quoted || e.noSplit {
		e.text(val)
		return
	}
	if e.st.ifsDirty {
		e.cur.dyn = true
		e.text(val)
		return
	}
	if hasMeta(val) {
		e.cur.glob = true
	}
	pieces := strings.FieldsFunc(val, isBlank)
	if len(pieces) == 0 {
		if val != "" {
			e.flush(false)
		}
		return
	}
	if isBlank(rune(val[0])) {
		e.flush(false)
	}
	for i, p := range pieces {
		if i > 0 {
			e.flush(false)
		}
		e.text(p)
	}
	if isBlank(rune(val[len(val)-1])) {
		e.flush(false)
	}
}

func isBlank(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }

func (e *evaluator) unknown(marker string) {
	e.cur.dyn = true
	e.text(marker)
}

// home inserts the home directory: its path when known, else the marker
// (only meaningful at the start of a word).
func (e *evaluator) home() {
	if v, ok := e.st.vars["HOME"]; ok {
		e.value(v, true)
		return
	}
	switch {
	case e.a.ctx.homeSet:
		e.text(e.a.ctx.home)
	case !e.started && e.b.Len() == 0:
		e.text(homeMarker)
	default:
		e.unknown(unknownNonEmpty)
	}
}

func (e *evaluator) parts(parts []syntax.WordPart, quoted, first bool) {
	for i, part := range parts {
		if e.a.stop() {
			return
		}
		switch x := part.(type) {
		case *syntax.Lit:
			v := x.Value
			if strings.ContainsAny(v, markers) {
				e.cur.dyn = true // text re-parsed from an evaluated word
			}
			if quoted {
				e.text(unescapeDouble(v))
				continue
			}
			if first && i == 0 && strings.HasPrefix(v, "~") {
				v = e.tilde(v)
			}
			e.unquotedLit(v)
		case *syntax.SglQuoted:
			v := x.Value
			if strings.ContainsAny(v, markers) {
				e.cur.dyn = true
			}
			if x.Dollar {
				v = ansiC(v)
			}
			e.text(v)
		case *syntax.DblQuoted:
			e.started = true
			e.parts(x.Parts, true, false)
		case *syntax.ParamExp:
			e.param(x, quoted)
		case *syntax.CmdSubst:
			out := e.a.subshell(x.Stmts, e.st, e.depth)
			e.cur.download = e.cur.download || out.download
			e.cur.decoded = e.cur.decoded || out.decoded
			if out.static != nil {
				e.split(strings.TrimRight(*out.static, "\n"), quoted)
			} else {
				e.unknown(unknownMaybeEmpty)
			}
		case *syntax.ArithmExp:
			e.a.substitutions(x, e.st, e.depth)
			e.unknown(unknownNonEmpty)
		case *syntax.ProcSubst:
			out := e.a.subshell(x.Stmts, e.st, e.depth)
			e.cur.proc = &out
			e.text("/dev/fd/63")
		case *syntax.ExtGlob:
			e.cur.glob = true
			e.text(x.Op.String() + x.Pattern.Value + ")")
		default:
			e.a.substitutions(part, e.st, e.depth)
			e.unknown(unknownMaybeEmpty)
		}
	}
}

// tilde expands a leading ~, ~user, ~+ or ~- up to the first slash.
func (e *evaluator) tilde(v string) string {
	prefix, rest, _ := strings.Cut(v, "/")
	if rest != "" || strings.Contains(v, "/") {
		rest = "/" + rest
	}
	switch user := prefix[1:]; {
	case user == "":
		e.home()
	case user == "+" && e.st.cwd != "":
		e.text(e.st.cwd)
	case user == "+" || user == "-":
		e.unknown(unknownNonEmpty)
	case user == "root":
		e.text("/root")
	case validName(user):
		e.text("/home/" + user)
	default:
		return v
	}
	return rest
}

// unquotedLit removes backslash escapes and notes glob characters.
func (e *evaluator) unquotedLit(v string) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			if v[i] != '\n' {
				b.WriteByte(v[i])
			}
		case c == '*' || c == '?' || c == '[':
			e.cur.glob = true
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	e.text(b.String())
}

// unescapeDouble removes the escapes that are special inside double quotes.
func unescapeDouble(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			i++
			if v[i] != '\n' {
				b.WriteByte(v[i])
			}
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// ansiC decodes a $'…' string.
func ansiC(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = v[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			j := i + 1
			for j < len(v) && j-i-1 < max && isHex(v[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			n, _ := strconv.ParseUint(v[i+1:j], 16, 32)
			if c == 'x' {
				b.WriteByte(byte(n))
			} else if utf8.ValidRune(rune(n)) {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case 'c':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i] & 0x1f)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(v) && j-i < 3 && v[j] >= '0' && v[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(v[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			if c != '\\' && c != '\'' && c != '"' && c != '?' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
	}
	// Bash ends a $'…' string at a NUL; the marker bytes may not be forged.
	s, _, _ := strings.Cut(b.String(), "\x00")
	return sanitize(s)
}

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !isAlpha(c) && (i == 0 || !isDigit(c) && c != '-' && c != '.') {
			return false
		}
	}
	return true
}

// param evaluates a parameter expansion.
func (e *evaluator) param(pe *syntax.ParamExp, quoted bool) {
	name := ""
	if pe.Param != nil {
		name = pe.Param.Value
	}
	simple := pe.Param != nil && !pe.Excl && !pe.Length && !pe.Width && !pe.IsSet && pe.Index == nil &&
		pe.Slice == nil && pe.Repl == nil && pe.Names == 0 && pe.NestedParam == nil && len(pe.Modifiers) == 0
	if !simple {
		e.a.substitutions(pe, e.st, e.depth)
		if pe.Length {
			e.unknown(unknownNonEmpty)
		} else {
			e.unknown(unknownMaybeEmpty)
		}
		return
	}
	val, known := e.lookup(name)
	if pe.Exp == nil {
		switch {
		case name == "IFS" && !quoted && !e.noSplit && !e.st.ifsDirty:
			e.flush(false) // ${IFS} unquoted separates words
		case name == "HOME" && !known:
			e.home()
		case known:
			e.value(val, quoted)
		case name == "#" || name == "?" || name == "$" || name == "!" || name == "0" || name == "-":
			e.unknown(unknownNonEmpty)
		default:
			e.unknown(unknownMaybeEmpty)
		}
		return
	}
	if name == "HOME" && !known {
		val, known = e.homeValue()
	}
	switch op := pe.Exp.Op; op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		if known && !val.dyn && (val.s != "" || op == syntax.DefaultUnset || op == syntax.AssignUnset) {
			e.value(val, quoted)
			return
		}
		// Unknown: the default is the value to fear.
		def := e.sub(pe.Exp.Word)
		e.cur = mergeField(e.cur, def)
		e.cur.dyn = e.cur.dyn || !known
		e.split(def.s, quoted)
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		e.sub(pe.Exp.Word)
		if known && !val.dyn {
			e.value(val, quoted)
		} else {
			e.unknown(unknownNonEmpty)
		}
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		alt := e.sub(pe.Exp.Word)
		if known && !val.dyn && (val.s != "" || op == syntax.AlternateUnset) {
			e.cur = mergeField(e.cur, alt)
			e.split(alt.s, quoted)
		} else if known && !val.dyn {
			return
		} else {
			e.unknown(unknownMaybeEmpty)
		}
	default:
		e.sub(pe.Exp.Word)
		e.unknown(unknownMaybeEmpty)
	}
}

func (e *evaluator) homeValue() (field, bool) {
	if e.a.ctx.homeSet {
		return field{s: e.a.ctx.home}, true
	}
	return field{}, false
}

// sub evaluates a word nested in an expansion, unsplit.
func (e *evaluator) sub(w *syntax.Word) field {
	if w == nil {
		return field{}
	}
	return e.a.one(w, e.st, e.depth, false)
}

// lookup returns a variable's value when it was assigned (it may still be
// dynamic) or is otherwise known.
func (e *evaluator) lookup(name string) (field, bool) {
	st := e.st
	if n, err := strconv.Atoi(name); err == nil && n >= 1 {
		if !st.argsKnown {
			return field{}, false
		}
		if n <= len(st.args) {
			return st.args[n-1], true
		}
		return field{}, true
	}
	switch name {
	case "@", "*":
		if !st.argsKnown {
			return field{}, false
		}
		return joinFields(st.args), true
	case "PWD":
		if st.cwd != "" {
			return field{s: st.cwd}, true
		}
		return field{}, false
	}
	v, ok := st.vars[name]
	return v, ok
}

// value inserts a variable's value, keeping its taint.
func (e *evaluator) value(v field, quoted bool) {
	e.cur.dyn = e.cur.dyn || v.dyn
	e.cur.download = e.cur.download || v.download
	e.cur.decoded = e.cur.decoded || v.decoded
	e.split(v.s, quoted)
}
