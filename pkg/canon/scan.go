package canon

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// Member is one top-level member of an object ScanObject proved canonical.
type Member struct {
	// Name is the member's name as stored, without its quotes: ASCII
	// without escapes (ScanObject proves nothing for other names).
	Name []byte
	// Value is the member's value as stored.
	Value []byte
	// Start is the offset of the name's opening quote in the scanned
	// object; the member ends where Value ends.
	Start int
}

// maxScanDepth bounds the nesting ScanObject follows; deeper documents
// are left to Canonicalize.
const maxScanDepth = 64

// ScanObject reports whether raw is proved to be a JSON object in RFC 8785
// canonical form (Canonicalize(raw) would return raw unchanged), appending
// its top-level members to ms, in order. It reads raw once and allocates
// nothing beyond ms.
//
// It proves only the forms canonical entries take: member names of
// ASCII without escapes, integers of at most 15 digits (no
// fraction, no exponent, no -0), strings escaped as RFC 8785 escapes them
// (valid UTF-8), nesting up to 64 levels. For anything else, canonical or
// not, it returns false: false proves nothing, and the caller decides with
// Canonicalize. FuzzScanObject holds it to Canonicalize.
func ScanObject(raw []byte, ms []Member) ([]Member, bool) {
	s := scanner{b: raw}
	ms, ok := s.object(ms, true)
	return ms, ok && s.i == len(raw)
}

type scanner struct {
	b     []byte
	i     int
	depth int
}

// plain marks the ASCII string bytes that stand for themselves: all but
// the control characters, '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (s *scanner) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '{':
		_, ok := s.object(nil, false)
		return ok
	case '[':
		return s.array()
	case '"':
		return s.str()
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return s.number()
		}
		return false
	}
}

func (s *scanner) lit(l string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(l)) {
		return false
	}
	s.i += len(l)
	return true
}

// number accepts an integer of 1..15 digits without a leading zero, not
// -0: below 2^53, where RFC 8785's number form is the integer's digits.
func (s *scanner) number() bool {
	neg := s.b[s.i] == '-'
	if neg {
		s.i++
	}
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	d := s.i - start
	if d == 0 || d > 15 || s.b[start] == '0' && (d > 1 || neg) {
		return false
	}
	// A fraction or an exponent is left to Canonicalize.
	return s.i == len(s.b) || s.b[s.i] != '.' && s.b[s.i] != 'e' && s.b[s.i] != 'E'
}

// str accepts a string as RFC 8785 writes it: only '"', '\\' and the
// control characters escaped, \b \t \n \f \r in their short form, the
// other control characters as \u00xx (lower-case hex), valid UTF-8.
func (s *scanner) str() bool {
	b, i := s.b, s.i+1 // after the opening quote
	for i < len(b) {
		if i+8 <= len(b) {
			// Eight bytes at a time: on to the first that needs a look.
			if m := special(binary.LittleEndian.Uint64(b[i:])); m == 0 {
				i += 8
				continue
			} else {
				i += bits.TrailingZeros64(m) >> 3
			}
		}
		c := b[i]
		switch {
		case plain[c]:
			i++
		case c == '"':
			s.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !controlEscape(b[i+2:i+6]) {
					return false
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false // must be escaped
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return false
			}
			i += n
		}
	}
	return false
}

// special marks (with its high bit) the first of the eight bytes of x,
// little-endian, that is not plain: a control character, '"', '\\' or a
// byte of a multi-byte UTF-8 sequence; 0 when there is none. (Bytes after
// the first may be marked wrongly, by borrows.)
func special(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := x^('"'*ones), x^('\\'*ones) // zero bytes where x has '"', '\\'
	return (x | (x-0x20*ones)&^x | (q-ones)&^q | (bs-ones)&^bs) & highs
}

// controlEscape reports whether the four hex digits h of a \u escape are
// how RFC 8785 escapes a control character: 00xx, lower-case, below 0x20
// and none of those with a short form.
func controlEscape(h []byte) bool {
	if h[0] != '0' || h[1] != '0' || h[2] != '0' && h[2] != '1' {
		return false
	}
	var lo byte
	switch c := h[3]; {
	case c >= '0' && c <= '9':
		lo = c - '0'
	case c >= 'a' && c <= 'f':
		lo = c - 'a' + 10
	default:
		return false
	}
	x := (h[2]-'0')<<4 | lo
	return x != '\b' && x != '\t' && x != '\n' && x != '\f' && x != '\r'
}

// name reads a member name of ASCII without escapes or control
// characters, whose byte order is its UTF-16 order.
func (s *scanner) name() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for s.i = start; s.i < len(s.b) && plain[s.b[s.i]]; s.i++ {
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	n := s.b[start:s.i]
	s.i++
	return n, true
}

// object reads an object whose members are in strictly increasing order
// (sorted, no duplicates), appending them to ms when keep is set.
func (s *scanner) object(ms []Member, keep bool) ([]Member, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return ms, false
	}
	if s.depth++; s.depth > maxScanDepth {
		return ms, false
	}
	s.i++
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		s.depth--
		return ms, true
	}
	var prev []byte
	for first := true; ; first = false {
		start := s.i
		n, ok := s.name()
		if !ok || !first && bytes.Compare(prev, n) >= 0 {
			return ms, false
		}
		prev = n
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return ms, false
		}
		s.i++
		vstart := s.i
		if !s.value() {
			return ms, false
		}
		if keep {
			ms = append(ms, Member{Name: n, Value: s.b[vstart:s.i], Start: start})
		}
		if s.i >= len(s.b) {
			return ms, false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return ms, true
		default:
			return ms, false
		}
	}
}

func (s *scanner) array() bool {
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	s.i++ // '['
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if !s.value() || s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// ScanArray is ScanObject for an array: whether raw is proved to be a JSON
// array in RFC 8785 form, appending its elements (as stored) to vs.
func ScanArray(raw []byte, vs [][]byte) ([][]byte, bool) {
	s := scanner{b: raw}
	if len(raw) < 2 || raw[0] != '[' {
		return vs, false
	}
	s.depth, s.i = 1, 1
	if raw[1] == ']' {
		return vs, len(raw) == 2
	}
	for {
		start := s.i
		if !s.value() || s.i >= len(raw) {
			return vs, false
		}
		vs = append(vs, raw[start:s.i])
		switch raw[s.i] {
		case ',':
			s.i++
		case ']':
			return vs, s.i+1 == len(raw)
		default:
			return vs, false
		}
	}
}
