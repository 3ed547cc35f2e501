package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Field is one word of a command after static evaluation: quotes and
// escapes removed, known variables substituted, $IFS and unquoted
// expansions split. Unknown expansions leave a marker in S.
type Field struct {
	S        string
	Dyn      bool    // holds an expansion whose value is unknown
	Glob     bool    // holds unquoted glob characters
	Download bool    // holds the output of a command substitution that downloads
	Decoded  bool    // holds the output of a command substitution that decodes
	Proc     *Stream // the word is a process substitution <(…): what it reads
}

// maxBraceWords caps the words one brace expansion may produce.
const maxBraceWords = 4096

// args evaluates command words into fields, brace expansion first.
func (w *Walker) args(words []*syntax.Word, st *State, depth int) []Field {
	var out []Field
	for _, word := range words {
		if w.Stop() {
			return out
		}
		cp := *word
		if !syntax.SplitBraces(&cp) {
			out = append(out, w.word(&cp, st, depth)...)
			continue
		}
		n := 0
		for bw, err := range expand.BracesSeq(nil, &cp) {
			if err != nil || n == maxBraceWords {
				w.tooComplex(TooManyWords)
				break
			}
			n++
			out = append(out, w.word(bw, st, depth)...)
		}
	}
	return out
}

// one evaluates a word that is not split (a redirection target, an
// assignment value, a here-document) into a single field. quoted applies
// double-quote escaping rules (here-documents).
func (w *Walker) one(word *syntax.Word, st *State, depth int, quoted bool) Field {
	if word == nil {
		return Field{}
	}
	w.steps++
	e := &evaluator{w: w, st: st, depth: depth, noSplit: true}
	e.parts(word.Parts, quoted, true)
	e.flush(true)
	if len(e.out) == 0 {
		return Field{}
	}
	return e.out[0]
}

// word evaluates one word into zero or more fields.
func (w *Walker) word(word *syntax.Word, st *State, depth int) []Field {
	w.steps++
	e := &evaluator{w: w, st: st, depth: depth}
	e.parts(word.Parts, false, true)
	e.flush(false)
	return e.out
}

// evaluator evaluates one word.
type evaluator struct {
	w       *Walker
	st      *State
	depth   int
	noSplit bool // assignment-like context: no field splitting
	out     []Field
	cur     Field
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
		e.cur.S = e.b.String()
		e.out = append(e.out, e.cur)
	}
	if e.noSplit && len(e.out) > 1 {
		joined := e.out[0]
		for _, f := range e.out[1:] {
			joined = MergeField(joined, f)
			joined.S += " " + f.S
		}
		e.out = []Field{joined}
	}
	e.cur, e.started = Field{}, false
	e.b.Reset()
}

// MergeField is a with b's taint added (unknown parts, globs, downloaded
// or decoded content) and, when a has none, b's process substitution; the
// text stays a's.
func MergeField(a, b Field) Field {
	a.Dyn = a.Dyn || b.Dyn
	a.Glob = a.Glob || b.Glob
	a.Download = a.Download || b.Download
	a.Decoded = a.Decoded || b.Decoded
	if a.Proc == nil {
		a.Proc = b.Proc
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
		e.cur.Dyn = true
		e.text(val)
		return
	}
	if HasMeta(val) {
		e.cur.Glob = true
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
	e.cur.Dyn = true
	e.text(marker)
}

// home inserts the home directory: its path when known, else the marker
// (only meaningful at the start of a word).
func (e *evaluator) home() {
	if v, ok := e.st.Vars["HOME"]; ok {
		e.value(v, true)
		return
	}
	switch {
	case e.w.homeSet:
		e.text(e.w.home)
	case !e.started && e.b.Len() == 0:
		e.text(homeMarker)
	default:
		e.unknown(UnknownNonEmpty)
	}
}

func (e *evaluator) parts(parts []syntax.WordPart, quoted, first bool) {
	for i, part := range parts {
		if e.w.Stop() {
			return
		}
		switch x := part.(type) {
		case *syntax.Lit:
			v := x.Value
			if strings.ContainsAny(v, markers) {
				e.cur.Dyn = true // text re-parsed from an evaluated word
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
				e.cur.Dyn = true
			}
			if x.Dollar {
				v = AnsiC(v)
			}
			e.text(v)
		case *syntax.DblQuoted:
			e.started = true
			e.parts(x.Parts, true, false)
		case *syntax.ParamExp:
			e.param(x, quoted)
		case *syntax.CmdSubst:
			out := e.w.subshell(x.Stmts, e.st, e.depth)
			e.cur.Download = e.cur.Download || out.Download
			e.cur.Decoded = e.cur.Decoded || out.Decoded
			if out.Static != nil {
				e.split(strings.TrimRight(*out.Static, "\n"), quoted)
			} else {
				e.unknown(UnknownMaybeEmpty)
			}
		case *syntax.ArithmExp:
			e.w.substitutions(x, e.st, e.depth)
			e.unknown(UnknownNonEmpty)
		case *syntax.ProcSubst:
			out := e.w.subshell(x.Stmts, e.st, e.depth)
			e.cur.Proc = &out
			e.text("/dev/fd/63")
		case *syntax.ExtGlob:
			e.cur.Glob = true
			e.text(x.Op.String() + x.Pattern.Value + ")")
		default:
			e.w.substitutions(part, e.st, e.depth)
			e.unknown(UnknownMaybeEmpty)
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
	case user == "+" && e.st.Cwd != "":
		e.text(e.st.Cwd)
	case user == "+" || user == "-":
		e.unknown(UnknownNonEmpty)
	case user == "root":
		e.text("/root")
	case validUser(user):
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
			e.cur.Glob = true
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

// AnsiC decodes a $'…' string.
func AnsiC(v string) string {
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
	return Sanitize(s)
}

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isAlpha(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }
func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// validUser reports whether s may be a user name (~user).
func validUser(s string) bool {
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
		e.w.substitutions(pe, e.st, e.depth)
		if pe.Length {
			e.unknown(UnknownNonEmpty)
		} else {
			e.unknown(UnknownMaybeEmpty)
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
			e.unknown(UnknownNonEmpty)
		default:
			e.unknown(UnknownMaybeEmpty)
		}
		return
	}
	if name == "HOME" && !known {
		val, known = e.homeValue()
	}
	switch op := pe.Exp.Op; op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		if known && !val.Dyn && (val.S != "" || op == syntax.DefaultUnset || op == syntax.AssignUnset) {
			e.value(val, quoted)
			return
		}
		// Unknown: the default is the value to fear.
		def := e.sub(pe.Exp.Word)
		e.cur = MergeField(e.cur, def)
		e.cur.Dyn = e.cur.Dyn || !known
		e.split(def.S, quoted)
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		e.sub(pe.Exp.Word)
		if known && !val.Dyn {
			e.value(val, quoted)
		} else {
			e.unknown(UnknownNonEmpty)
		}
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		alt := e.sub(pe.Exp.Word)
		if known && !val.Dyn && (val.S != "" || op == syntax.AlternateUnset) {
			e.cur = MergeField(e.cur, alt)
			e.split(alt.S, quoted)
		} else if known && !val.Dyn {
			return
		} else {
			e.unknown(UnknownMaybeEmpty)
		}
	default:
		e.sub(pe.Exp.Word)
		e.unknown(UnknownMaybeEmpty)
	}
}

func (e *evaluator) homeValue() (Field, bool) {
	if e.w.homeSet {
		return Field{S: e.w.home}, true
	}
	return Field{}, false
}

// sub evaluates a word nested in an expansion, unsplit.
func (e *evaluator) sub(w *syntax.Word) Field {
	if w == nil {
		return Field{}
	}
	return e.w.one(w, e.st, e.depth, false)
}

// lookup returns a variable's value when it was assigned (it may still be
// dynamic) or is otherwise known.
func (e *evaluator) lookup(name string) (Field, bool) {
	st := e.st
	if n, err := strconv.Atoi(name); err == nil && n >= 1 {
		if !st.ArgsKnown {
			return Field{}, false
		}
		if n <= len(st.Args) {
			return st.Args[n-1], true
		}
		return Field{}, true
	}
	switch name {
	case "@", "*":
		if !st.ArgsKnown {
			return Field{}, false
		}
		return JoinFields(st.Args), true
	case "PWD":
		if st.Cwd != "" {
			return Field{S: st.Cwd}, true
		}
		return Field{}, false
	}
	v, ok := st.Vars[name]
	return v, ok
}

// value inserts a variable's value, keeping its taint.
func (e *evaluator) value(v Field, quoted bool) {
	e.cur.Dyn = e.cur.Dyn || v.Dyn
	e.cur.Download = e.cur.Download || v.Download
	e.cur.Decoded = e.cur.Decoded || v.Decoded
	e.split(v.S, quoted)
}
