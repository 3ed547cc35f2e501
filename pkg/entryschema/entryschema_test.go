package entryschema

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/canon"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

func newValidator(t testing.TB) (*Validator, *validation.Validator) {
	t.Helper()
	full, err := validation.New()
	if err != nil {
		t.Fatal(err)
	}
	v, err := New(full)
	if err != nil {
		t.Fatal(err)
	}
	if !v.HasFastPath() {
		t.Fatal("entry.v1 compiled to no fast path")
	}
	return v, full
}

func seal(t testing.TB, e *schemas.Entry) []byte {
	t.Helper()
	if e.PrevHash == "" {
		e.PrevHash = digest.Zero
	}
	b, err := chain.Seal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// event is an entry of kind event with every member an event has.
func event(i int) *schemas.Entry {
	p := fmt.Sprintf(`{"session_id":"s1","hook_event_name":"PostToolUse","tool_input":{"command":"echo \"%d\"\n"}}`, i)
	return &schemas.Entry{V: 1, N: uint64(i), Kind: schemas.EntryEvent, Chain: "s1", SessionID: "s1",
		EventID: fmt.Sprintf("01JD%022d", i), HookEvent: "PostToolUse", ToolName: "Bash", ToolUseID: "toolu_1",
		ToolInput: digest.Zero, Host: "host-1", Origin: "hook:host-1", AgentType: "claude-code", AgentID: "a1",
		ClientSeq: 7, IntakeSeq: 9, ReceivedAt: "2026-11-22T03:04:05.1Z", IngestedAt: "2026-11-22T03:04:05.123456789+01:00",
		Payload: &p, PayloadDigest: digest.SHA256([]byte(p)), PayloadSize: len(p), PayloadElided: true, Bundle: "test",
		Artifact:   &schemas.Artifact{Object: "sha256-" + strings.Repeat("ab", 32), Digest: digest.Zero, Size: 10},
		Redactions: []schemas.Redaction{{Rule: "aws-key", Digest: digest.Zero}, {Rule: "gh", Digest: digest.Zero}}}
}

// TestEntriesTakeTheFastPath: entries of every kind but those with a
// member from another schema file are proved valid without the full
// validator; those are valid through it.
func TestEntriesTakeTheFastPath(t *testing.T) {
	v, full := newValidator(t)
	p := `{"x":1}`
	for _, tt := range []struct {
		name string
		e    *schemas.Entry
		fast bool
	}{
		{"event", event(1), true},
		{"invalid", &schemas.Entry{V: 1, N: 2, Kind: schemas.EntryInvalid, Chain: "s1", Reason: `bad "payload"` + "\n",
			Excerpt: "{\"a\":\u0001", IngestedAt: "2026-11-22T03:04:05Z", Bundle: "b"}, true},
		{"rejected", &schemas.Entry{V: 1, N: 3, Kind: schemas.EntryRejected, Chain: schemas.RejectedChain, Reason: "no session",
			IngestedAt: "2026-11-22T03:04:05Z", Bundle: "b"}, true},
		{"rotator", &schemas.Entry{V: 1, N: 1, Kind: schemas.EntryRotator, Chain: schemas.RotatorChain, EventID: "01JD0000000000000000000001",
			HookEvent: "keys", Payload: &p, PayloadDigest: digest.Zero, Reason: "rotated", IngestedAt: "2026-11-22T03:04:05Z",
			Bundle: "b"}, true},
		{"session start", func() *schemas.Entry {
			e := event(4)
			e.HookConfig = &schemas.HookConfig{V: 1, Verdict: "gated", Layers: []schemas.HookLayer{}}
			return e
		}(), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw := seal(t, tt.e)
			if err := full.Validate(schemas.EntryV1, raw); err != nil {
				t.Fatalf("the test entry is not valid: %v\n%s", err, raw)
			}
			if got := v.Fast(raw); got != tt.fast {
				t.Fatalf("fast path %v, want %v: %s", got, tt.fast, raw)
			}
			if err := v.Validate(raw); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestViolationsAreCaught: an entry that breaks any keyword of entry.v1
// is refused, with the full validator's message, whether or not it is
// otherwise on the fast path.
func TestViolationsAreCaught(t *testing.T) {
	v, full := newValidator(t)
	for _, tt := range []struct {
		name   string
		change func(*schemas.Entry)
		raw    func([]byte) []byte // after sealing
	}{
		{"kind not in the enum", func(e *schemas.Entry) { e.Kind = "bogus" }, nil},
		{"v is not 1", func(e *schemas.Entry) { e.V = 2 }, nil},
		{"n is 0", func(e *schemas.Entry) { e.N = 0 }, nil},
		{"required member missing", func(e *schemas.Entry) { e.Bundle = "" }, nil},
		{"event without its payload_digest", func(e *schemas.Entry) { e.PayloadDigest = "" }, nil},
		{"digest pattern", func(e *schemas.Entry) { e.PayloadDigest = "sha256:" + strings.Repeat("A", 64) }, nil},
		{"ulid pattern", func(e *schemas.Entry) { e.EventID = "81JD0000000000000000000001" }, nil},
		{"chain pattern", func(e *schemas.Entry) { e.Chain = "-x" }, nil},
		{"origin pattern", func(e *schemas.Entry) { e.Origin = "agent:x" }, nil},
		{"maxLength", func(e *schemas.Entry) { e.Host = strings.Repeat("é", 256) }, nil},
		{"maxLength with escapes", func(e *schemas.Entry) { e.Host = strings.Repeat("\"", 256) }, nil},
		{"minLength", func(e *schemas.Entry) { e.Redactions[0].Rule = "" }, nil},
		{"date-time", func(e *schemas.Entry) { e.IngestedAt = "2026-02-30T03:04:05Z" }, nil},
		{"date-time offset", func(e *schemas.Entry) { e.ReceivedAt = "2026-11-22T03:04:05+1:00" }, nil},
		{"artifact without its size", nil, func(b []byte) []byte { return bytes.Replace(b, []byte(`,"size":10`), nil, 1) }},
		{"artifact member unknown", nil, func(b []byte) []byte { return bytes.Replace(b, []byte(`"size":10`), []byte(`"size":10,"z":1`), 1) }},
		{"redaction without its digest", nil, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`{"digest":"`+digest.Zero+`","rule":"gh"}`), []byte(`{"rule":"gh"}`), 1)
		}},
		{"negative size", nil, func(b []byte) []byte { return bytes.Replace(b, []byte(`"size":10`), []byte(`"size":-1`), 1) }},
		{"client_seq above 2^53", nil, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"client_seq":7`), []byte(`"client_seq":9007199254740992`), 1)
		}},
		{"payload not a string", nil, func(b []byte) []byte { return bytes.Replace(b, []byte(`"payload":"`), []byte(`"payload":1,"q":"`), 1) }},
		{"payload_elided not a boolean", nil, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"payload_elided":true`), []byte(`"payload_elided":"true"`), 1)
		}},
		{"member unknown", nil, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`{"agent_id"`), []byte(`{"aaa":1,"agent_id"`), 1)
		}},
		{"rotator record on another chain", func(e *schemas.Entry) {
			e.Kind, e.HookEvent, e.Reason = schemas.EntryRotator, "keys", "r"
		}, nil},
		{"invalid without its reason", func(e *schemas.Entry) { e.Kind = schemas.EntryInvalid }, nil},
		{"not canonical", nil, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"kind":"event"`), []byte(`"kind" : "bogus"`), 1)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := event(1)
			if tt.change != nil {
				tt.change(e)
			}
			raw := seal(t, e)
			if tt.raw != nil {
				if raw = tt.raw(raw); raw == nil {
					t.Fatal("no change")
				}
			}
			want := full.Validate(schemas.EntryV1, raw)
			if want == nil {
				t.Fatalf("the full validator accepts it: %s", raw)
			}
			if v.Fast(raw) {
				t.Fatalf("proved valid on the fast path: %s", raw)
			}
			got := v.Validate(raw)
			if got == nil || !errors.Is(got, validation.ErrInvalid) || got.Error() != want.Error() {
				t.Fatalf("Validate: %v; full validator: %v", got, want)
			}
		})
	}
}

// FuzzValidateMatchesFullValidator holds each answer of the fast path to
// the full validator: a yes is valid, a no invalid.
func FuzzValidateMatchesFullValidator(f *testing.F) {
	v, full := newValidator(f)
	f.Add(seal(f, event(1)))
	e := event(2)
	e.Kind, e.Chain, e.HookEvent, e.Reason = schemas.EntryRotator, schemas.RotatorChain, "keys", "r"
	f.Add(seal(f, e))
	e = event(3)
	e.Kind, e.Reason = schemas.EntryInvalid, "x"
	f.Add(seal(f, e))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, ok := canon.ScanObject(raw, nil); !ok {
			return
		}
		r := v.root.eval(raw)
		err := full.Validate(schemas.EntryV1, raw)
		switch {
		case r == yes && err != nil:
			t.Fatalf("fast yes, full validator: %v\n%s", err, raw)
		case r == no && err == nil:
			t.Fatalf("fast no, the full validator accepts it:\n%s", raw)
		}
	})
}

func TestPatternMatchersMatchTheirRegexps(t *testing.T) {
	dre, ure := regexp.MustCompile(digestPattern), regexp.MustCompile(ulidPattern)
	cases := []string{digest.Zero, digest.Zero + "\n", "sha256:" + strings.Repeat("g", 64), "SHA256:" + strings.Repeat("0", 64), "",
		"01JD0000000000000000000001", "81JD0000000000000000000001", "01JD000000000000000000000I", "01jd0000000000000000000001",
		"01JD00000000000000000000010", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "01JD0000000000000000000001\n"}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789abcdefABCDEFGHIJKLMNOPQRSTUVWXYZsha:\n"
	for range 20000 {
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteString("sha256:")
		}
		for range 19 + r.IntN(8) + 45*r.IntN(2) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		if b := []byte(s); isDigest(b) != dre.MatchString(s) || isULID(b) != ure.MatchString(s) {
			t.Fatalf("%q: digest %v/%v, ulid %v/%v", s, isDigest(b), dre.MatchString(s), isULID(b), ure.MatchString(s))
		}
	}
}

// BenchmarkValidate: an event entry on the fast path and through the
// full validator.
func BenchmarkValidate(b *testing.B) {
	v, full := newValidator(b)
	raw := seal(b, event(1))
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if err := v.Validate(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			if err := full.Validate(schemas.EntryV1, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestMemoAnswersAsItsRegexp, asked twice, past the strings it keeps.
func TestMemoAnswersAsItsRegexp(t *testing.T) {
	re := regexp.MustCompile(`^(hook|http):[a-z0-9]{1,3}$`)
	m := &memo{re: re, seen: map[string]bool{}}
	for range 2 {
		for i := range maxMemo + 500 {
			s := []byte(fmt.Sprintf("hook:%x", i))
			if m.match(s) != re.Match(s) {
				t.Fatalf("%s: memo %v", s, m.match(s))
			}
		}
	}
	if len(m.seen) != maxMemo {
		t.Fatalf("memo keeps %d strings", len(m.seen))
	}
}
