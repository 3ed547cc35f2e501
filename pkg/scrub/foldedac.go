package scrub

// foldedAC finds strings in a text as Aho-Corasick does over the text's
// ASCII letters lowered (lowerASCII), without making the lowered copy: a
// DFA over classes of bytes, where an upper-case ASCII letter reads as its
// lower-case one. Every transition is precomputed (no failure links at
// search time), and its table is one slice indexed by state and class.
//
// States are numbered so that those where a pattern ends (or a suffix
// chain reaches one) come last, from firstOut on: most bytes cost a table
// look-up and one comparison.
type foldedAC struct {
	class  [256]uint16 // of each input byte, lowered
	nclass int
	next   []uint16 // next[state*nclass+class]
	// the pattern that ends at a state (-1: none), and the next state
	// on its suffix chain that has one (-1: none).
	own, dict []int32
	plen      []int // of each pattern
	maxLen    int   // the longest pattern's length
	firstOut  int
}

// newFoldedAC indexes patterns, which are searched as given (a pattern
// byte that is an upper-case ASCII letter never matches, as in a search of
// the lowered text). Patterns are distinct.
func newFoldedAC(patterns []string) *foldedAC {
	a := &foldedAC{}
	var classOf [256]uint16 // of each pattern byte; 0: in no pattern
	n := 1
	for _, p := range patterns {
		for i := 0; i < len(p); i++ {
			if classOf[p[i]] == 0 {
				classOf[p[i]] = uint16(n)
				n++
			}
		}
		a.plen = append(a.plen, len(p))
		a.maxLen = max(a.maxLen, len(p))
	}
	a.nclass = n
	for b := range 256 {
		c := byte(b)
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		a.class[b] = classOf[c]
	}
	// The trie, with 0 as "no edge" (the root is never a child).
	goTo := [][]uint32{make([]uint32, n)}
	a.own = []int32{-1}
	for pi, p := range patterns {
		s := uint32(0)
		for i := 0; i < len(p); i++ {
			c := classOf[p[i]]
			if goTo[s][c] == 0 {
				goTo = append(goTo, make([]uint32, n))
				a.own = append(a.own, -1)
				goTo[s][c] = uint32(len(goTo) - 1)
			}
			s = goTo[s][c]
		}
		a.own[s] = int32(pi)
	}
	states := len(goTo)
	if states > 1<<16 {
		panic("scrub: too many Aho-Corasick states for uint16")
	}
	fail := make([]uint32, states)
	dict := make([]int32, states)
	hasOut := make([]bool, states)
	next := make([]uint32, states*n)
	dict[0] = -1
	// Breadth first: a state's failure state is done before it.
	queue := []uint32{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for c := range n {
			t := goTo[s][c]
			if t == 0 {
				if s != 0 {
					next[int(s)*n+c] = next[int(fail[s])*n+c]
				}
				continue
			}
			next[int(s)*n+c] = t
			if s != 0 {
				fail[t] = next[int(fail[s])*n+c]
			}
			f := fail[t]
			if a.own[f] >= 0 {
				dict[t] = int32(f)
			} else {
				dict[t] = dict[f]
			}
			hasOut[t] = a.own[t] >= 0 || dict[t] >= 0
			queue = append(queue, t)
		}
	}
	// Class 0 (a byte in no pattern) leads every state to the root.
	// Renumber: the root (which has no output) stays 0, states with
	// output go last.
	id := make([]int32, states)
	k := int32(0)
	for _, out := range []bool{false, true} {
		for s := range states {
			if hasOut[s] == out {
				id[s] = k
				k++
			}
		}
		if !out {
			a.firstOut = int(k)
		}
	}
	a.next = make([]uint16, states*n)
	own := make([]int32, states)
	a.dict = make([]int32, states)
	for s := range states {
		for c := range n {
			a.next[int(id[s])*n+c] = uint16(id[next[s*n+c]])
		}
		own[id[s]] = a.own[s]
		a.dict[id[s]] = -1
		if dict[s] >= 0 {
			a.dict[id[s]] = id[dict[s]]
		}
	}
	a.own = own
	return a
}

// walk calls fn for every occurrence of a pattern in lowerASCII(text), in
// order of their ends (end is the index of the last byte, n the pattern's
// length), except for a pattern once holds true (nil: none), whose first
// occurrence only is reported.
//
// A long text is walked as two halves side by side, in one loop: a byte
// costs a table look-up that depends on the one before, and two
// independent chains of them run in about the time of one. The second half
// is walked from the root maxLen-1 bytes before it: a state is the longest
// suffix of the bytes read that is a prefix of a pattern, at most maxLen
// bytes, so from the half's first byte on the state is the one a walk from
// the text's start has. Its hits are held until the first half's are
// reported.
func (a *foldedAC) walk(text string, once []bool, fn func(end, n, pattern int)) {
	var done []bool
	// quiet: a state whose patterns are all once and reported (per half)
	quiet, heldQuiet := make([]bool, len(a.own)), make([]bool, len(a.own))
	if once != nil {
		done = make([]bool, len(a.plen))
	}
	report := func(i, p int) {
		if done != nil {
			if done[p] {
				return
			}
			done[p] = once[p]
		}
		fn(i, a.plen[p], p)
	}
	nc, firstOut := a.nclass, a.firstOut
	next, class := a.next, &a.class
	mid := len(text) / 2
	if mid < splitFrom || mid < a.maxLen {
		s := 0
		for i := 0; i < len(text); i++ {
			s = int(next[s*nc+int(class[text[i]])])
			if s >= firstOut && !quiet[s] {
				quiet[s] = a.outputs(s, i, once, report)
			}
		}
		return
	}
	var held []acHit // the second half's, reported after the first's
	var heldDone []bool
	if once != nil {
		heldDone = make([]bool, len(a.plen))
	}
	hold := func(i, p int) {
		if heldDone != nil {
			if heldDone[p] {
				return
			}
			heldDone[p] = once[p]
		}
		held = append(held, acHit{i, a.plen[p], p})
	}
	p0 := mid - (a.maxLen - 1)
	s, t := 0, 0
	for i := 0; i < mid; i++ {
		s = int(next[s*nc+int(class[text[i]])])
		t = int(next[t*nc+int(class[text[p0+i]])])
		if s >= firstOut && !quiet[s] {
			quiet[s] = a.outputs(s, i, once, report)
		}
		if t >= firstOut && p0+i >= mid && !heldQuiet[t] {
			heldQuiet[t] = a.outputs(t, p0+i, once, hold)
		}
	}
	for i := p0 + mid; i < len(text); i++ {
		t = int(next[t*nc+int(class[text[i]])])
		if t >= firstOut && !heldQuiet[t] {
			heldQuiet[t] = a.outputs(t, i, once, hold)
		}
	}
	for _, h := range held {
		report(h.end, h.pattern)
	}
}

// splitFrom is the half length from which walk runs two halves at once.
const splitFrom = 512

type acHit struct{ end, n, pattern int }

// outputs calls out for each pattern that ends at state s (text index i),
// and reports whether once holds all of them true (then none is to be
// reported again).
func (a *foldedAC) outputs(s, i int, once []bool, out func(i, p int)) bool {
	all := once != nil
	if p := a.own[s]; p >= 0 {
		out(i, int(p))
		all = all && once[p]
	}
	for u := a.dict[s]; u >= 0; u = a.dict[u] {
		p := a.own[u]
		out(i, int(p))
		all = all && once[p]
	}
	return all
}
