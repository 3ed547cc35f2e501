package clientcontract

import (
	"strings"
	"testing"
)

// TestPayloadContract: the check accepts what the client sent and names each
// kind of departure from it.
func TestPayloadContract(t *testing.T) {
	pc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	real := `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/repo","permission_mode":"default","prompt_id":"p1",` +
		`"effort":{"level":"medium"},"hook_event_name":"PreToolUse","tool_name":"Bash",` +
		`"tool_input":{"command":"go test ./...","description":"run"},"tool_use_id":"toolu_1"}`
	if err := pc.Check([]byte(real), true); err != nil {
		t.Fatalf("the client's own shape: %v", err)
	}
	for name, c := range map[string]struct{ from, to, want string }{
		"invented field":    {`"tool_use_id":"toolu_1"`, `"tool_use_id":"toolu_1","tool_call_id":"x"`, "tool_call_id is not a field"},
		"wrong type":        {`"tool_use_id":"toolu_1"`, `"tool_use_id":1`, "tool_use_id is a number, the client sends a string"},
		"missing read":      {`,"tool_use_id":"toolu_1"`, ``, "tool_use_id is missing"},
		"missing prompt id": {`"prompt_id":"p1",`, ``, "prompt_id is missing"},
		"invented input":    {`"description":"run"`, `"description":"run","timeout_s":5`, "tool_input.timeout_s is not a field"},
	} {
		err := pc.Check([]byte(strings.Replace(real, c.from, c.to, 1)), true)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.want)
		}
	}
	// Unread fields may be left out; documented optional ones may be added.
	lean := strings.Replace(strings.Replace(real, `"effort":{"level":"medium"},`, ``, 1), `"permission_mode":"default",`, ``, 1)
	if err := pc.Check([]byte(lean), true); err != nil {
		t.Errorf("without the unread fields: %v", err)
	}
	start := `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/repo","hook_event_name":"SessionStart","source":"startup","model":"m"}`
	if err := pc.Check([]byte(start), true); err != nil {
		t.Errorf("SessionStart with its documented model: %v", err)
	}
}

// TestFieldsOnly: without complete, a lean payload passes and an invented
// field still fails.
func TestFieldsOnly(t *testing.T) {
	pc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	lean := `{"session_id":"s","hook_event_name":"Stop","last_assistant_message":"done"}`
	if err := pc.Check([]byte(lean), false); err != nil {
		t.Fatalf("lean Stop: %v", err)
	}
	if err := pc.Check([]byte(lean), true); err == nil {
		t.Fatal("lean Stop passed as complete")
	}
	renamed := `{"session_id":"s","hook_event_name":"Stop","last_message":"done"}`
	if err := pc.Check([]byte(renamed), false); err == nil || !strings.Contains(err.Error(), "last_message is not a field") {
		t.Fatalf("renamed field: %v", err)
	}
}

// TestCapturedContracts: Codex's and Gemini CLI's captured payloads are a
// contract too; a field the client never sends (Gemini's tool_use_id) is
// named.
func TestCapturedContracts(t *testing.T) {
	codex, err := Captured("codex-0.169.0")
	if err != nil {
		t.Fatal(err)
	}
	pre := `{"session_id":"s","turn_id":"t","transcript_path":"/t","cwd":"/r","hook_event_name":"PreToolUse","model":"m",` +
		`"permission_mode":"default","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"call_1"}`
	if err := codex.Check([]byte(pre), true); err != nil {
		t.Fatalf("Codex's own shape: %v", err)
	}
	if err := codex.Check([]byte(strings.Replace(pre, `"turn_id":"t"`, `"turn_id":1`, 1)), false); err == nil ||
		!strings.Contains(err.Error(), "turn_id is a number") || !strings.Contains(err.Error(), "pkg/dialect/testdata/codex-0.169.0") {
		t.Errorf("wrong type: %v", err)
	}
	gemini, err := Captured("gemini-cli-0.61.0")
	if err != nil {
		t.Fatal(err)
	}
	before := `{"session_id":"s","transcript_path":"/t","cwd":"/r","hook_event_name":"BeforeTool","timestamp":"2026-11-25T06:05:48.766Z",` +
		`"tool_name":"run_shell_command","tool_input":{"command":"ls","description":"d"}}`
	if err := gemini.Check([]byte(before), true); err != nil {
		t.Fatalf("Gemini's own shape: %v", err)
	}
	withID := strings.Replace(before, `"tool_name"`, `"tool_use_id":"x","tool_name"`, 1)
	if err := gemini.Check([]byte(withID), false); err == nil || !strings.Contains(err.Error(), "tool_use_id is not a field the client sends") {
		t.Errorf("a tool id Gemini never sends: %v", err)
	}
	if _, err := Captured("cursor-1.7"); err == nil {
		t.Error("a client with no captured payloads has a contract")
	}
}
