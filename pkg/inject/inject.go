// Package inject inspects a tool's result before it enters an agent's
// context: Source tags where the result came from (a file of the project,
// the network, an MCP server, …) and Scan looks in its text for prompt
// injection — instructions addressed to the agent, role or rule overrides,
// chat-role and tool-call markup, hidden or bidirectional Unicode, phrases
// spelled with look-alike letters, in leetspeak or with split letters,
// encoded payloads that decode to such text, and markup that hides text
// from a human reader.
//
// Scan is deterministic pattern matching on a bounded amount of text; it
// judges nothing. What a finding means for the agent (warn, block, raise
// the session's level) is decided by the gatekeeper (services/gatekeeper,
// docs/firewall.md).
package inject

import (
	"encoding/binary"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/claimcheck/claimcheck/pkg/digest"
)

// Confidence grades a finding.
type Confidence int

// The grades. A result is flagged when a finding reaches Flag.
const (
	Low    Confidence = 1 // an injection pattern mentioned (quoted, in a code block), or a weak sign
	Medium Confidence = 2 // likely an injection
	High   Confidence = 3 // an injection pattern used, or text hidden from a human reader
	Flag              = Medium
)

func (c Confidence) String() string {
	switch c {
	case Low:
		return "low"
	case Medium:
		return "medium"
	case High:
		return "high"
	}
	return "none"
}

// A Finding is one suspicious span of the scanned text.
type Finding struct {
	Rule       string     // e.g. "override.ignore", "unicode.tags", "encoded.base64", "hidden.comment"
	Confidence Confidence // Low, Medium or High
	Start, End int        // byte offsets into the scanned text: text[Start:End] is flagged
	Digest     string     // digest.SHA256 of text[Start:End]
}

// Result is what Scan found.
type Result struct {
	Findings []Finding // ordered by Start, then Rule
	// Scanned is how many bytes were scanned; when it is less than the
	// text's length (Truncated), only the first Head and the last Tail
	// bytes were.
	Scanned   int
	Truncated bool
}

// Flagged reports whether a finding reaches Flag.
func (r Result) Flagged() bool { return r.Max() >= Flag }

// Max is the highest confidence of the findings (0 when there are none).
func (r Result) Max() Confidence {
	var m Confidence
	for _, f := range r.Findings {
		m = max(m, f.Confidence)
	}
	return m
}

// The bounds of a scan: a text longer than Head+Tail bytes is scanned in
// two windows, its first Head and its last Tail bytes (an injection is
// often appended to a long document), and the result says so.
const (
	Head = 192 << 10
	Tail = 64 << 10
	// maxDecoded bounds the bytes decoded from encoded runs per window.
	maxDecoded = 64 << 10
)

// Scan scans text for prompt injection.
func Scan(text string) Result {
	var r Result
	if len(text) <= Head+Tail {
		r.Findings = scanWindow(text, 0, len(text))
		r.Scanned = len(text)
	} else {
		h := runeStart(text, Head)
		t := runeStart(text, len(text)-Tail)
		r.Findings = append(scanWindow(text, 0, h), scanWindow(text, t, len(text))...)
		r.Scanned = h + len(text) - t
		r.Truncated = true
	}
	slices.SortFunc(r.Findings, func(a, b Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		if a.Rule < b.Rule {
			return -1
		}
		if a.Rule > b.Rule {
			return 1
		}
		return int(b.Confidence - a.Confidence)
	})
	r.Findings = slices.CompactFunc(r.Findings, func(a, b Finding) bool {
		return a.Rule == b.Rule && a.Start == b.Start && a.End == b.End
	})
	for i := range r.Findings {
		f := &r.Findings[i]
		f.Digest = digest.SHA256([]byte(text[f.Start:f.End]))
	}
	return r
}

// runeStart moves i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// scanWindow scans text[lo:hi]; offsets of its findings are into text.
func scanWindow(text string, lo, hi int) []Finding {
	w := text[lo:hi]
	// low is read only during this call, from a buffer kept between scans
	// (foldPool): nothing of it outlives the call (findings hold offsets,
	// rule names and digests of text), so the buffer can be reused. A
	// fresh 64 KiB fold per scan was a third of a gatekeeper inspection's
	// garbage.
	low := w
	buf := foldPool.Get().(*[]byte)
	defer foldPool.Put(buf)
	if b := foldTo((*buf)[:0], w); b != nil {
		*buf = b
		low = unsafe.String(unsafe.SliceData(b), len(b))
	}
	fences := fenced(low)
	fs, marks, splits := phrasesMarking(w, low, fences, true)
	if hasNonASCII(w) {
		fs = append(fs, confusablePhrases(w, fs)...)
	}
	fs = append(fs, leetPhrases(w, low, fences, fs)...)
	if splits != nil {
		fs = append(fs, splitPhrases(w, splits, fs)...)
	}
	fs = append(fs, invisible(w)...)
	fs = append(fs, hidden(w, low, fs, marks)...)
	fs = append(fs, encoded(w)...)
	for i := range fs {
		fs[i].Start += lo
		fs[i].End += lo
	}
	return fs
}

// foldPool holds the buffers scanWindow folds a window into.
var foldPool = sync.Pool{New: func() any { return new([]byte) }}

// fold lower-cases ASCII letters; every other byte stays, so offsets into
// the result are offsets into s. A text without upper-case letters is
// returned as it is.
func fold(s string) string {
	if b := foldTo(nil, s); b != nil {
		return string(b)
	}
	return s
}

// foldTo appends s, its ASCII letters lower-cased, to dst and returns it,
// or returns nil when s has no upper-case letter. It reads eight bytes at
// a time, and lowers the text past the first upper-case letter in place,
// a word at a time.
func foldTo(dst []byte, s string) []byte {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if upper8(leUint64(s[i:])) != 0 {
			break
		}
	}
	for i < len(s) && !isUpper(s[i]) {
		i++
	}
	if i == len(s) {
		return nil
	}
	from := len(dst)
	dst = append(dst, s...)
	c := dst[from+i:]
	k := 0
	for ; k+8 <= len(c); k += 8 {
		w := binary.LittleEndian.Uint64(c[k:])
		if u := upper8(w); u != 0 {
			binary.LittleEndian.PutUint64(c[k:], w|u>>2) // 0x80>>2: the bit that lowers A-Z
		}
	}
	for ; k < len(c); k++ {
		if isUpper(c[k]) {
			c[k] += 'a' - 'A'
		}
	}
	return dst
}

// upper8 has the high bit set in each byte of w that is an ASCII
// upper-case letter, and no other bit. No byte's sum carries into the next.
func upper8(w uint64) uint64 {
	const lo7, hi = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	h := w & lo7
	geA := h + 0x3f3f3f3f3f3f3f3f // high bit: h >= 'A' (0x41)
	gtZ := h + 0x2525252525252525 // high bit: h > 'Z' (0x5a)
	return geA &^ gtZ &^ w & hi
}

// leUint64 reads 8 bytes of s as binary.LittleEndian.Uint64 would.
func leUint64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
