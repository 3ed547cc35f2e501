package payload

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestInspectAcceptsClaudeCodePayloads(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Info
	}{
		{
			name: "PreToolUse",
			in:   `{"session_id":"abc123","prompt_id":"550e8400-e29b-41d4-a716-446655440000","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"npm test","timeout":120000,"run_in_background":false},"tool_use_id":"toolu_01ABC123"}`,
			want: Info{SessionID: "abc123", HookEvent: "PreToolUse", ToolName: "Bash", ToolUseID: "toolu_01ABC123", PromptID: "550e8400-e29b-41d4-a716-446655440000"},
		},
		{
			name: "unknown event and members are kept",
			in:   `{"session_id":"s1","hook_event_name":"FutureEvent","brand_new":{"x":[1,2,{"y":null}]},"agent_id":"def456","agent_type":"Explore"}`,
			want: Info{SessionID: "s1", HookEvent: "FutureEvent", AgentID: "def456", AgentType: "Explore"},
		},
		{
			name: "non-string optional member is ignored",
			in:   `{"session_id":"s1","hook_event_name":"Stop","tool_name":7}`,
			want: Info{SessionID: "s1", HookEvent: "Stop"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Inspect([]byte(tt.in), 0)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestInspectRejects(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200)
	tests := []struct {
		name    string
		in      string
		wantErr error
		wantMsg string
	}{
		{"empty", ``, ErrMalformed, "empty"},
		{"not json", `hello`, ErrMalformed, "invalid character"},
		{"array", `[1,2]`, ErrMalformed, "array, not an object"},
		{"truncated", `{"session_id":"a","hook_event_name":"Stop"`, ErrMalformed, "truncated"},
		{"trailing garbage", `{"session_id":"a","hook_event_name":"Stop"} {}`, ErrMalformed, "trailing data"},
		{"duplicate key", `{"session_id":"a","session_id":"b","hook_event_name":"Stop"}`, ErrMalformed, "duplicate"},
		{"nested duplicate key", `{"session_id":"a","hook_event_name":"Stop","tool_input":{"x":1,"x":2}}`, ErrMalformed, "duplicate"},
		{"case variant", `{"session_id":"a","Session_Id":"b","hook_event_name":"Stop"}`, ErrMalformed, "letter case"},
		{"invalid utf8", "{\"session_id\":\"a\",\"hook_event_name\":\"Stop\",\"x\":\"\xff\xfe\"}", ErrMalformed, "UTF-8"},
		{"too deep", `{"session_id":"a","hook_event_name":"Stop","x":` + deep + `}`, ErrMalformed, "nested deeper"},
		{"missing session", `{"hook_event_name":"Stop"}`, ErrMissing, "session_id"},
		{"session not string", `{"session_id":42,"hook_event_name":"Stop"}`, ErrMissing, "session_id"},
		{"empty session", `{"session_id":"","hook_event_name":"Stop"}`, ErrMissing, "session_id"},
		{"missing event", `{"session_id":"a"}`, ErrMissing, "hook_event_name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Inspect([]byte(tt.in), 128)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err %q does not mention %q", err, tt.wantMsg)
			}
		})
	}
}

func TestReadCapsInput(t *testing.T) {
	in := bytes.Repeat([]byte("a"), 1001)
	if _, err := Read(bytes.NewReader(in), 1000); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	got, err := Read(strings.NewReader("  {\"a\":1}\n"), 1000)
	if err != nil || string(got) != `{"a":1}` {
		t.Fatalf("Read = %q, %v", got, err)
	}
	// exactly at the cap is fine
	if _, err := Read(bytes.NewReader(in[:1000]), 1000); err != nil {
		t.Fatalf("at cap: %v", err)
	}
}

// FuzzInspect checks that Inspect never panics and that whatever it accepts
// is a single JSON object with the two required members.
func FuzzInspect(f *testing.F) {
	f.Add([]byte(`{"session_id":"abc","hook_event_name":"Stop","last_assistant_message":"done"}`))
	f.Add([]byte(`{"session_id":"a","session_id":"b","hook_event_name":"Stop"}`))
	f.Add([]byte("{\"session_id\":\"\xff\"}"))
	f.Add([]byte(`[[[[[[[[[[]]]]]]]]]]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		info, err := Inspect(in, 64)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrMissing) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if info.SessionID == "" || info.HookEvent == "" {
			t.Fatalf("accepted payload without required members: %q", in)
		}
		if trimmed := bytes.TrimSpace(in); len(trimmed) == 0 || trimmed[0] != '{' {
			t.Fatalf("accepted a non-object: %q", in)
		}
	})
}

func TestToolInputDigest(t *testing.T) {
	pre := `{"session_id":"s","hook_event_name":"PreToolUse","tool_input":{"command":"go test ./...","description":"run"},"tool_use_id":"toolu_1"}`
	post := `{"tool_use_id":"toolu_1","tool_input":{ "description" : "run", "command":"go test ./..." },"tool_response":{"stdout":"ok"},"session_id":"s","hook_event_name":"PostToolUse"}`
	other := `{"session_id":"s","tool_input":{"command":"go test ./... -run X","description":"run"}}`
	a, b, c := ToolInputDigest([]byte(pre)), ToolInputDigest([]byte(post)), ToolInputDigest([]byte(other))
	if a == "" || a != b {
		t.Fatalf("same input, different digests: %q %q", a, b)
	}
	if c == a {
		t.Fatal("another input has the same digest")
	}
	for _, raw := range []string{`{"session_id":"s"}`, `[1]`, `not json`, `{"tool_input":`} {
		if d := ToolInputDigest([]byte(raw)); d != "" {
			t.Errorf("ToolInputDigest(%q) = %q, want none", raw, d)
		}
	}
}
