package envelope

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

func TestEventIsAValidEnvelopeCarryingThePayloadVerbatim(t *testing.T) {
	v, err := validation.New()
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"hook_event_name":"Stop",  "session_id":"s1", "x":"\u0041 \"q\" é", "n":1.50}`)
	at := time.Date(2026, 11, 22, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	src := Source{Host: `host "with" quotes é`, AgentType: "claude-code", AgentID: "me@host\\x"}
	b, err := Event("01JDB3H5KX0000000000000000", "s1", "Stop", 42, at, src, raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(schemas.EventV1, b); err != nil {
		t.Fatalf("invalid envelope: %v\n%s", err, b)
	}
	var e schemas.Envelope
	if err := json.Unmarshal(b, &e, json.RejectUnknownMembers(true)); err != nil {
		t.Fatal(err)
	}
	want := schemas.Envelope{V: 1, Kind: "event", EventID: "01JDB3H5KX0000000000000000", SessionID: "s1", HookEvent: "Stop",
		Host: src.Host, AgentType: src.AgentType, AgentID: src.AgentID, ClientSeq: 42, ReceivedAt: "2026-11-22T02:04:05.123Z",
		PayloadDigest: digest.SHA256(raw), PayloadSize: len(raw)}
	got := e
	got.Payload = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("envelope\n got %+v\nwant %+v", got, want)
	}
	if !bytes.Equal(e.Payload, raw) {
		t.Fatalf("payload not verbatim:\n%s\n%s", e.Payload, raw)
	}
}

func TestRejectedIsValidAndBounded(t *testing.T) {
	v, _ := validation.New()
	huge := strings.Repeat("x", 10000) + "\xff"
	b, err := Rejected("01JDB3H5KX0000000000000000", huge, huge, 1, time.Now(), Source{Host: "h", AgentType: "claude-code", AgentID: "a"}, digest.Zero, 99, []byte(huge), huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(schemas.EventV1, b); err != nil {
		t.Fatalf("invalid rejected envelope: %v", err)
	}
}

// A SessionStart carries the hook configuration beside the payload: the
// payload and its digest stay the agent's bytes, and the envelope is valid.
func TestSessionStartCarriesTheHookConfigBesideThePayload(t *testing.T) {
	v, err := validation.New()
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"session_id":"s1","hook_event_name":"SessionStart","source":"startup","cwd":"/p"}`)
	cfg := &schemas.HookConfig{V: 1, Verdict: schemas.HooksMissing, Missing: []string{"Stop"},
		Layers: []schemas.HookLayer{{Layer: schemas.LayerProject, Path: "/p/.claude/settings.json", Present: true, Parsed: true,
			Effective: true, Digest: digest.SHA256([]byte("{}")), Size: 2}}}
	b, err := SessionStart("01JDB3H5KX0000000000000000", "s1", 1, time.Now(), Source{Host: "h", AgentType: "claude-code", AgentID: "a"}, raw, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(schemas.EventV1, b); err != nil {
		t.Fatalf("invalid envelope: %v\n%s", err, b)
	}
	var e schemas.Envelope
	if err := json.Unmarshal(b, &e, json.RejectUnknownMembers(true)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(e.Payload, raw) || e.PayloadDigest != digest.SHA256(raw) {
		t.Fatalf("payload changed: %s", e.Payload)
	}
	if !reflect.DeepEqual(e.HookConfig, cfg) {
		t.Fatalf("hook_config %+v, want %+v", e.HookConfig, cfg)
	}
	plain, _ := SessionStart("01JDB3H5KX0000000000000000", "s1", 1, time.Now(), Source{Host: "h", AgentType: "claude-code", AgentID: "a"}, raw, nil)
	if bytes.Contains(plain, []byte("hook_config")) {
		t.Fatalf("nil config encoded: %s", plain)
	}
}
