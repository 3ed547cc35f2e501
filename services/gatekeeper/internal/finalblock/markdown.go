package finalblock

import "strings"

// fence is the opening fence of a fenced code block.
type fence struct {
	char   byte // '`' or '~'
	n      int  // length of the run of fence characters
	indent int  // columns of indentation before it
}

// candidate is a fenced block whose info string names a final block.
type candidate struct {
	name    string
	fence   fence
	content []byte // at most MaxBlockBytes+1 bytes are kept
	size    int    // bytes between the fences
	closed  bool
}

// scanned is a message split into prose and final-block candidates.
type scanned struct {
	prose  string
	blocks []candidate
	codes  []string // contents of the prose's code spans, in order
}

// scan walks the message line by line, in one pass: fenced code blocks and
// blockquote lines are set aside (fenced blocks named claimcheck or
// brian_final are kept as candidates), every other line goes to the prose
// with its inline code spans replaced by CodePlaceholder. Where lines were
// set aside the prose has a blank line, so that sentences on either side do
// not run together.
func scan(msg string) scanned {
	var (
		s       scanned
		b       strings.Builder
		open    fence
		inFence bool
		cur     *candidate // the candidate being read, when the open fence is one
		lines   int        // prose lines written
		gap     bool       // lines set aside since the last prose line
		blank   bool       // the last prose line was blank
		sp      spanScratch
	)
	b.Grow(len(msg))
	for start := 0; start <= len(msg); {
		line, next := msg[start:], len(msg)+1
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], start+i+1
		}
		start = next
		line = strings.TrimSuffix(line, "\r")

		if inFence {
			gap = true
			if open.closes(line) {
				inFence = false
				if cur != nil {
					cur.closed = true
					cur = nil
				}
				continue
			}
			if cur != nil {
				cur.size += len(line) + 1
				if len(cur.content) <= MaxBlockBytes {
					cur.content = append(append(cur.content, line...), '\n')
				}
			}
			continue
		}
		cols, i := indentOf(line)
		if i < len(line) && line[i] == '>' {
			gap = true
			continue
		}
		if f, info, ok := openFence(line, cols, i); ok {
			gap, open, inFence = true, f, true
			if name := finalName(info); name != "" {
				s.blocks = append(s.blocks, candidate{name: name, fence: f})
				cur = &s.blocks[len(s.blocks)-1]
			}
			continue
		}
		if lines > 0 {
			b.WriteByte('\n')
			if gap && !blank {
				b.WriteByte('\n')
			}
		}
		gap, blank = false, strings.Trim(line, " \t") == ""
		lines++
		sp.write(&b, line, &s.codes)
	}
	s.prose = strings.Trim(b.String(), "\n")
	return s
}

// indentOf returns the columns of leading blanks (a tab advances to the next
// multiple of four) and the index of the first other byte.
func indentOf(line string) (cols, i int) {
	for ; i < len(line); i++ {
		switch line[i] {
		case ' ':
			cols++
		case '\t':
			cols += 4 - cols%4
		default:
			return cols, i
		}
	}
	return cols, i
}

// openFence reports whether the line, whose first non-blank byte is at i,
// opens a fenced code block, and returns the first word of its info string.
func openFence(line string, cols, i int) (fence, string, bool) {
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return fence{}, "", false
	}
	c := line[i]
	n := runOf(line[i:], c)
	if n < 3 {
		return fence{}, "", false
	}
	info := strings.Trim(line[i+n:], " \t")
	if c == '`' && strings.IndexByte(info, '`') >= 0 {
		return fence{}, "", false // ```x``` is inline code, not a fence
	}
	if j := strings.IndexAny(info, " \t"); j >= 0 {
		info = info[:j]
	}
	return fence{char: c, n: n, indent: cols}, info, true
}

// closes reports whether the line closes a block opened by f: the same
// character, at least as many, nothing after but blanks.
func (f fence) closes(line string) bool {
	cols, i := indentOf(line)
	if cols > f.indent+3 || i >= len(line) || line[i] != f.char {
		return false
	}
	n := runOf(line[i:], f.char)
	return n >= f.n && strings.Trim(line[i+n:], " \t") == ""
}

func runOf(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// finalName returns the canonical name when an info string names a final
// block, "" otherwise.
func finalName(info string) string {
	switch {
	case strings.EqualFold(info, InfoString):
		return InfoString
	case strings.EqualFold(info, LegacyInfoString):
		return LegacyInfoString
	}
	return ""
}

// spanScratch holds buffers reused across lines by write.
type spanScratch struct {
	starts, lens, next []int
	last               map[int]int
}

// write copies a prose line to b with each inline code span replaced by
// CodePlaceholder, and appends the contents of the spans to codes.
func (sp *spanScratch) write(b *strings.Builder, line string, codes *[]string) {
	pos := 0
	sp.spans(line, func(s, e, n int) {
		b.WriteString(line[pos:s])
		b.WriteString(CodePlaceholder)
		*codes = append(*codes, strings.TrimSpace(line[s+n:e-n]))
		pos = e
	})
	b.WriteString(line[pos:])
}

// spans calls fn, in order, with each inline code span of a line: its
// bytes [s, e) and the length n of its backtick runs. A code span
// (CommonMark) opens with a run of n backticks and closes at the next run
// of exactly n backticks; a run with no partner is literal text. Linear:
// the partner of every run is found in one backward pass.
func (sp *spanScratch) spans(line string, fn func(s, e, n int)) {
	if strings.Count(line, "`") < 2 {
		return
	}
	sp.starts, sp.lens = sp.starts[:0], sp.lens[:0]
	for i := 0; i < len(line); {
		if line[i] != '`' {
			i++
			continue
		}
		n := runOf(line[i:], '`')
		sp.starts, sp.lens = append(sp.starts, i), append(sp.lens, n)
		i += n
	}
	if sp.last == nil {
		sp.last = make(map[int]int)
	}
	clear(sp.last)
	sp.next = sp.next[:0]
	for range sp.starts {
		sp.next = append(sp.next, -1)
	}
	for k := len(sp.starts) - 1; k >= 0; k-- {
		if j, ok := sp.last[sp.lens[k]]; ok {
			sp.next[k] = j
		}
		sp.last[sp.lens[k]] = k
	}
	for k := 0; k < len(sp.starts); {
		j := sp.next[k]
		if j < 0 {
			k++
			continue
		}
		fn(sp.starts[k], sp.starts[j]+sp.lens[j], sp.lens[k])
		k = j + 1
	}
}
