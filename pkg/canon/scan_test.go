package canon

import (
	"bytes"
	"testing"
)

func TestScanObjectProvesCanonicalObjects(t *testing.T) {
	for _, in := range []string{
		`{}`,
		`{"a":1}`,
		`{"a":-12,"b":[],"c":{},"d":[true,false,null,"x",0,{"e":[1,[2]]}]}`,
		`{"hash":"sha256:00","n":123456789012345,"payload":"{\"a\":\"\\n\"}\n\t\b\f\r\u0000\u001f\u000b"}`,
		"{\"s\":\"€ \u2028 \x7f 😀 \ufffd\"}",
		`{"A":1,"Z":2,"_":3,"a":4,"~":5}`,
		"{\"a b\":1,\"a\x7f\":2}",
	} {
		if !IsCanonical([]byte(in)) {
			t.Fatalf("test input %s is not canonical", in)
		}
		if _, ok := ScanObject([]byte(in), nil); !ok {
			t.Errorf("ScanObject(%s) = false, want true", in)
		}
	}
}

func TestScanObjectProvesNothingElse(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `"x"`, `1`, `{`, `{"a":1`, `{"a":1,}`, `{"a" :1}`, `{ "a":1}`, `{"a":1}x`, `{"a":1} `,
		`{"b":1,"a":2}`, `{"a":1,"a":1}`, `{"a":01}`, `{"a":-0}`, `{"a":1.5}`, `{"a":1e2}`, `{"a":1E2}`,
		`{"a":1234567890123456}`, `{"a":"\/"}`, `{"a":"\u0041"}`, `{"a":"\u000a"}`, `{"a":"\u001F"}`,
		`{"a":"\u0020"}`, `{"a":"\ud83d\ude00"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\xed\xa0\x80\"}",
		`{"\n":1}`, `{"\u0061":1}`, "{\"é\":1}", `{"a":tru}`, `{"a":[1,]}`, `{"a":[1 ]}`, `{"a":nul}`,
		`{"a":"x`, `{"a":"\`, `{"a":"\u00`, `{"a":-}`, `{"a":+1}`,
	} {
		if _, ok := ScanObject([]byte(in), nil); ok {
			t.Errorf("ScanObject(%q) = true, want false", in)
		}
	}
	deep := bytes.Repeat([]byte(`{"a":`), maxScanDepth+1)
	deep = append(append(deep, '1'), bytes.Repeat([]byte{'}'}, maxScanDepth+1)...)
	if _, ok := ScanObject(deep, nil); ok {
		t.Error("ScanObject proved an object nested deeper than it follows")
	}
}

func TestScanObjectMembers(t *testing.T) {
	in := []byte(`{"a":{"x":1},"hash":"h","z":[1,2]}`)
	ms, ok := ScanObject(in, nil)
	if !ok || len(ms) != 3 {
		t.Fatalf("ScanObject = %v %v", ms, ok)
	}
	for i, want := range [][3]string{{"a", `{"x":1}`, `"a":{"x":1}`}, {"hash", `"h"`, `"hash":"h"`}, {"z", `[1,2]`, `"z":[1,2]`}} {
		m := ms[i]
		if string(m.Name) != want[0] || string(m.Value) != want[1] {
			t.Errorf("member %d = %s %s", i, m.Name, m.Value)
		}
		if end := m.Start + len(want[2]); string(in[m.Start:end]) != want[2] || &in[end-1] != &m.Value[len(m.Value)-1] {
			t.Errorf("member %d starts at %d: %s", i, m.Start, in[m.Start:])
		}
	}
}

// FuzzScanObject holds ScanObject to Canonicalize: whatever it proves
// canonical, Canonicalize leaves unchanged, and its members are the
// object's.
func FuzzScanObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[true,null],"c":{"d":"\n\u0001é"}}`, `{"a":"\u000b","b":-5}`,
		`{"b":1,"a":2}`, `{"a":1.0}`, `{"a":"\/"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		ms, ok := ScanObject(raw, nil)
		if !ok {
			return
		}
		c, err := Canonicalize(raw)
		if err != nil {
			t.Fatalf("ScanObject proved %q canonical; Canonicalize: %v", raw, err)
		}
		if !bytes.Equal(c, raw) {
			t.Fatalf("ScanObject proved %q canonical; its canonical form is %q", raw, c)
		}
		rebuilt := []byte{'{'}
		for i, m := range ms {
			if i > 0 {
				rebuilt = append(rebuilt, ',')
			}
			if raw[m.Start] != '"' || !bytes.Equal(raw[m.Start+1:m.Start+1+len(m.Name)], m.Name) {
				t.Fatalf("member %d of %q: start %d does not hold its name %q", i, raw, m.Start, m.Name)
			}
			rebuilt = append(rebuilt, raw[m.Start:m.Start+len(m.Name)+3+len(m.Value)]...)
		}
		rebuilt = append(rebuilt, '}')
		if !bytes.Equal(rebuilt, raw) {
			t.Fatalf("members of %q rebuild %q", raw, rebuilt)
		}
	})
}

func TestScanArray(t *testing.T) {
	for in, want := range map[string][]string{
		`[]`: {}, `[1]`: {"1"}, `[1,"a",{"b":[2]},[],null]`: {"1", `"a"`, `{"b":[2]}`, "[]", "null"},
	} {
		vs, ok := ScanArray([]byte(in), nil)
		if !ok || len(vs) != len(want) {
			t.Fatalf("ScanArray(%s) = %q %v", in, vs, ok)
		}
		for i := range vs {
			if string(vs[i]) != want[i] {
				t.Errorf("ScanArray(%s)[%d] = %s", in, i, vs[i])
			}
		}
	}
	for _, in := range []string{``, `[`, `[1,]`, `[1 ]`, `[1]x`, `{}`, `[1.5]`, `[{"b":1,"a":2}]`, `[]]`} {
		if _, ok := ScanArray([]byte(in), nil); ok {
			t.Errorf("ScanArray(%q) = true", in)
		}
	}
}

// FuzzScanArray holds ScanArray to Canonicalize.
func FuzzScanArray(f *testing.F) {
	f.Add([]byte(`[1,"a",{"b":[2]},[],null]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		vs, ok := ScanArray(raw, nil)
		if !ok {
			return
		}
		if c, err := Canonicalize(raw); err != nil || !bytes.Equal(c, raw) {
			t.Fatalf("ScanArray proved %q canonical: %q %v", raw, c, err)
		}
		if rebuilt := "[" + string(bytes.Join(vs, []byte{','})) + "]"; rebuilt != string(raw) {
			t.Fatalf("elements of %q rebuild %q", raw, rebuilt)
		}
	})
}
