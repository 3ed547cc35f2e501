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

// A SessionStart envelope may carry the hook configuration beside its
// payload; no other envelope may, and the configuration is checked.
func TestEventSchemaHookConfig(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	const d = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	start := strings.NewReplacer(`"hook_event":"Stop"`, `"hook_event":"SessionStart"`,
		`"hook_event_name":"Stop"`, `"hook_event_name":"SessionStart"`).Replace(goodEvent)
	cfg := `{"v":1,"verdict":"missing","expected":"` + d + `","missing":["Stop"],"reasons":["x"],"layers":[` +
		`{"layer":"project","path":"/p/.claude/settings.json","present":true,"parsed":true,"effective":true,"size":12,` +
		`"digest":"` + d + `","events":["SessionStart"],"commands":["` + d + `"],"handlers":"` + d + `"},` +
		`{"layer":"user","path":"/h/.claude/settings.json","present":false,"effective":true,"disable_all_hooks":true}]}`
	good := strings.Replace(start, `"payload":`, `"hook_config":`+cfg+`,"payload":`, 1)
	if err := v.Validate(schemas.EventV1, []byte(good)); err != nil {
		t.Fatalf("SessionStart with hook_config: %v", err)
	}
	if err := v.Validate(schemas.HookConfigV1, []byte(cfg)); err != nil {
		t.Fatalf("hook_config alone: %v", err)
	}
	tests := []struct{ name, doc, want string }{
		{"on a Stop", strings.Replace(goodEvent, `"payload":`, `"hook_config":`+cfg+`,"payload":`, 1), "/hook_event"},
		{"unknown verdict", strings.Replace(good, `"verdict":"missing"`, `"verdict":"fine"`, 1), "/hook_config/verdict"},
		{"unknown layer", strings.Replace(good, `"layer":"project"`, `"layer":"enterprise"`, 1), "/hook_config/layers/0/layer"},
		{"command in the clear", strings.Replace(good, `"commands":["`+d+`"]`, `"commands":["claimcheck-hook --nats-creds x"]`, 1),
			"/hook_config/layers/0/commands/0"},
		{"extra member", strings.Replace(good, `"present":false`, `"present":false,"content":"{}"`, 1), "/hook_config/layers/1"},
		{"no layers", strings.Replace(good, `,"layers":[`, `,"layerz":[`, 1), "/hook_config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.doc == good {
				t.Fatal("mutation did not apply")
			}
			err := v.Validate(schemas.EventV1, []byte(tt.doc))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalid naming %q", err, tt.want)
			}
		})
	}
}
