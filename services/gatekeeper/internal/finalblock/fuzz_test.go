package finalblock

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
)

// wireBlock is the JSON form of a Block, for building messages.
type wireBlock struct {
	Type                string      `json:"type"`
	Summary             string      `json:"summary"`
	Claims              []wireClaim `json:"claims"`
	WhatSucceeded       string      `json:"what_succeeded"`
	WhatRemains         string      `json:"what_remains"`
	NextRouteOrQuestion string      `json:"next_route_or_question"`
}

type wireClaim struct {
	ClaimType     string `json:"claim_type"`
	AttestationID string `json:"attestation_id"`
}

// FuzzParse checks Parse's invariants on arbitrary messages, and that a
// valid block embedded in arbitrary fence-free prose parses back to itself
// and leaves the phrases of that prose unchanged.
func FuzzParse(f *testing.F) {
	f.Add("I've fixed the bug in `pkg/x.go` and all tests pass.", "", "fixed it", uint8(0), uint8(1))
	f.Add("The migration is not done yet; I haven’t run it. Is it done?", "Please send me the key.", "", uint8(1), uint8(0))
	f.Add("Done.\n"+doneBlock+"\n"+doneBlock, "> PASS\n> ok", "two", uint8(2), uint8(3))
	f.Add("```claimcheck\n{\"type\":\"done\",\"type\":\"done\"}\n```", "", "", uint8(3), uint8(2))
	f.Add("````markdown\n```claimcheck\n{}\n```\n````\n~~~\nunclosed", "", "", uint8(0), uint8(0))
	f.Add("`` ` `` ``` `x` ```` | Done | ✅", "I’m blocked by the VPN; you'll need to grant access", "summary with ``` inside", uint8(5), uint8(4))
	f.Add("\t```claimcheck\r\n{\"type\":\"partial\"}\r\n\t```\r\n", "", "caf\xe9", uint8(2), uint8(1))
	f.Add("dоne, аll tests раss\u200b ｄｏｎｅ | Tests | ✅ |\n- [x] lint", "テストはすべて成功しました。まだ完了していません", "所有测试都通过了",
		uint8(0), uint8(1))
	f.Add("Готово. Пришлите, пожалуйста, ключ. Будь ласка, надішліть логи", "การทดสอบผ่าน 12/12 ✅", "모든 테스트가 통과했습니다",
		uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, msg, after, summary string, typ, nClaims uint8) {
		m := Parse(msg)
		checkInvariants(t, msg, m)

		if hasFence(msg) || hasFence(after) {
			return
		}
		types := []string{TypeDone, TypePartial, TypeBlocked, TypeDelegation}
		want := &Block{Name: InfoString, Type: types[typ%4], Summary: summary, WhatRemains: after}
		w := wireBlock{Type: want.Type, Summary: summary, WhatRemains: after}
		for i := range int(nClaims % 5) {
			c := Claim{ClaimType: types[(int(typ)+i)%4], AttestationID: fmt.Sprintf("01KAB0F%019d", i)}
			want.Claims = append(want.Claims, c)
			w.Claims = append(w.Claims, wireClaim(c))
		}
		raw, err := json.Marshal(w)
		if err != nil || len(raw) > MaxBlockBytes {
			return // invalid UTF-8 in the strings, or too large
		}
		embedded := Parse(msg + "\n```claimcheck\n" + string(raw) + "\n```\n" + after)
		checkInvariants(t, msg, embedded)
		if embedded.BlockErr != nil {
			t.Fatalf("embedded block: %v\nmsg %q\nblock %s", embedded.BlockErr, msg, raw)
		}
		if diff := cmp.Diff(want, embedded.Block); diff != "" {
			t.Fatalf("embedded block (-want +got):\n%s", diff)
		}
		// Cutting the block out leaves the same claims in the prose as a
		// blank line would.
		plain := Parse(msg + "\n\n" + after)
		if diff := cmp.Diff(texts(plain.Phrases), texts(proseOnly(embedded.Phrases))); diff != "" {
			t.Fatalf("phrases around the block differ from the plain prose (-plain +embedded):\n%s", diff)
		}
	})
}

func hasFence(s string) bool { return strings.Contains(s, "```") || strings.Contains(s, "~~~") }

func proseOnly(ps []Phrase) []Phrase {
	var out []Phrase
	for _, p := range ps {
		if p.Field == FieldProse {
			out = append(out, p)
		}
	}
	return out
}

func texts(ps []Phrase) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Kind+":"+p.Text)
	}
	return out
}

func checkInvariants(t *testing.T, msg string, m Message) {
	t.Helper()
	if m.Block != nil && m.BlockErr != nil {
		t.Fatalf("both a block and an error (%v) for %q", m.BlockErr, msg)
	}
	if m.BlockErr != nil {
		if s := m.BlockErr.Error(); s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "\n") {
			t.Fatalf("badly formed error %q", s)
		}
	}
	if b := m.Block; b != nil {
		if !oneOf(b.Type, TypeDone, TypePartial, TypeBlocked, TypeDelegation) || !oneOf(b.Name, InfoString, LegacyInfoString) || len(b.Claims) > MaxClaims {
			t.Fatalf("accepted block %+v", b)
		}
		for i, c := range b.Claims {
			if ulidProblem(c.AttestationID) != "" || !oneOf(c.ClaimType, ClaimDone, ClaimPartial, ClaimBlocked, ClaimDelegation) {
				t.Fatalf("accepted claims[%d] %+v", i, c)
			}
		}
		for _, s := range []string{b.Summary, b.WhatSucceeded, b.WhatRemains, b.NextRouteOrQuestion} {
			if !utf8.ValidString(s) {
				t.Fatalf("accepted invalid UTF-8 %q", s)
			}
		}
	}
	fields := []string{FieldProse, fieldSummary, fieldWhatSucceeded, fieldWhatRemains, fieldNextRouteOrQuestion}
	field, prev := 0, 0
	for _, p := range m.Phrases {
		if !oneOf(p.Kind, KindDone, KindBlocked, KindDelegation) || (p.Kind == KindDone) != (p.Scope != "") || p.Lang == "" {
			t.Fatalf("phrase %+v", p)
		}
		i := slices.Index(fields, p.Field)
		if i < field {
			t.Fatalf("phrase %+v: field out of order", p)
		}
		if i > field {
			field, prev = i, 0
		}
		text := fieldText(m, p.Field)
		if p.Text == "" || p.Offset < prev || p.Offset+len(p.Text) > len(text) {
			t.Fatalf("phrase %+v out of order or outside its field (%d bytes)", p, len(text))
		}
		if got := text[p.Offset : p.Offset+len(p.Text)]; got != p.Text {
			t.Fatalf("%s at %d is %q, not %q", p.Field, p.Offset, got, p.Text)
		}
		prev = p.Offset + len(p.Text)
	}
	for _, f := range m.Findings {
		if !oneOf(f.Kind, FindingMixedScript, FindingUnreadLanguage) || f.Detail == "" || !slices.Contains(fields, f.Field) {
			t.Fatalf("finding %+v", f)
		}
		text := fieldText(m, f.Field)
		if f.Text == "" || f.Offset < 0 || f.Offset+len(f.Text) > len(text) || text[f.Offset:f.Offset+len(f.Text)] != f.Text {
			t.Fatalf("finding %+v is not in its field %q", f, text)
		}
	}
}

// fieldText returns the text a Phrase or Finding of the field points into.
func fieldText(m Message, field string) string {
	if field == FieldProse {
		return m.Prose
	}
	if m.Block == nil {
		return ""
	}
	switch field {
	case fieldSummary:
		return m.Block.Summary
	case fieldWhatSucceeded:
		return m.Block.WhatSucceeded
	case fieldWhatRemains:
		return m.Block.WhatRemains
	case fieldNextRouteOrQuestion:
		return m.Block.NextRouteOrQuestion
	}
	return ""
}
