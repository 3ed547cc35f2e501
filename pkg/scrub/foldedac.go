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
// A long text is walked as four parts side by side, in one loop: a byte
// costs a table look-up that depends on the one before, and independent
// chains of them overlap. Each part after the first starts from the state
// its maxLen-1 bytes before it lead to from the root: a state is the
// longest suffix of the bytes read that is a prefix of a pattern, at most
// maxLen bytes, so from the part's first byte on the state is the one a
// walk from the text's start has. A part's hits are held until those of
// the parts before it are reported.
//
// ws is the memory the walk's chains use (nil: allocated for this walk);
// the walk clears what it reuses.
func (a *foldedAC) walk(text string, once []bool, ws *walkScratch, fn func(end, n, pattern int)) {
	if ws == nil {
		ws = new(walkScratch)
	}
	q := len(text) / chains
	if q < splitFrom || q < a.maxLen {
		a.run(a.newChain(&ws.chains[0], once, fn, nil), text, 0, len(text), 0)
		return
	}
	var cs [chains]*chain
	held := &ws.held
	var st [chains]int
	for k := range cs {
		var h *[]acHit
		if k > 0 {
			held[k] = held[k][:0]
			h = &held[k]
			st[k] = a.run(nil, text, k*q-(a.maxLen-1), k*q, 0) // the state at the part's start
		}
		cs[k] = a.newChain(&ws.chains[k], once, fn, h)
	}
	for i := 0; i < q; {
		i = a.step4(text[:q], text[q:2*q], text[2*q:3*q], text[3*q:4*q], i, &st)
		if i == q {
			break
		}
		for k, s := range st {
			if s >= a.firstOut && !cs[k].quiet[s] {
				cs[k].quiet[s] = a.outputs(s, k*q+i, once, cs[k].out)
			}
		}
		i++
	}
	a.run(cs[chains-1], text, chains*q, len(text), st[chains-1]) // the bytes past the last part
	report := cs[0].out
	for _, hs := range held[1:] {
		for _, h := range hs {
			report(h.end, h.pattern)
		}
	}
}

// chains is how many parts of a long text walk reads side by side.
const chains = 4

// A chain is the reporting state of one part of a walk.
type chain struct {
	once  []bool
	quiet []bool // a state whose patterns are all once and reported
	done  []bool // a once pattern reported
	out   func(i, p int)
}

// A walkScratch is the memory of a walk's chains, kept between walks (a
// 64 KiB text's four chains hold a few thousand hits and a flag per
// state of the automaton each).
type walkScratch struct {
	chains [chains]chain
	held   [chains][]acHit
}

// cleared is b, or a new slice when b is too short, holding n false.
func cleared(b []bool, n int) []bool {
	if cap(b) < n {
		return make([]bool, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// newChain makes c (its slices reused) report to fn, or hold the hits in
// held when it is not nil.
func (a *foldedAC) newChain(c *chain, once []bool, fn func(end, n, pattern int), held *[]acHit) *chain {
	done := c.done
	c.once, c.quiet, c.done = once, cleared(c.quiet, len(a.own)), nil
	if once != nil {
		c.done = cleared(done, len(a.plen))
	}
	c.out = func(i, p int) {
		if c.done != nil {
			if c.done[p] {
				return
			}
			c.done[p] = once[p]
		}
		if held != nil {
			*held = append(*held, acHit{i, a.plen[p], p})
			return
		}
		fn(i, a.plen[p], p)
	}
	return c
}

// run walks text[from:to] from state s, reports to c (nil: to none), and
// returns the state it ends in.
func (a *foldedAC) run(c *chain, text string, from, to, s int) int {
	next, class, nc, firstOut := a.next, &a.class, a.nclass, a.firstOut
	for i := from; i < to; i++ {
		s = int(next[s*nc+int(class[text[i]])])
		if s >= firstOut && c != nil && !c.quiet[s] {
			c.quiet[s] = a.outputs(s, i, c.once, c.out)
		}
	}
	return s
}

// step4 walks x0..x3 (of one length) side by side from index i, the
// states in st, and returns the index of the byte after which one of them
// is in a state with output (st holds the states after it), or len(x0).
func (a *foldedAC) step4(x0, x1, x2, x3 string, i int, st *[chains]int) int {
	next, class, nc, firstOut := a.next, &a.class, a.nclass, a.firstOut
	s0, s1, s2, s3 := st[0], st[1], st[2], st[3]
	x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
	for ; i < len(x0); i++ {
		s0 = int(next[s0*nc+int(class[x0[i]])])
		s1 = int(next[s1*nc+int(class[x1[i]])])
		s2 = int(next[s2*nc+int(class[x2[i]])])
		s3 = int(next[s3*nc+int(class[x3[i]])])
		if max(s0, s1, s2, s3) >= firstOut {
			break
		}
	}
	st[0], st[1], st[2], st[3] = s0, s1, s2, s3
	return i
}

// splitFrom is the part length from which walk runs a text's parts side
// by side.
const splitFrom = 256

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
