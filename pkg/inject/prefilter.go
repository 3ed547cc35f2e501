package inject

import (
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"slices"
	"sync"
	"sync/atomic"
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
// anchor) and the set each ASCII byte leads to. Scans read it without a
// lock; a missing transition is built under mu and published, its state
// first (a new list of the states, stored atomically), then the
// transition (an atomic store), so a scan that reads the transition finds
// the state. A scan of the benchmark's page runs about 1,200 prefilters:
// the lock each took was 7% of its CPU profile.
type dfa struct {
	mu     sync.Mutex                  // held to add a state or a transition
	states atomic.Pointer[[]*dfaState] // replaced, never changed, when a state is added
	index  map[string]int16            // a state's threads, sorted, as bytes (under mu)
}

type dfaState struct {
	threads []uint32          // never changed once the state is published
	next    [128]atomic.Int32 // 0: not built yet; dfaDead, dfaGiveUp, or 1 + a state
}

const (
	dfaDead   = -1
	dfaGiveUp = -2
	// maxStates bounds a form's DFA (each state is 512 bytes of table).
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
	f.dfa.mu.Lock()
	f.dfa.state(set.pc[:set.n])
	f.dfa.mu.Unlock()
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
	states := *d.states.Load()
	st := states[0]
	for i := n; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return true
		}
		t := st.next[c].Load()
		if t == 0 {
			t = d.build(f.prog, st, c)
		}
		switch t {
		case dfaDead:
			return false
		case dfaGiveUp:
			return true
		}
		if int(t) > len(states) { // added since this call read the list
			states = *d.states.Load()
		}
		st = states[t-1]
	}
	return true // alive at the end of the slice: $ or \b may hold there
}

// build steps the threads of state st over c and publishes the
// transition: its value, as another scan may have built it meanwhile.
func (d *dfa) build(prog *syntax.Prog, st *dfaState, c byte) int32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t := st.next[c].Load(); t != 0 {
		return t
	}
	var cur, next threads
	cur.n = copy(cur.pc[:], st.threads)
	var t int32
	switch {
	case !cur.step(prog, c, &next) || next.matched:
		t = dfaGiveUp
	case next.n == 0:
		t = dfaDead
	default:
		t = d.state(next.pc[:next.n])
	}
	st.next[c].Store(t)
	return t
}

// state returns 1 + the index of the state of threads, added and
// published when new, or dfaGiveUp when the DFA is full. d.mu is held.
func (d *dfa) state(threads []uint32) int32 {
	t := slices.Clone(threads)
	slices.Sort(t)
	key := make([]byte, 0, 4*len(t))
	for _, pc := range t {
		key = binary.LittleEndian.AppendUint32(key, pc)
	}
	if i, ok := d.index[string(key)]; ok {
		return int32(i) + 1
	}
	var states []*dfaState
	if p := d.states.Load(); p != nil {
		states = *p
	}
	if len(states) == maxStates {
		return dfaGiveUp
	}
	states = append(states[:len(states):len(states)], &dfaState{threads: t})
	d.states.Store(&states)
	d.index[string(key)] = int16(len(states) - 1)
	return int32(len(states))
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
