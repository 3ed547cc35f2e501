package dialect_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/claimcheck/claimcheck/pkg/dialect"
	"github.com/claimcheck/claimcheck/pkg/payload"
)

// ledgerView is what the ledger reads of a payload (evidence, gatekeeper).
type ledgerView struct {
	SessionID            string         `json:"session_id"`
	HookEvent            string         `json:"hook_event_name"`
	ToolName             string         `json:"tool_name,omitempty"`
	ToolUseID            string         `json:"tool_use_id,omitempty"`
	Command              string         `json:"-"`
	ToolInput            jsontext.Value `json:"tool_input,omitempty"`
	ToolResponse         jsontext.Value `json:"tool_response,omitempty"`
	Error                string         `json:"error,omitempty"`
	Prompt               string         `json:"prompt,omitempty"`
	StopHookActive       *bool          `json:"stop_hook_active,omitempty"`
	LastAssistantMessage string         `json:"last_assistant_message,omitempty"`
	Source               string         `json:"source,omitempty"`
	Reason               string         `json:"reason,omitempty"`
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func view(t *testing.T, p []byte) ledgerView {
	t.Helper()
	var v ledgerView
	if err := json.Unmarshal(p, &v, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("mapped payload does not decode: %v\n%s", err, p)
	}
	if len(v.ToolInput) > 0 {
		var in struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(v.ToolInput, &in, json.RejectUnknownMembers(false))
		v.Command = in.Command
		v.ToolInput = nil
	}
	if len(v.ToolResponse) > 0 {
		var s string
		if json.Unmarshal(v.ToolResponse, &s) != nil {
			s = "<non-string>"
		}
		v.ToolResponse = jsontext.Value(`"` + strings.ReplaceAll(s, "\n", `\n`) + `"`)
	}
	return v
}

func bp(b bool) *bool { return &b }

// TestReadCapturedPayloads maps every event each agent fired in the captured
// sessions (testdata/README.md) and checks what the ledger reads of it.
func TestReadCapturedPayloads(t *testing.T) {
	const codexSess, geminiSess = "01a21151-ecca-79a1-b5be-ff8d6979c82d", "e849aea9-2b9f-40db-a376-c106011fb0e1"
	const prompt = "List the files, then run the tests with go test ./... and tell me the result."
	lsOut := jsontext.Value(`"add.go\nadd_test.go\ngo.mod\n"`)
	tests := []struct {
		file   string
		agent  dialect.Agent
		mapped bool
		want   ledgerView
	}{
		{"codex-0.169.0/SessionStart.json", dialect.Codex, false,
			ledgerView{SessionID: codexSess, HookEvent: "SessionStart", Source: "startup"}},
		{"codex-0.169.0/UserPromptSubmit.json", dialect.Codex, false,
			ledgerView{SessionID: codexSess, HookEvent: "UserPromptSubmit", Prompt: prompt}},
		{"codex-0.169.0/PreModelRequest.json", dialect.Codex, false, ledgerView{SessionID: codexSess, HookEvent: "PreModelRequest"}},
		{"codex-0.169.0/PreToolUse.json", dialect.Codex, false,
			ledgerView{SessionID: codexSess, HookEvent: "PreToolUse", ToolName: "Bash", ToolUseID: "call_mock001", Command: "ls"}},
		{"codex-0.169.0/PostToolUse.json", dialect.Codex, false,
			ledgerView{SessionID: codexSess, HookEvent: "PostToolUse", ToolName: "Bash", ToolUseID: "call_mock001", Command: "ls",
				ToolResponse: lsOut}},
		{"codex-0.169.0/Stop.json", dialect.Codex, false,
			ledgerView{SessionID: codexSess, HookEvent: "Stop", StopHookActive: bp(false), LastAssistantMessage: "Done, all tests pass."}},
		{"codex-0.169.0/Stop.after-stop-block.json", dialect.Codex, false,
			ledgerView{SessionID: "01a21152-cd5c-7513-91c0-bbde47c98f59", HookEvent: "Stop", StopHookActive: bp(true),
				LastAssistantMessage: "Done, all tests pass."}},
		{"codex-0.169.0/SessionEnd.json", dialect.Codex, false, ledgerView{SessionID: codexSess, HookEvent: "SessionEnd", Reason: "other"}},

		{"gemini-cli-0.61.0/SessionStart.json", dialect.Gemini, true,
			ledgerView{SessionID: geminiSess, HookEvent: "SessionStart", Source: "startup"}},
		{"gemini-cli-0.61.0/BeforeAgent.json", dialect.Gemini, true,
			ledgerView{SessionID: geminiSess, HookEvent: "UserPromptSubmit", Prompt: prompt}},
		{"gemini-cli-0.61.0/BeforeAgent.after-stop-block.json", dialect.Gemini, true,
			ledgerView{SessionID: "a823d0ed-0c4b-42b5-9f4d-483d38c9a92c", HookEvent: "UserPromptSubmit",
				Prompt: "CCSTOP-7731: no test evidence recorded yet; run `go test ./...` and cite its output."}},
		{"gemini-cli-0.61.0/PreCompress.json", dialect.Gemini, true, ledgerView{SessionID: geminiSess, HookEvent: "PreCompact"}},
		{"gemini-cli-0.61.0/BeforeModel.json", dialect.Gemini, false, ledgerView{SessionID: geminiSess, HookEvent: "BeforeModel"}},
		{"gemini-cli-0.61.0/BeforeToolSelection.json", dialect.Gemini, false,
			ledgerView{SessionID: geminiSess, HookEvent: "BeforeToolSelection"}},
		{"gemini-cli-0.61.0/AfterModel.json", dialect.Gemini, false, ledgerView{SessionID: geminiSess, HookEvent: "AfterModel"}},
		// No tool_use_id: Gemini CLI sends none, and none is made up.
		{"gemini-cli-0.61.0/BeforeTool.json", dialect.Gemini, true,
			ledgerView{SessionID: geminiSess, HookEvent: "PreToolUse", ToolName: "Bash", Command: "ls"}},
		{"gemini-cli-0.61.0/AfterTool.json", dialect.Gemini, true,
			ledgerView{SessionID: geminiSess, HookEvent: "PostToolUse", ToolName: "Bash", Command: "ls",
				ToolResponse: jsontext.Value(`"add.go\nadd_test.go\ngo.mod"`)}},
		{"gemini-cli-0.61.0/AfterAgent.json", dialect.Gemini, true,
			ledgerView{SessionID: geminiSess, HookEvent: "Stop", StopHookActive: bp(false), LastAssistantMessage: "Done, all tests pass."}},
		{"gemini-cli-0.61.0/AfterAgent.after-stop-block.json", dialect.Gemini, true,
			ledgerView{SessionID: "a823d0ed-0c4b-42b5-9f4d-483d38c9a92c", HookEvent: "Stop", StopHookActive: bp(true),
				LastAssistantMessage: "Done, all tests pass.\nDone, all tests pass."}},
		{"gemini-cli-0.61.0/SessionEnd.json", dialect.Gemini, true, ledgerView{SessionID: geminiSess, HookEvent: "SessionEnd", Reason: "exit"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw := fixture(t, tt.file)
			for _, agent := range []dialect.Agent{tt.agent, ""} { // explicit, then detected
				ev, err := dialect.Read(agent, raw, dialect.Options{})
				if err != nil {
					t.Fatalf("Read(%q): %v", agent, err)
				}
				if agent == "" && ev.Agent != tt.agent && !strings.HasPrefix(filepath.Base(tt.file), "Session") {
					t.Errorf("detected %q, want %q", ev.Agent, tt.agent)
				}
				if ev.Mapped != tt.mapped {
					t.Errorf("Read(%q): mapped %v, want %v", agent, ev.Mapped, tt.mapped)
				}
				if diff := cmp.Diff(tt.want, view(t, ev.Payload)); diff != "" {
					t.Errorf("Read(%q): ledger view (-want +got):\n%s", agent, diff)
				}
				if ev.Info.HookEvent != tt.want.HookEvent || ev.Info.SessionID != tt.want.SessionID || ev.Info.ToolName != tt.want.ToolName ||
					ev.Info.ToolUseID != tt.want.ToolUseID {
					t.Errorf("Read(%q): info %+v does not match the payload", agent, ev.Info)
				}
				if !ev.Mapped {
					if string(ev.Payload) != string(raw) {
						t.Errorf("Read(%q): an unmapped payload is not the agent's bytes", agent)
					}
					continue
				}
				// The agent's bytes travel verbatim inside the mapping.
				if !strings.HasSuffix(string(ev.Payload), `,"agent_payload":`+string(raw)+`}`) {
					t.Errorf("Read(%q): the mapped payload does not end with the agent's bytes verbatim:\n%s", agent, ev.Payload)
				}
				if _, err := payload.Inspect(ev.Payload, 0); err != nil {
					t.Errorf("Read(%q): the mapped payload is not a valid hook payload: %v", agent, err)
				}
			}
		})
	}
}

func TestDetect(t *testing.T) {
	for raw, want := range map[string]dialect.Agent{
		`{"session_id":"s","hook_event_name":"Stop","last_assistant_message":"x"}`:                       dialect.Claude,
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_input":{"timestamp":"t","turn_id":"u"}}`: dialect.Claude,
		`{"session_id":"s","hook_event_name":"Stop","turn_id":"u"}`:                                      dialect.Codex,
		`{"session_id":"s","hook_event_name":"SessionStart","timestamp":"2026-11-25T06:05:42.707Z"}`:     dialect.Gemini,
		`{"session_id":"s","hook_event_name":"AfterAgent"}`:                                              dialect.Gemini,
		`{"session_id":"s","timestamp":7,"hook_event_name":"Stop"}`:                                      dialect.Claude,
		`[1]`:            dialect.Claude,
		`{"session_id":`: dialect.Claude,
	} {
		if got := dialect.Detect([]byte(raw)); got != want {
			t.Errorf("Detect(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestDetectSessionEventsOfCodex documents the one ambiguity of detection:
// Codex's SessionStart and SessionEnd look like Claude Code's.
func TestDetectSessionEventsOfCodex(t *testing.T) {
	for _, f := range []string{"codex-0.169.0/SessionStart.json", "codex-0.169.0/SessionEnd.json"} {
		if got := dialect.Detect(fixture(t, f)); got != dialect.Claude {
			t.Errorf("Detect(%s) = %q; docs/agents.md says it is taken for Claude Code's", f, got)
		}
	}
}

func TestReadRefusesMalformedAndForeignPayloads(t *testing.T) {
	const base = `"session_id":"s-1","transcript_path":"/t","cwd":"/p","timestamp":"2026-11-25T06:05:48.766Z"`
	tests := []struct {
		name      string
		agent     dialect.Agent
		raw       string
		wantErr   error
		wantEvent string // the ledger's name, so a refused gated event still fails closed
		wantMsg   string
	}{
		{"not json", dialect.Gemini, `{"session_id":`, payload.ErrMalformed, "", "truncated"},
		{"no session", dialect.Codex, `{"hook_event_name":"Stop"}`, payload.ErrMissing, "Stop", "session_id"},
		{"BeforeTool without tool_name", dialect.Gemini, `{` + base + `,"hook_event_name":"BeforeTool","tool_input":{}}`,
			payload.ErrMissing, "PreToolUse", "tool_name"},
		{"BeforeTool with a string tool_input", dialect.Gemini,
			`{` + base + `,"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":"ls"}`,
			payload.ErrMissing, "PreToolUse", "tool_input (an object)"},
		{"AfterAgent with a numeric prompt_response", dialect.Gemini,
			`{` + base + `,"hook_event_name":"AfterAgent","prompt_response":7}`, payload.ErrMalformed, "Stop", "prompt_response"},
		{"AfterTool without tool_response", dialect.Gemini,
			`{` + base + `,"hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{}}`, payload.ErrMissing, "PostToolUse",
			"tool_response"},
		{"BeforeAgent without prompt", dialect.Gemini, `{` + base + `,"hook_event_name":"BeforeAgent"}`, payload.ErrMissing,
			"UserPromptSubmit", "prompt"},
		{"Gemini payload to a Codex hook", dialect.Codex,
			`{` + base + `,"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`,
			dialect.ErrWrongDialect, "BeforeTool", "Gemini CLI's"},
		{"unknown dialect", dialect.Agent("cursor"), `{"session_id":"s","hook_event_name":"stop"}`, dialect.ErrUnknownAgent, "stop",
			"cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := dialect.Read(tt.agent, []byte(tt.raw), dialect.Options{})
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Read = %v, want %v naming %q", err, tt.wantErr, tt.wantMsg)
			}
			if ev.Info.HookEvent != tt.wantEvent {
				t.Errorf("hook event %q, want %q", ev.Info.HookEvent, tt.wantEvent)
			}
		})
	}
}

// TestReadStopFeedbackIsNotAPrompt: after a blocked AfterAgent, Gemini CLI
// fires BeforeAgent with the block's reason as the prompt (captured:
// BeforeAgent.after-stop-block.json). It must not start a new turn.
func TestReadStopFeedbackIsNotAPrompt(t *testing.T) {
	raw := fixture(t, "gemini-cli-0.61.0/BeforeAgent.after-stop-block.json")
	const reason = "CCSTOP-7731: no test evidence recorded yet; run `go test ./...` and cite its output."
	feedback := func(session, prompt string) bool {
		return session == "a823d0ed-0c4b-42b5-9f4d-483d38c9a92c" && prompt == reason
	}
	ev, err := dialect.Read(dialect.Gemini, raw, dialect.Options{StopFeedback: feedback})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Mapped || ev.Info.HookEvent != "BeforeAgent" || string(ev.Payload) != string(raw) {
		t.Errorf("fed-back stop reason read as %q (mapped %v), want Gemini's own BeforeAgent, unmapped", ev.Info.HookEvent, ev.Mapped)
	}
	// The user's own prompt is still one.
	ev, err = dialect.Read(dialect.Gemini, fixture(t, "gemini-cli-0.61.0/BeforeAgent.json"), dialect.Options{StopFeedback: feedback})
	if err != nil || ev.Info.HookEvent != "UserPromptSubmit" {
		t.Errorf("user prompt read as %q, %v", ev.Info.HookEvent, err)
	}
}

// TestReadGeminiFileTools: Gemini's file tools are named as the ledger's
// where their input has the same shape, so the gate's file rules apply.
func TestReadGeminiFileTools(t *testing.T) {
	for _, tc := range []struct{ tool, input, want string }{
		{"write_file", `{"file_path":"/p/.gemini/settings.json","content":"{}"}`, "Write"},
		{"replace", `{"file_path":"/p/a.go","old_string":"a","new_string":"b","expected_replacements":1}`, "Edit"},
		{"read_file", `{"absolute_path":"/p/a.go"}`, "read_file"},
		{"mcp__github__create_issue", `{}`, "mcp__github__create_issue"},
	} {
		raw := `{"session_id":"s-1","hook_event_name":"BeforeTool","timestamp":"2026-11-25T06:05:48.766Z","tool_name":"` + tc.tool +
			`","tool_input":` + tc.input + `}`
		ev, err := dialect.Read(dialect.Gemini, []byte(raw), dialect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v := view(t, ev.Payload); v.ToolName != tc.want || ev.Info.ToolName != tc.want {
			t.Errorf("%s read as %q, want %q", tc.tool, v.ToolName, tc.want)
		}
	}
}

func TestReadAfterToolError(t *testing.T) {
	raw := []byte(`{"session_id":"s-1","hook_event_name":"AfterTool","timestamp":"2026-11-25T06:05:48.766Z",` +
		`"tool_name":"run_shell_command","tool_input":{"command":"false"},"tool_response":{"llmContent":"x","error":{"message":"exit 1"}}}`)
	ev, err := dialect.Read(dialect.Gemini, raw, dialect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := view(t, ev.Payload)
	if v.HookEvent != "PostToolUseFailure" || v.Error != "exit 1" || ev.Info.HookEvent != "PostToolUseFailure" {
		t.Errorf("got %+v, want a PostToolUseFailure with error %q", v, "exit 1")
	}
}

func TestReadBoundsTheMappedSize(t *testing.T) {
	raw := fixture(t, "gemini-cli-0.61.0/AfterTool.json")
	_, err := dialect.Read(dialect.Gemini, raw, dialect.Options{MaxBytes: len(raw) + 10})
	if !errors.Is(err, payload.ErrTooLarge) {
		t.Fatalf("Read = %v, want ErrTooLarge", err)
	}
}

func TestParse(t *testing.T) {
	for _, a := range dialect.Agents {
		if got, err := dialect.Parse(string(a)); err != nil || got != a {
			t.Errorf("Parse(%q) = %q, %v", a, got, err)
		}
	}
	if _, err := dialect.Parse("copilot"); !errors.Is(err, dialect.ErrUnknownAgent) {
		t.Errorf("Parse(copilot) = %v, want ErrUnknownAgent", err)
	}
}

// FuzzRead: no input makes Read panic; an accepted payload is a valid hook
// payload in the ledger's words, carrying the agent's bytes when mapped.
func FuzzRead(f *testing.F) {
	for _, dir := range []string{"codex-0.169.0", "gemini-cli-0.61.0"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(0), b)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		agents := []dialect.Agent{"", dialect.Claude, dialect.Codex, dialect.Gemini}
		agent := agents[int(which)%len(agents)]
		ev, err := dialect.Read(agent, raw, dialect.Options{MaxBytes: 1 << 20})
		if err != nil {
			return
		}
		info, err := payload.Inspect(ev.Payload, 0)
		if err != nil {
			t.Fatalf("accepted payload is not valid: %v", err)
		}
		if info.SessionID != ev.Info.SessionID || info.HookEvent != ev.Info.HookEvent {
			t.Fatalf("info %+v, payload says %+v", ev.Info, info)
		}
		if ev.Mapped && !strings.HasSuffix(string(ev.Payload), string(raw)+"}") {
			t.Fatal("mapped payload lost the agent's bytes")
		}
	})
}

func TestInspected(t *testing.T) {
	for tool, want := range map[string]bool{"Read": true, "WebFetch": true, "WebSearch": true, "Bash": true, "mcp__github__get_issue": true,
		"web_fetch": true, "Edit": false, "Write": false, "TodoWrite": false} {
		if dialect.Inspected(tool) != want {
			t.Errorf("Inspected(%s) = %v", tool, !want)
		}
	}
}
