package finalblock

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// scriptID numbers the scripts of unicode.Scripts (the Script property);
// 0 is Common, Inherited or unassigned: characters that belong to no one
// script (punctuation, digits, symbols, combining marks).
type scriptID uint8

// scriptTable is unicode.Scripts as disjoint sorted ranges, for a binary
// search per character instead of one table lookup per script.
type scriptTable struct {
	ranges []scriptRange
	names  []string // by scriptID; names[0] == ""
	ids    map[string]scriptID
}

type scriptRange struct {
	lo, hi rune
	id     scriptID
}

var scripts = sync.OnceValue(func() *scriptTable {
	t := &scriptTable{names: []string{""}, ids: map[string]scriptID{}}
	names := make([]string, 0, len(unicode.Scripts))
	for name := range unicode.Scripts {
		if name != "Common" && name != "Inherited" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		id := scriptID(len(t.names))
		t.names = append(t.names, name)
		t.ids[name] = id
		add := func(lo, hi, stride rune) {
			if stride == 1 {
				t.ranges = append(t.ranges, scriptRange{lo, hi, id})
				return
			}
			for r := lo; r <= hi; r += stride {
				t.ranges = append(t.ranges, scriptRange{r, r, id})
			}
		}
		tab := unicode.Scripts[name]
		for _, r := range tab.R16 {
			add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
		for _, r := range tab.R32 {
			add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
	}
	slices.SortFunc(t.ranges, func(a, b scriptRange) int { return int(a.lo - b.lo) })
	return t
})

// Scripts the package refers to by name.
var (
	scLatin    = scriptByName("Latin")
	scHan      = scriptByName("Han")
	scHiragana = scriptByName("Hiragana")
	scKatakana = scriptByName("Katakana")
	scHangul   = scriptByName("Hangul")
	scBopomofo = scriptByName("Bopomofo")
)

func scriptByName(name string) func() scriptID {
	return sync.OnceValue(func() scriptID { return scripts().ids[name] })
}

// scriptOf returns the script of r, 0 for Common, Inherited and unassigned.
func scriptOf(r rune) scriptID {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return scLatin()
		}
		return 0
	}
	t := scripts()
	i, found := slices.BinarySearchFunc(t.ranges, r, func(sr scriptRange, r rune) int {
		switch {
		case sr.hi < r:
			return -1
		case sr.lo > r:
			return 1
		}
		return 0
	})
	if !found {
		return 0
	}
	return t.ranges[i].id
}

func scriptName(id scriptID) string { return scripts().names[id] }

// scriptSet collects the scripts of one word, at most a few.
type scriptSet struct {
	ids []scriptID
}

func (s *scriptSet) add(id scriptID) {
	if id != 0 && !slices.Contains(s.ids, id) {
		s.ids = append(s.ids, id)
	}
}

// mixed reports whether the scripts of a word are mixed in the sense of
// UTS #39's "highly restrictive" level: more than one script, unless all
// of them fall within Latin+Han+Hiragana+Katakana (Japanese),
// Latin+Han+Bopomofo (Chinese) or Latin+Han+Hangul (Korean).
func (s *scriptSet) mixed() bool {
	if len(s.ids) <= 1 {
		return false
	}
	for _, allowed := range [][]scriptID{
		{scLatin(), scHan(), scHiragana(), scKatakana()},
		{scLatin(), scHan(), scBopomofo()},
		{scLatin(), scHan(), scHangul()},
	} {
		ok := true
		for _, id := range s.ids {
			if !slices.Contains(allowed, id) {
				ok = false
				break
			}
		}
		if ok {
			return false
		}
	}
	return true
}

func (s *scriptSet) String() string {
	names := make([]string, len(s.ids))
	for i, id := range s.ids {
		names[i] = scriptName(id)
	}
	return strings.Join(names, "+")
}

// isCJK reports whether r is Han, Kana, Hangul or Bopomofo: text that
// the substring tables read, since it is written without spaces between
// words.
func isCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x11FF, // Hangul Jamo
		0x2E80 <= r && r <= 0x2FDF,   // CJK radicals
		0x3040 <= r && r <= 0x31FF,   // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo
		0x3400 <= r && r <= 0x4DBF,   // CJK Extension A
		0x4E00 <= r && r <= 0x9FFF,   // CJK Unified Ideographs
		0xA960 <= r && r <= 0xA97F,   // Hangul Jamo Extended-A
		0xAC00 <= r && r <= 0xD7FF,   // Hangul syllables and Jamo Extended-B
		0xF900 <= r && r <= 0xFAFF,   // CJK compatibility ideographs
		0x20000 <= r && r <= 0x3FFFF: // CJK Extensions B and later
		return true
	}
	return false
}
