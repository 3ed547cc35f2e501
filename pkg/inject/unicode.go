package inject

import (
	"unicode/utf8"
)

// The invisible characters:
//   - the tags block (U+E0000–U+E007F) mirrors ASCII invisibly; outside an
//     emoji flag sequence (U+1F3F4 then tags then U+E007F) it is High;
//   - bidirectional embeddings, overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069) reorder what a reader sees: Medium;
//   - zero-width characters (U+200B–U+200D, U+2060–U+2064, U+FEFF past the
//     start, U+180E): a run of three or more is Medium (eight or more High:
//     enough to encode bits); a single one is left to the emoji and scripts
//     that join with them.
//
// Then the text is read again with the invisible characters removed and tag
// characters turned into the ASCII they mirror, and the phrase rules run on
// it: "ig\u200bnore previous instructions" is an override.
func invisible(w string) []Finding {
	var out []Finding
	type cut struct{ s, e int }
	var drop []cut // invisible runes, in order
	hid := false
	prevFlag := false
	for i := 0; i < len(w); {
		c := w[i]
		if c < 0x80 {
			i++
			for i+8 <= len(w) && ascii8(w[i:i+8]) {
				i += 8
			}
			prevFlag = false
			continue
		}
		r, n := utf8.DecodeRuneInString(w[i:])
		switch {
		case r >= 0xE0000 && r <= 0xE007F:
			j := i
			for j < len(w) {
				r2, n2 := utf8.DecodeRuneInString(w[j:])
				if r2 < 0xE0000 || r2 > 0xE007F {
					break
				}
				j += n2
			}
			last, _ := utf8.DecodeLastRuneInString(w[i:j])
			if !prevFlag || last != 0xE007F {
				out = append(out, Finding{Rule: "unicode.tags", Confidence: High, Start: i, End: j})
				hid = true
			}
			drop = append(drop, cut{i, j})
			i = j
			prevFlag = false
			continue
		case isBidi(r):
			j := i + n
			for j < len(w) {
				r2, n2 := utf8.DecodeRuneInString(w[j:])
				if !isBidi(r2) {
					break
				}
				j += n2
			}
			out = append(out, Finding{Rule: "unicode.bidi", Confidence: Medium, Start: i, End: j})
			drop = append(drop, cut{i, j})
			hid = true
			i = j
			continue
		case zeroWidth(r, i):
			j, k := i, 0
			for j < len(w) {
				r2, n2 := utf8.DecodeRuneInString(w[j:])
				if !zeroWidth(r2, j) {
					break
				}
				j += n2
				k++
			}
			if k >= 3 {
				c := Medium
				if k >= 8 {
					c = High
				}
				out = append(out, Finding{Rule: "unicode.zerowidth", Confidence: c, Start: i, End: j})
			}
			drop = append(drop, cut{i, j})
			// a zero-width character next to ASCII may split a word to
			// hide it; between emoji or in a script that joins with them
			// it is at home, and the text needs no second reading.
			if k >= 3 || i > 0 && w[i-1] < 0x80 || j < len(w) && w[j] < 0x80 {
				hid = true
			}
			i = j
			continue
		}
		prevFlag = r == 0x1F3F4
		i += n
	}
	if !hid {
		return out
	}
	// The text with invisible runes removed (tag characters as ASCII), and
	// where each of its bytes came from.
	b := make([]byte, 0, len(w))
	from := make([]int, 0, len(w)+1)
	at := 0
	for _, d := range drop {
		b = append(b, w[at:d.s]...)
		for k := at; k < d.s; k++ {
			from = append(from, k)
		}
		for k := d.s; k < d.e; {
			r, n := utf8.DecodeRuneInString(w[k:])
			if r >= 0xE0020 && r <= 0xE007E {
				b = append(b, byte(r-0xE0000))
				from = append(from, k)
			}
			k += n
		}
		at = d.e
	}
	b = append(b, w[at:]...)
	for k := at; k < len(w); k++ {
		from = append(from, k)
	}
	from = append(from, len(w))
	clean := string(b)
	for _, f := range phrases(clean, fold(clean), nil) {
		s, e := from[f.Start], from[f.End-1]+1
		if e <= s || e > len(w) {
			continue
		}
		// only what the invisible characters hid: a phrase the plain scan
		// saw already is reported there.
		if f.End-f.Start == e-s {
			continue
		}
		f.Confidence = max(f.Confidence, Medium)
		f.Start, f.End = s, e
		for e < len(w) && !utf8.RuneStart(w[e]) {
			e++
		}
		f.End = e
		out = append(out, f)
	}
	return out
}

// ascii8 reports whether the eight bytes of s are ASCII.
func ascii8(s string) bool {
	_ = s[7]
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	return x&0x8080808080808080 == 0
}

func zeroWidth(r rune, at int) bool {
	switch {
	case r >= 0x200B && r <= 0x200D, r >= 0x2060 && r <= 0x2064, r == 0x180E:
		return true
	case r == 0xFEFF:
		return at > 0
	}
	return false
}

// isBidi reports the bidirectional embedding, override and isolate controls.
func isBidi(r rune) bool { return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 }
