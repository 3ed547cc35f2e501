package validation

import (
	"errors"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/schemas"
)

const goodEvent = `{"v":1,"kind":"event","event_id":"01JDB3H5KX0000000000000000","session_id":"s1","hook_event":"Stop","host":"h","agent_type":"claude-code","agent_id":"a","client_seq":1,"received_at":"2026-11-22T03:04:05.123Z","payload_digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","payload_size":2,"payload":{"session_id":"s1","hook_event_name":"Stop"}}`

func TestEventSchema(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(schemas.EventV1, []byte(goodEvent)); err != nil {
		t.Fatalf("good event: %v", err)
	}
	tests := []struct{ name, from, to, want string }{
		{"format date-time asserted", `"2026-11-22T03:04:05.123Z"`, `"yesterday"`, "/received_at"},
		{"unknown member", `"v":1,`, `"v":1,"x":1,`, "additional"},
		{"bad session", `"session_id":"s1","hook_event"`, `"session_id":"../s1","hook_event"`, "/session_id"},
		{"bad ulid", `01JDB3H5KX0000000000000000`, `01JDB3H5KX000000000000000I`, "/event_id"},
		{"payload lacks session", `"payload":{"session_id":"s1",`, `"payload":{`, "/payload"},
		{"event with rejected", `"payload":{`, `"rejected":{"reason":"x"},"payload":{`, "/"},
		{"negative seq", `"client_seq":1`, `"client_seq":-1`, "/client_seq"},
		{"seq above 2^53", `"client_seq":1`, `"client_seq":9007199254740992`, "/client_seq"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(goodEvent, tt.from, tt.to, 1)
			if doc == goodEvent {
				t.Fatalf("mutation %q did not apply", tt.from)
			}
			err := v.Validate(schemas.EventV1, []byte(doc))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalid naming %q", err, tt.want)
			}
		})
	}
	if err := v.Validate(schemas.EventV1, []byte(`{`)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("not JSON: %v", err)
	}
	if err := v.Validate("nope.schema.json", []byte(`{}`)); err == nil {
		t.Fatal("unknown schema accepted")
	}
}

func TestNoRemoteOrFileReferences(t *testing.T) {
	if _, err := (refuseLoader{}).Load("https://example.com/evil.json"); err == nil {
		t.Fatal("remote $ref loaded")
	}
	if _, err := (refuseLoader{}).Load("file:///etc/passwd"); err == nil {
		t.Fatal("file $ref loaded")
	}
}
