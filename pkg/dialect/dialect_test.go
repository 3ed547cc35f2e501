package dialect_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
		`{"session_id":"s","hook_event_name":"Stop","last_assistant_message":"x"}`:                                         dialect.Claude,
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_input":{"timestamp":"t","turn_id":"u"}}`:                   dialect.Claude,
		`{"session_id":"s","hook_event_name":"Stop","turn_id":"u"}`:                                                        dialect.Codex,
		`{"session_id":"s","transcript_path":"t","hook_event_name":"SessionStart","timestamp":"2026-11-25T06:05:42.707Z"}`: dialect.Gemini,
		// Copilot's VS Code-compatible format: Claude Code's event names with
		// a string timestamp (and, for SessionStart, no transcript_path).
		`{"session_id":"s","hook_event_name":"SessionStart","timestamp":"2026-11-25T06:05:42.707Z"}`:                  dialect.Copilot,
		`{"hook_event_name":"PreToolUse","session_id":"s","timestamp":"2024-01-07T08:00:02.000Z","tool_name":"Bash"}`: dialect.Copilot,
		`{"hook_event_name":"Stop","session_id":"s","timestamp":"2024-01-07T08:00:05.000Z","transcript_path":"t"}`:    dialect.Copilot,
		`{"session_id":"s","hook_event_name":"AfterAgent"}`:                                                           dialect.Gemini,
		`{"session_id":"s","timestamp":7,"hook_event_name":"Stop"}`:                                                   dialect.Claude,
		`{"hook_event_name":"stop","conversation_id":"c","status":"completed"}`:                                       dialect.Cursor,
		`{"timestamp":1704614400000,"sessionId":"s","toolName":"bash"}`:                                               dialect.Copilot,
		`{"timestamp":"2026-11-25T06:05:42.707Z","conversation_id":"c"}`:                                              dialect.Cursor,
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
		{"unknown dialect", dialect.Agent("windsurf"), `{"session_id":"s","hook_event_name":"stop"}`, dialect.ErrUnknownAgent, "stop",
			"windsurf"},
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
	if _, err := dialect.Parse("windsurf"); !errors.Is(err, dialect.ErrUnknownAgent) {
		t.Errorf("Parse(windsurf) = %v, want ErrUnknownAgent", err)
	}
}

// FuzzRead: no input makes Read panic; an accepted payload is a valid hook
// payload in the ledger's words, carrying the agent's bytes when mapped.
func FuzzRead(f *testing.F) {
	for _, dir := range []string{"codex-0.169.0", "gemini-cli-0.61.0", "cursor-docs", "copilot-docs"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(0), b)
			if dir == "copilot-docs" { // copilot, with the file's event
				event, _, _ := strings.Cut(filepath.Base(p), ".")
				f.Add(uint8(5+6*(1+slices.Index(dialect.CopilotEvents(), event))), b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		agents := []dialect.Agent{"", dialect.Claude, dialect.Codex, dialect.Gemini, dialect.Cursor, dialect.Copilot}
		agent := agents[int(which)%len(agents)]
		events := append([]string{""}, dialect.CopilotEvents()...)
		event := events[int(which/6)%len(events)]
		ev, err := dialect.Read(agent, raw, dialect.Options{MaxBytes: 1 << 20, Event: event})
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

// TestReadDocumentedPayloads maps every Cursor and Copilot payload written
// from their published documentation (testdata/cursor-docs/README.md,
// testdata/copilot-docs/README.md): the session is Cursor's conversation_id
// and Copilot's sessionId, no tool_use_id (only Cursor's generic events
// carry one), stop_hook_active or final message is made up, and the
// agent's bytes travel verbatim.
func TestReadDocumentedPayloads(t *testing.T) {
	const cursorSess, copilotSess = "6b1c2f0e-3d4a-4f7b-9a51-0c8e2d7f4a10", "8f2d5c1a-4b7e-4e0f-9c3d-2a6b1e8f7d54"
	const prompt = "Run the tests with go test ./... and tell me the result."
	cur := func(event string) ledgerView { return ledgerView{SessionID: cursorSess, HookEvent: event} }
	cop := func(event string) ledgerView { return ledgerView{SessionID: copilotSess, HookEvent: event} }
	with := func(v ledgerView, f func(*ledgerView)) ledgerView { f(&v); return v }
	tests := []struct {
		file  string
		agent dialect.Agent
		want  ledgerView
	}{
		{"cursor-docs/beforeSubmitPrompt.json", dialect.Cursor, with(cur("UserPromptSubmit"), func(v *ledgerView) { v.Prompt = prompt })},
		{"cursor-docs/beforeShellExecution.json", dialect.Cursor,
			with(cur("PreToolUse"), func(v *ledgerView) { v.ToolName, v.Command = "Bash", "go test ./..." })},
		{"cursor-docs/afterShellExecution.json", dialect.Cursor, with(cur("PostToolUse"), func(v *ledgerView) {
			v.ToolName, v.Command, v.ToolResponse = "Bash", "go test ./...", jsontext.Value("\"ok  \texample.com/add\t0.002s\\n\"")
		})},
		{"cursor-docs/beforeMCPExecution.json", dialect.Cursor, with(cur("PreToolUse"), func(v *ledgerView) { v.ToolName = "create_issue" })},
		{"cursor-docs/afterMCPExecution.json", dialect.Cursor, with(cur("PostToolUse"), func(v *ledgerView) {
			v.ToolName, v.ToolResponse = "create_issue", jsontext.Value(`"{"number":7}"`)
		})},
		{"cursor-docs/beforeReadFile.json", dialect.Cursor, with(cur("PreToolUse"), func(v *ledgerView) { v.ToolName = "Read" })},
		{"cursor-docs/afterFileEdit.json", dialect.Cursor, with(cur("PostToolUse"), func(v *ledgerView) { v.ToolName = "MultiEdit" })},
		{"cursor-docs/afterAgentResponse.json", dialect.Cursor, cur("afterAgentResponse")},
		{"cursor-docs/afterAgentThought.json", dialect.Cursor, cur("afterAgentThought")},
		{"cursor-docs/stop.json", dialect.Cursor, cur("Stop")},
		{"cursor-docs/stop.aborted.json", dialect.Cursor, cur("stop")}, // not a gated Stop
		{"cursor-docs/beforeTabFileRead.json", dialect.Cursor, cur("beforeTabFileRead")},
		{"cursor-docs/afterTabFileEdit.json", dialect.Cursor, cur("afterTabFileEdit")},
		// The generic events, from third-party copies of Cursor's page: with a tool_use_id.
		{"cursor-docs/preToolUse.json", dialect.Cursor, with(cur("PreToolUse"), func(v *ledgerView) {
			v.ToolName, v.Command, v.ToolUseID = "Bash", "go test ./...", "call_7Hq2"
		})},
		{"cursor-docs/postToolUse.json", dialect.Cursor, with(cur("PostToolUse"), func(v *ledgerView) {
			v.ToolName, v.Command, v.ToolUseID = "Bash", "go test ./...", "call_7Hq2"
			v.ToolResponse = jsontext.Value("\"ok  \texample.com/add\t0.002s\\n\"")
		})},
		{"cursor-docs/postToolUseFailure.json", dialect.Cursor, with(cur("PostToolUseFailure"), func(v *ledgerView) {
			v.ToolName, v.Command, v.ToolUseID, v.Error = "Bash", "go vet ./...", "call_8Kx3", "Command failed with exit code 1"
		})},
		{"cursor-docs/sessionStart.json", dialect.Cursor, cur("SessionStart")},
		{"cursor-docs/sessionEnd.json", dialect.Cursor, cur("SessionEnd")},

		{"copilot-docs/sessionStart.json", dialect.Copilot, with(cop("SessionStart"), func(v *ledgerView) { v.Source = "new" })},
		{"copilot-docs/userPromptSubmitted.json", dialect.Copilot, with(cop("UserPromptSubmit"), func(v *ledgerView) { v.Prompt = prompt })},
		{"copilot-docs/preToolUse.json", dialect.Copilot,
			with(cop("PreToolUse"), func(v *ledgerView) { v.ToolName, v.Command = "Bash", "go test ./..." })},
		{"copilot-docs/postToolUse.json", dialect.Copilot, with(cop("PostToolUse"), func(v *ledgerView) {
			v.ToolName, v.Command, v.ToolResponse = "Bash", "go test ./...", jsontext.Value("\"ok  \texample.com/add\t0.002s\"")
		})},
		{"copilot-docs/postToolUseFailure.json", dialect.Copilot,
			with(cop("PostToolUseFailure"), func(v *ledgerView) { v.ToolName, v.Error = "Read", "Path does not exist" })},
		{"copilot-docs/agentStop.json", dialect.Copilot, with(cop("Stop"), func(v *ledgerView) { v.StopHookActive = bp(false) })},
		{"copilot-docs/subagentStart.json", dialect.Copilot, cop("subagentStart")},
		{"copilot-docs/subagentStop.json", dialect.Copilot,
			with(cop("SubagentStop"), func(v *ledgerView) { v.LastAssistantMessage = "The tests live in add_test.go." })},
		{"copilot-docs/preCompact.json", dialect.Copilot, cop("PreCompact")},
		{"copilot-docs/errorOccurred.json", dialect.Copilot, cop("errorOccurred")},
		{"copilot-docs/notification.json", dialect.Copilot, cop("notification")},
		{"copilot-docs/userPromptTransformed.json", dialect.Copilot, cop("userPromptTransformed")},
		{"copilot-docs/sessionEnd.json", dialect.Copilot, with(cop("SessionEnd"), func(v *ledgerView) { v.Reason = "complete" })},

		// The VS Code-compatible format: events named in PascalCase (as in a
		// .claude/settings.json, which Copilot CLI also runs), snake_case
		// members, Claude Code's tool names.
		{"copilot-docs/vscode.SessionStart.json", dialect.Copilot, with(cop("SessionStart"), func(v *ledgerView) { v.Source = "new" })},
		{"copilot-docs/vscode.UserPromptSubmit.json", dialect.Copilot, with(cop("UserPromptSubmit"), func(v *ledgerView) { v.Prompt = prompt })},
		{"copilot-docs/vscode.PreToolUse.json", dialect.Copilot,
			with(cop("PreToolUse"), func(v *ledgerView) { v.ToolName, v.Command = "Bash", "go test ./..." })},
		{"copilot-docs/vscode.PostToolUse.json", dialect.Copilot, with(cop("PostToolUse"), func(v *ledgerView) {
			v.ToolName, v.Command, v.ToolResponse = "Bash", "go test ./...", jsontext.Value("\"ok  \texample.com/add\t0.002s\"")
		})},
		{"copilot-docs/vscode.PostToolUseFailure.json", dialect.Copilot,
			with(cop("PostToolUseFailure"), func(v *ledgerView) { v.ToolName, v.Error = "Read", "Path does not exist" })},
		{"copilot-docs/vscode.Stop.json", dialect.Copilot, with(cop("Stop"), func(v *ledgerView) { v.StopHookActive = bp(false) })},
		{"copilot-docs/vscode.SubagentStop.json", dialect.Copilot,
			with(cop("SubagentStop"), func(v *ledgerView) { v.LastAssistantMessage = "The tests live in add_test.go." })},
		{"copilot-docs/vscode.PreCompact.json", dialect.Copilot, cop("PreCompact")},
		{"copilot-docs/vscode.ErrorOccurred.json", dialect.Copilot, cop("ErrorOccurred")},
		{"copilot-docs/vscode.SessionEnd.json", dialect.Copilot, with(cop("SessionEnd"), func(v *ledgerView) { v.Reason = "complete" })},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw := fixture(t, tt.file)
			var event string
			if tt.agent == dialect.Copilot { // hooks install passes the event: the camelCase payloads do not name it
				event, _, _ = strings.Cut(filepath.Base(tt.file), ".")
				if event == "vscode" {
					event = ""
				}
			}
			for _, agent := range []dialect.Agent{tt.agent, ""} { // explicit, then detected
				ev, err := dialect.Read(agent, raw, dialect.Options{Event: event})
				if err != nil {
					t.Fatalf("Read(%q): %v", agent, err)
				}
				if ev.Agent != tt.agent || !ev.Mapped {
					t.Errorf("Read(%q): agent %q mapped %v agent event %q", agent, ev.Agent, ev.Mapped, ev.AgentEvent)
				}
				if diff := cmp.Diff(tt.want, view(t, ev.Payload)); diff != "" {
					t.Errorf("Read(%q): ledger view (-want +got):\n%s", agent, diff)
				}
				if ev.Info.HookEvent != tt.want.HookEvent || ev.Info.SessionID != tt.want.SessionID || ev.Info.ToolName != tt.want.ToolName ||
					ev.Info.ToolUseID != tt.want.ToolUseID {
					t.Errorf("Read(%q): info %+v does not match the payload", agent, ev.Info)
				}
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

// TestReadRefusesBadCursorAndCopilotPayloads: what the Cursor and Copilot
// mappings cannot map is refused naming the member, under the ledger's
// event name so that a refused tool call or stop still fails closed.
func TestReadRefusesBadCursorAndCopilotPayloads(t *testing.T) {
	const cur = `"conversation_id":"c-1","generation_id":"g-1","workspace_roots":["/p"]`
	const cop = `"sessionId":"s-1","timestamp":1704614600000,"cwd":"/p"`
	tests := []struct {
		name      string
		agent     dialect.Agent
		event     string
		raw       string
		wantErr   error
		wantEvent string
		wantMsg   string
	}{
		{"cursor without conversation_id", dialect.Cursor, "", `{"hook_event_name":"beforeShellExecution","command":"ls"}`,
			payload.ErrMissing, "PreToolUse", "conversation_id"},
		{"cursor shell without command", dialect.Cursor, "", `{` + cur + `,"hook_event_name":"beforeShellExecution"}`,
			payload.ErrMissing, "PreToolUse", "command"},
		{"cursor MCP tool_input not JSON", dialect.Cursor, "",
			`{` + cur + `,"hook_event_name":"beforeMCPExecution","tool_name":"q","tool_input":"not json"}`,
			payload.ErrMissing, "PreToolUse", "tool_input"},
		{"cursor stop with a numeric status", dialect.Cursor, "", `{` + cur + `,"hook_event_name":"stop","status":1}`,
			payload.ErrMalformed, "Stop", "status"},
		{"cursor without an event name", dialect.Cursor, "", `{` + cur + `}`, payload.ErrMissing, "", "hook_event_name"},
		{"copilot without --event", dialect.Copilot, "", `{` + cop + `,"toolName":"bash","toolArgs":"{}"}`,
			payload.ErrMissing, "", "--event"},
		{"copilot detected without --event", "", "", `{` + cop + `,"toolName":"bash","toolArgs":"{}"}`,
			payload.ErrMissing, "", "--event"},
		{"copilot unknown event", dialect.Copilot, "beforeShellExecution", `{` + cop + `}`, payload.ErrMalformed, "", "unknown event"},
		{"copilot event mismatch", dialect.Copilot, "agentStop", `{` + cop + `,"hook_event_name":"Notification"}`,
			payload.ErrMalformed, "Notification", "names event"},
		{"copilot coding agent (no sessionId)", dialect.Copilot, "preToolUse",
			string(fixture(t, "copilot-docs/preToolUse.coding-agent.json")), payload.ErrMissing, "PreToolUse", "sessionId"},
		{"copilot toolArgs a number", dialect.Copilot, "preToolUse", `{` + cop + `,"toolName":"bash","toolArgs":7}`,
			payload.ErrMissing, "PreToolUse", "toolArgs"},
		{"copilot toolResult a string", dialect.Copilot, "postToolUse",
			`{` + cop + `,"toolName":"bash","toolArgs":{},"toolResult":"ok"}`, payload.ErrMissing, "PostToolUse", "toolResult"},
		{"copilot stop with a numeric sessionId", dialect.Copilot, "agentStop", `{"sessionId":7}`, payload.ErrMalformed, "Stop",
			"sessionId"},
		{"copilot payload to a codex hook", dialect.Codex, "", `{` + cop + `,"toolName":"bash","toolArgs":"{}"}`,
			payload.ErrMissing, "", "session_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := dialect.Read(tt.agent, []byte(tt.raw), dialect.Options{Event: tt.event})
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Read = %v, want %v naming %q", err, tt.wantErr, tt.wantMsg)
			}
			if ev.Info.HookEvent != tt.wantEvent {
				t.Errorf("hook event %q, want %q", ev.Info.HookEvent, tt.wantEvent)
			}
		})
	}
}

// TestReadCopilotToolArgsAndResults: toolArgs as an object (the CLI
// reference types it unknown) is read as a JSON string is; a resultType
// other than success is a failure; tools other than bash keep their names.
func TestReadCopilotToolArgsAndResults(t *testing.T) {
	const cop = `"sessionId":"s-1","timestamp":1704614600000,"cwd":"/p"`
	for _, tc := range []struct{ event, fields, wantEvent, wantTool, wantCommand, wantError string }{
		{"preToolUse", `"toolName":"bash","toolArgs":{"command":"ls"}`, "PreToolUse", "Bash", "ls", ""},
		{"preToolUse", `"toolName":"edit","toolArgs":"{\"path\":\"a.go\"}"`, "PreToolUse", "Edit", "", ""},
		{"preToolUse", `"toolName":"create","toolArgs":{"path":"/p/.github/hooks/x.json","file_text":"{}"}`, "PreToolUse", "Write", "", ""},
		{"preToolUse", `"toolName":"view","toolArgs":{ }`, "PreToolUse", "view", "", ""},
		{"preToolUse", `"toolName":"view","toolArgs":{"path":"a.go","file_path":"b.go"}`, "PreToolUse", "view", "", ""},
		{"preToolUse", `"toolName":"glob","toolArgs":{"path":"a.go"}`, "PreToolUse", "glob", "", ""},
		{"postToolUse", `"toolName":"bash","toolArgs":{"command":"false"},"toolResult":{"resultType":"failure","textResultForLlm":"exit 1"}`,
			"PostToolUseFailure", "Bash", "false", "exit 1"},
		{"postToolUse", `"toolName":"bash","toolArgs":{"command":"rm x"},"toolResult":{"resultType":"denied"}`,
			"PostToolUseFailure", "Bash", "rm x", "denied"},
	} {
		ev, err := dialect.Read(dialect.Copilot, []byte(`{`+cop+`,`+tc.fields+`}`), dialect.Options{Event: tc.event})
		if err != nil {
			t.Fatal(err)
		}
		v := view(t, ev.Payload)
		if v.HookEvent != tc.wantEvent || v.ToolName != tc.wantTool || v.Command != tc.wantCommand || v.Error != tc.wantError {
			t.Errorf("%s %s read as %+v", tc.event, tc.fields, v)
		}
		var in struct {
			ToolInput struct {
				Path     string  `json:"path"`
				FilePath *string `json:"file_path"`
			} `json:"tool_input"`
		}
		if err := json.Unmarshal(ev.Payload, &in, json.RejectUnknownMembers(false)); err != nil {
			t.Fatalf("%s: %v", ev.Payload, err)
		}
		if mapped := tc.wantTool == "Edit" || tc.wantTool == "Write"; mapped != (in.ToolInput.FilePath != nil && *in.ToolInput.FilePath == in.ToolInput.Path) &&
			tc.wantTool != "view" {
			t.Errorf("%s: file_path %v, path %q", tc.fields, in.ToolInput.FilePath, in.ToolInput.Path)
		}
	}
}

// TestReadCursorAndCopilotStopFeedback: the block reason Cursor and
// Copilot submit as the next prompt continues the turn, as Gemini CLI's.
func TestReadCursorAndCopilotStopFeedback(t *testing.T) {
	const reason = "claimcheck blocked this stop: no evidence"
	feedback := func(_, prompt string) bool { return prompt == reason }
	for _, tc := range []struct {
		agent        dialect.Agent
		event, raw   string
		wantFeedback string
	}{
		{dialect.Cursor, "", `{"conversation_id":"c-1","hook_event_name":"beforeSubmitPrompt","prompt":%q}`, "beforeSubmitPrompt"},
		{dialect.Copilot, "userPromptSubmitted", `{"sessionId":"s-1","timestamp":1,"cwd":"/p","prompt":%q}`, "userPromptSubmitted"},
	} {
		for prompt, want := range map[string]string{reason: tc.wantFeedback, "fix the bug": "UserPromptSubmit"} {
			raw := fmt.Sprintf(tc.raw, prompt)
			ev, err := dialect.Read(tc.agent, []byte(raw), dialect.Options{StopFeedback: feedback, Event: tc.event})
			if err != nil || ev.Info.HookEvent != want || view(t, ev.Payload).HookEvent != want {
				t.Errorf("%s prompt %q read as %q (%v), want %q", tc.agent, prompt, ev.Info.HookEvent, err, want)
			}
		}
	}
}

func TestInspected(t *testing.T) {
	for tool, want := range map[string]bool{"Read": true, "WebFetch": true, "WebSearch": true, "Bash": true, "mcp__github__get_issue": true,
		"web_fetch": true, "Edit": false, "Write": false, "TodoWrite": false} {
		if dialect.Inspected(tool) != want {
			t.Errorf("Inspected(%s) = %v", tool, !want)
		}
	}
}
