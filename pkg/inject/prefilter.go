package inject

import (
	"regexp"
	"regexp/syntax"
)

// A form is one of a phrase rule's expressions as tried at one anchor,
// with a prefilter that proves most non-matches without running it.
//
// The prefilter is the expression's program (regexp/syntax) run as a
// Thompson NFA over the bytes after the anchor, reading every empty-width
// assertion (^, $, \b) as true: it follows a superset of the threads the
// real matcher follows, so when all its threads die, the expression
// cannot match there. It gives up (and the expression runs) at a match, a
// non-ASCII byte, the end of the slice, or past a bound on its work.
type form struct {
	re   *regexp.Regexp
	prog *syntax.Prog
	// after is the set of rune instructions live once the anchor's bytes
	// are read; always, when the expression may match within the anchor.
	after  []uint32
	always bool
	// dead holds the ASCII bytes that kill every thread of after: the
	// first byte past the anchor, tested before any thread is stepped.
	dead [128]bool
}

// The prefilter's bounds: threads alive at once, and instructions stepped
// per try (about what the expression itself costs on a short slice).
const (
	maxThreads = 48
	maxSteps   = 384
)

// newForm compiles expr as its prefilter and reads anchor with it; ok is
// false when the expression cannot match text that starts with anchor.
func newForm(re *regexp.Regexp, anchor string) (f form, ok bool) {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		panic(err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		panic(err)
	}
	f = form{re: re, prog: prog}
	var set threads
	if !set.add(prog, uint32(prog.Start)) {
		f.always = true
		return f, true
	}
	for i := 0; i < len(anchor); i++ {
		if set.matched {
			f.always = true
			return f, true
		}
		var next threads
		if !set.step(prog, anchor[i], &next, nil) {
			f.always = true
			return f, true
		}
		set = next
	}
	if set.matched {
		f.always = true
		return f, true
	}
	if set.n == 0 {
		return f, false
	}
	f.after = append([]uint32(nil), set.pc[:set.n]...)
	for c := range f.dead {
		var next threads
		f.dead[c] = set.step(prog, byte(c), &next, nil) && !next.matched && next.n == 0
	}
	return f, true
}

// mayMatch reports whether f's expression may match s, which starts with
// the anchor's n bytes: false only when the prefilter proves it cannot.
func (f *form) mayMatch(s string, n int) bool {
	if f.always {
		return true
	}
	if n < len(s) && s[n] < 0x80 && f.dead[s[n]] {
		return false
	}
	var a, b threads
	a.n = copy(a.pc[:], f.after)
	cur, next := &a, &b
	steps := 0
	for i := n; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return true
		}
		next.n, next.matched = 0, false
		if !cur.step(f.prog, c, next, &steps) || next.matched || steps > maxSteps {
			return true
		}
		if next.n == 0 {
			return false
		}
		cur, next = next, cur
	}
	return true // alive at the end of the slice: $ or \b may hold there
}

// threads is a set of rune instructions, in no order.
type threads struct {
	pc      [maxThreads]uint32
	n       int
	matched bool // a Match instruction was reached
}

// add adds pc's closure: the rune instructions reached from it without
// reading a byte, every empty-width assertion taken as true. It returns
// false when the set overflows.
func (t *threads) add(prog *syntax.Prog, pc uint32) bool {
	var stack [maxThreads]uint32
	sp := 0
	stack[sp] = pc
	sp++
	for sp > 0 {
		sp--
		pc := stack[sp]
		inst := &prog.Inst[pc]
		switch inst.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			if sp+2 > len(stack) {
				return false
			}
			stack[sp], stack[sp+1] = inst.Arg, inst.Out
			sp += 2
		case syntax.InstCapture, syntax.InstEmptyWidth, syntax.InstNop:
			stack[sp] = inst.Out
			sp++
		case syntax.InstMatch:
			t.matched = true
		case syntax.InstFail:
		default: // the rune instructions
			dup := false
			for _, p := range t.pc[:t.n] {
				if p == pc {
					dup = true
					break
				}
			}
			if dup {
				continue
			}
			if t.n == len(t.pc) {
				return false
			}
			t.pc[t.n] = pc
			t.n++
		}
	}
	return true
}

// step reads the ASCII byte c: next gets the closures of the threads that
// take it. It returns false when next overflows; steps, when not nil,
// counts the instructions tried.
func (t *threads) step(prog *syntax.Prog, c byte, next *threads, steps *int) bool {
	r := rune(c)
	for _, pc := range t.pc[:t.n] {
		inst := &prog.Inst[pc]
		var ok bool
		switch inst.Op {
		case syntax.InstRune1:
			ok = inst.Rune[0] == r || syntax.Flags(inst.Arg)&syntax.FoldCase != 0 && inst.MatchRune(r)
		case syntax.InstRune:
			ok = inst.MatchRune(r)
		case syntax.InstRuneAny:
			ok = true
		case syntax.InstRuneAnyNotNL:
			ok = r != '\n'
		}
		if steps != nil {
			*steps++
		}
		if ok && !next.add(prog, inst.Out) {
			return false
		}
	}
	return true
}
