package inject

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"unicode/utf8"
)

// encoded finds runs of base64 (24 characters or more), hex (32 digits or
// more, or \xNN escapes) and URL encoding (eight %XX escapes or more),
// decodes them, and judges the decoded text when it reads as text: a run
// whose decoding holds a phrase finding, or speaks to an agent (cue), is a
// finding of the run's kind with the decoded text's confidence. Decoded
// text is itself searched for runs once more (base64 inside base64). At
// most maxDecoded bytes are decoded per window.
func encoded(w string) []Finding {
	budget := maxDecoded
	return encodedDepth(w, 0, &budget)
}

func encodedDepth(w string, depth int, budget *int) []Finding {
	var out []Finding
	add := func(rule string, s, e int, dec []byte) {
		if len(dec) == 0 || *budget <= 0 || !textual(dec) {
			return
		}
		*budget -= len(dec)
		t := string(dec)
		c := judge(t)
		if depth == 0 {
			for _, f := range encodedDepth(t, depth+1, budget) {
				c = max(c, f.Confidence)
			}
		}
		if c >= Medium {
			out = append(out, Finding{Rule: rule, Confidence: c, Start: s, End: e})
		}
	}
	sk := skipper{pct: -1, bs: -1, run: -1}
	for i := 0; i < len(w) && *budget > 0; {
		if i = sk.next(w, i); i == len(w) {
			break
		}
		c := w[i]
		switch {
		case c == '%':
			j, n := i, 0
			for j < len(w) {
				if w[j] == '%' && j+2 < len(w) && isHex(w[j+1]) && isHex(w[j+2]) {
					j += 3
					n++
					continue
				}
				if w[j] == '+' || isWord(w[j]) && w[j] < 0x80 || w[j] == '.' || w[j] == '-' {
					j++
					continue
				}
				break
			}
			if n >= 8 {
				if dec, err := url.QueryUnescape(w[i:j]); err == nil {
					add("encoded.url", i, j, []byte(dec))
				}
				i = j
				continue
			}
			i++
		case c == '\\' && i+3 < len(w) && w[i+1] == 'x' && isHex(w[i+2]) && isHex(w[i+3]):
			j := i
			var b []byte
			for j+3 < len(w) && w[j] == '\\' && w[j+1] == 'x' && isHex(w[j+2]) && isHex(w[j+3]) {
				v, _ := hex.DecodeString(w[j+2 : j+4])
				b = append(b, v...)
				j += 4
			}
			if len(b) >= 8 {
				add("encoded.hex", i, j, b)
			}
			i = max(j, i+1)
		case isB64(c):
			if i > 0 && isB64(w[i-1]) {
				i++
				continue
			}
			j := i
			hexRun := byte(classHex)
			for j < len(w) {
				k := byteClass[w[j]]
				if k&classB64 == 0 {
					break
				}
				hexRun &= k
				j++
			}
			allHex := hexRun != 0
			e := j
			for e < len(w) && e-j < 2 && w[e] == '=' {
				e++
			}
			run := w[i:j]
			switch {
			case allHex && len(run) >= 32 && len(run)%2 == 0:
				if b, err := hex.DecodeString(run); err == nil {
					add("encoded.hex", i, j, b)
				}
			case len(run) >= 24 && !allHex:
				if b := decode64(run); b != nil {
					add("encoded.base64", i, e, b)
				}
			}
			i = max(e, i+1)
		default:
			i++
		}
	}
	return out
}

// byteClass holds, for a byte, classB64 and classHex when it is one.
var byteClass = func() (t [256]byte) {
	for c := range 256 {
		if b64Byte[c] {
			t[c] |= classB64
		}
		if hexByte[c] {
			t[c] |= classHex
		}
	}
	return t
}()

const (
	classB64 = 1 << iota
	classHex
)

// A skipper finds where encodedDepth's walk next has something to do:
// between escapes (% and \) and base64 runs long enough to decode, the
// walk only steps over short runs and other bytes, and it reaches each of
// them (a run's start, after a byte that is not base64, or after the
// padding of the run before it). It caches the next of each kind.
type skipper struct{ pct, bs, run int }

// next returns the first place at or after i where the walk acts.
func (sk *skipper) next(w string, i int) int {
	if sk.pct < i {
		sk.pct = indexFrom(w, i, '%')
	}
	if sk.bs < i {
		sk.bs = indexFrom(w, i, '\\')
	}
	if sk.run < i {
		sk.run = longRun(w, i)
	}
	return min(sk.pct, sk.bs, sk.run)
}

// indexFrom is the index of c in w at or after i, or len(w).
func indexFrom(w string, i int, c byte) int {
	if j := strings.IndexByte(w[i:], c); j >= 0 {
		return i + j
	}
	return len(w)
}

// longRun is the start (at or after from) of the first base64 run of 24
// bytes or more, or len(w). Such a run covers one of every 24 bytes: it
// probes those, and measures the run of a probe that is base64.
func longRun(w string, from int) int {
	for p := from + 23; p < len(w); {
		if !isB64(w[p]) {
			p += 24
			continue
		}
		l, r := p, p+1
		for l > 0 && isB64(w[l-1]) {
			l--
		}
		for r < len(w) && isB64(w[r]) {
			r++
		}
		if l >= from && r-l >= 24 {
			return l
		}
		p = r + 24
	}
	return len(w)
}

func isHex(c byte) bool { return hexByte[c] }

func isB64(c byte) bool { return b64Byte[c] }

var hexByte, b64Byte = func() (h, b [256]bool) {
	for c := range 256 {
		h[c] = '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
		b[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
	}
	return h, b
}()

// decode64 decodes a run as standard or URL-safe base64, padded or not.
func decode64(run string) []byte {
	run = strings.TrimRight(run, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(run, "-_") {
		if strings.ContainsAny(run, "+/") {
			return nil
		}
		enc = base64.RawURLEncoding
	}
	if len(run)%4 == 1 {
		run = run[:len(run)-1]
	}
	b, err := enc.DecodeString(run)
	if err != nil {
		return nil
	}
	return b
}

// textual reports whether b reads as text: valid UTF-8, nine in ten runes
// printable or white space.
func textual(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	n, bad := 0, 0
	for _, r := range string(b) {
		n++
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0x7F || r == utf8.RuneError {
			bad++
		}
	}
	return n > 0 && bad*10 <= n
}
