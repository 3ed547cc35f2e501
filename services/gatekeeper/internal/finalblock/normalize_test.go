package finalblock

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in string
		mask     bool
		want     string
		codes    []string
	}{
		{name: "ASCII is kept", in: "All tests pass.", want: "All tests pass."},
		{name: "zero-width and bidi characters go", in: "do\u200bne \u202eall\u202c te\u2060sts pa\u00adss\ufeff", want: "done all tests pass"},
		{name: "variation selectors go", in: "✔\ufe0f tests", want: "✔ tests"},
		{name: "fullwidth letters and punctuation", in: "ｄｏｎｅ！ ｔｅｓｔｓ？", want: "done! tests?"},
		{name: "compatibility characters", in: "ﬁxed 𝐝𝐨𝐧𝐞 ½", want: "fixed done 1⁄2"},
		{name: "composition across a removed character", in: "e\u200b\u0301", want: "é"},
		{name: "placeholder kept", in: "`…` passes…", want: "`…` passes..."},
		{name: "Arabic number sign kept", in: "\u0600١٢", want: "\u0600١٢"},
		{name: "code spans masked", in: "`go test` passes and ``a`b`` too", mask: true, want: "`…` passes and `…` too",
			codes: []string{"go test", "a`b"}},
		{name: "unpaired backtick is text", in: "a ` b", mask: true, want: "a ` b"},
		{name: "invalid UTF-8 passes through", in: "caf\xe9 ｘ", want: "caf\xe9 x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := normalize(tc.in, tc.mask)
			if n.text != tc.want {
				t.Errorf("normalize(%q) = %q, want %q", tc.in, n.text, tc.want)
			}
			if diff := cmp.Diff(tc.codes, n.codes); diff != "" {
				t.Errorf("codes (-want +got):\n%s", diff)
			}
			checkMap(t, tc.in, n)
		})
	}
}

// TestNormalizeOffsets: a word of the normalised text maps back to the
// word as written.
func TestNormalizeOffsets(t *testing.T) {
	in := "ok\u200b ｄｏｎｅ ﬁxed `x` pa\u00adss"
	n := normalize(in, true)
	for _, tc := range []struct{ norm, orig string }{
		{"done", "ｄｏｎｅ"}, {"fixed", "ﬁxed"}, {"`…`", "`x`"}, {"pass", "pa\u00adss"}, {"ok", "ok"}, {"fi", "ﬁ"},
	} {
		i := strings.Index(n.text, tc.norm)
		s, e := n.span(i, i+len(tc.norm))
		if in[s:e] != tc.orig {
			t.Errorf("%q maps to %q, want %q", tc.norm, in[s:e], tc.orig)
		}
	}
}

func checkMap(t *testing.T, in string, n normalized) {
	t.Helper()
	prevS, prevE := 0, 0
	for i := 0; i < len(n.text); {
		_, size := utf8.DecodeRuneInString(n.text[i:])
		s, e := n.span(i, i+size)
		if s < 0 || e > len(in) || s > e || s < prevS || e < prevE {
			t.Fatalf("byte %d of %q maps to [%d, %d) of %q (previous [%d, %d))", i, n.text, s, e, in, prevS, prevE)
		}
		prevS, prevE = s, e
		i += size
	}
}

// FuzzNormalize: normalize never panics, maps every rune inside the
// original and in order, and is idempotent.
func FuzzNormalize(f *testing.F) {
	f.Add("dоne, аll tests раss", false)
	f.Add("ｄｏｎｅ\u200b ✔\ufe0f `x` `…` caf\xe9", true)
	f.Add("e\u200b\u0301\u0301\u0316 ﬁ ½ ㍿", false)
	f.Add("\u202eauto\u202c ``a`b`` `", true)
	f.Fuzz(func(t *testing.T, in string, mask bool) {
		n := normalize(in, mask)
		checkMap(t, in, n)
		if !utf8.ValidString(in) || strings.Contains(in, CodePlaceholder) {
			return // invalid bytes and literal placeholders are copied, not normalised
		}
		if again := normalize(n.text, false); again.text != n.text {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, n.text, again.text)
		}
	})
}

// TestConfusables: phrases written in look-alike letters, fullwidth
// letters or with invisible characters inside words are claims all the
// same, reported as written.
func TestConfusables(t *testing.T) {
	done := func(scope, text string) ks { return ks{KindDone, scope, text} }
	runScoped(t, []scopedCase{
		{"dоne, аll tests раss", []ks{done(ScopeWork, "dоne"), done(ScopeTests, "аll tests раss")}}, // Cyrillic о, а, р
		{"dοne, all tests pαss", []ks{done(ScopeWork, "dοne"), done(ScopeTests, "all tests pαss")}}, // Greek ο, α
		// Greek ε is not confusable with e in UTS #39's data (its prototype
		// is ꞓ): the word is not read as "tests", and is a finding only.
		{"all tεsts pass", nil},
		{"ｄｏｎｅ， ａｌｌ ｔｅｓｔｓ ｐａｓｓ", []ks{done(ScopeWork, "ｄｏｎｅ"), done(ScopeTests, "ａｌｌ ｔｅｓｔｓ ｐａｓｓ")}},
		{"do\u200bne, all te\u200dsts pa\u00adss", []ks{done(ScopeWork, "do\u200bne"), done(ScopeTests, "all te\u200dsts pa\u00adss")}},
		{"ɑll tests pass", []ks{done(ScopeTests, "ɑll tests pass")}}, // Latin alpha
		{"The cоde is cоmplete.", []ks{done(ScopeWork, "cоmplete")}},
		{"𝐃𝐨𝐧𝐞.", []ks{done(ScopeWork, "𝐃𝐨𝐧𝐞")}},
		// Not claims, disguised or not.
		{"nоt dоne", nil},
		{"Is it dоne?", nil},
		{"рус сорок все тесты", nil}, // Russian words, some made only of Latin look-alikes
	})
}

func TestFindings(t *testing.T) {
	type kf struct{ kind, text, detail string }
	tests := []struct {
		in   string
		want []kf
	}{
		{"pаss", []kf{{FindingMixedScript, "pаss", "Latin+Cyrillic"}}},
		{"All tеsts pass.", []kf{{FindingMixedScript, "tеsts", "Latin+Cyrillic"}}},
		{"Ɗοne", []kf{{FindingMixedScript, "Ɗοne", "Latin+Greek"}}},
		{"日本語テスト kubectl適用 한국어test 中文ㄅㄆ v2.0 naïve 1.8 µs/op файл.go ✅ 🇯🇵 x²", nil},
		{"Deploy готов", nil},
		// Unread languages: a script no table reads, with results vocabulary.
		{"การทดสอบทั้งหมดผ่าน 12/12 ✅", []kf{{FindingUnreadLanguage, "การทดสอบทั้งหมดผ่าน 12/12 ✅", "Thai text with results vocabulary: 12/12, ✅"}}},
		{"ყველა ტესტი PASS", []kf{{FindingUnreadLanguage, "ყველა ტესტი PASS", "Georgian text with results vocabulary: PASS"}}},
		{"ሁሉም test አልፈዋል", []kf{{FindingUnreadLanguage, "ሁሉም test አልፈዋል", "Ethiopic text with results vocabulary: test"}}},
		{"כל הבדיקות עברו, coverage 95%", []kf{{FindingUnreadLanguage, "כל הבדיקות עברו, coverage 95%",
			"Hebrew text with results vocabulary: coverage, 95%"}}},
		{"Όλα τα τεστ πέρασαν: build OK.", []kf{{FindingUnreadLanguage, "Όλα τα τεστ πέρασαν: build OK", "Greek text with results vocabulary: build, OK"}}},
		{"สวัสดีครับ ขอบคุณมาก", nil},            // Thai without results vocabulary
		{"The Thai word ทดสอบ means test.", nil}, // mostly English
		{"Ich habe alles erledigt.", nil},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			m := Parse(tc.in)
			var got []kf
			for _, f := range m.Findings {
				got = append(got, kf{f.Kind, f.Text, f.Detail})
				if f.Field != FieldProse || m.Prose[f.Offset:f.Offset+len(f.Text)] != f.Text {
					t.Errorf("finding %+v is not at its offset", f)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(kf{})); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
