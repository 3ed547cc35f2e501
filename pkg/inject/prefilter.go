package inject

import (
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"slices"
	"sync"
)

// A form is one of a phrase rule's expressions as tried at one anchor,
// with a prefilter that proves most non-matches without running it.
//
// The prefilter is the expression's program (regexp/syntax) run as a
// Thompson NFA over the bytes after the anchor, reading every empty-width
// assertion (^, $, \b) as true: it follows a superset of the threads the
// real matcher follows, so when all its threads die, the expression
// cannot match there. It gives up (and the expression runs) at a match, a
// non-ASCII byte, the end of the slice, or when its threads or states
// overflow. Its sets of threads are cached as the states of a DFA, built
// as texts need them, so that a byte costs a table look-up.
type form struct {
	re   *regexp.Regexp
	prog *syntax.Prog
	// always, when the expression may match within the anchor
	always bool
	// dead holds the ASCII bytes that kill every thread live once the
	// anchor's bytes are read: the first byte past the anchor, tested
	// before the DFA.
	dead [128]bool
	dfa  *dfa
}

// A dfa caches sets of threads (its first one: those live after the
// anchor) and the set each ASCII byte leads to.
type dfa struct {
	mu     sync.Mutex
	states []dfaState
	index  map[string]int16 // a state's threads, sorted, as bytes
}

type dfaState struct {
	threads []uint32
	next    [128]int16 // 0: not built yet; dfaDead, dfaGiveUp, or 1 + a state
}

const (
	dfaDead   = -1
	dfaGiveUp = -2
	// maxStates bounds a form's DFA (each state is 256 bytes of table).
	maxStates = 256
	// maxThreads bounds the threads alive at once.
	maxThreads = 48
)

// compileProg compiles re's expression as regexp does, for the prefilter.
func compileProg(re *regexp.Regexp) *syntax.Prog {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		panic(err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		panic(err)
	}
	return prog
}

// newForm reads anchor with the prefilter of re (its program prog); ok is
// false when the expression cannot match text that starts with anchor.
func newForm(re *regexp.Regexp, prog *syntax.Prog, anchor string) (f form, ok bool) {
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
		if !set.step(prog, anchor[i], &next) {
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
	f.dfa = &dfa{index: map[string]int16{}}
	f.dfa.state(set.pc[:set.n])
	for c := range f.dead {
		var next threads
		f.dead[c] = set.step(prog, byte(c), &next) && !next.matched && next.n == 0
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
	d := f.dfa
	d.mu.Lock()
	defer d.mu.Unlock()
	st := 0
	for i := n; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return true
		}
		t := d.states[st].next[c]
		if t == 0 {
			t = d.build(f.prog, st, c)
			d.states[st].next[c] = t
		}
		switch t {
		case dfaDead:
			return false
		case dfaGiveUp:
			return true
		}
		st = int(t - 1)
	}
	return true // alive at the end of the slice: $ or \b may hold there
}

// build steps state st's threads over c: the transition's value.
func (d *dfa) build(prog *syntax.Prog, st int, c byte) int16 {
	var cur, next threads
	cur.n = copy(cur.pc[:], d.states[st].threads)
	if !cur.step(prog, c, &next) || next.matched {
		return dfaGiveUp
	}
	if next.n == 0 {
		return dfaDead
	}
	return d.state(next.pc[:next.n])
}

// state returns 1 + the index of the state of threads, added when new, or
// dfaGiveUp when the DFA is full.
func (d *dfa) state(threads []uint32) int16 {
	t := slices.Clone(threads)
	slices.Sort(t)
	key := make([]byte, 0, 4*len(t))
	for _, pc := range t {
		key = binary.LittleEndian.AppendUint32(key, pc)
	}
	if i, ok := d.index[string(key)]; ok {
		return i + 1
	}
	if len(d.states) == maxStates {
		return dfaGiveUp
	}
	d.states = append(d.states, dfaState{threads: t})
	i := int16(len(d.states) - 1)
	d.index[string(key)] = i
	return i + 1
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
// take it. It returns false when next overflows.
func (t *threads) step(prog *syntax.Prog, c byte, next *threads) bool {
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
		if ok && !next.add(prog, inst.Out) {
			return false
		}
	}
	return true
}
