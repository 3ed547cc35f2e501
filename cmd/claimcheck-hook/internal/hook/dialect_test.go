package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/dialect"
	"github.com/claimcheck/claimcheck/schemas"
)

// captured reads a payload the real client sent (pkg/dialect/testdata/README.md).
func captured(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "pkg", "dialect", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDialectsAreGatedInTheirOwnWords runs Codex's and Gemini CLI's
// captured payloads through the hook against NATS and a signing gatekeeper
// stub: each is recorded under the ledger's event name with the agent's
// agent_type, the gate is asked in the ledger's words, and the answer comes
// back in the agent's.
func TestDialectsAreGatedInTheirOwnWords(t *testing.T) {
	f, g := gateSetup(t)
	g.set(func(req schemas.GateRequest, d *schemas.GateDecision) []byte {
		switch req.HookEvent {
		case schemas.HookPreToolUse:
			d.Decision, d.Reason = schemas.GateAsk, "reads .env"
		case schemas.HookStop:
			d.Decision, d.Reason = schemas.GateBlock, "no test evidence"
		}
		return nil
	})
	tests := []struct {
		agent, file, wantEvent, wantType, wantStdout string
	}{
		{"codex", "codex-0.169.0/PreToolUse.json", "PreToolUse", "codex",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"` +
				dialect.AskAsDeny + `reads .env"}}` + "\n"},
		{"codex", "codex-0.169.0/Stop.json", "Stop", "codex", `{"decision":"block","reason":"no test evidence"}` + "\n"},
		{"codex", "codex-0.169.0/PostToolUse.json", "PostToolUse", "codex", ""},
		{"gemini", "gemini-cli-0.61.0/BeforeTool.json", "PreToolUse", "gemini-cli",
			`{"decision":"deny","reason":"` + dialect.AskAsDeny + `reads .env"}` + "\n"},
		{"gemini", "gemini-cli-0.61.0/AfterAgent.json", "Stop", "gemini-cli", `{"decision":"block","reason":"no test evidence"}` + "\n"},
		{"gemini", "gemini-cli-0.61.0/AfterTool.json", "PostToolUse", "gemini-cli", ""},
		{"gemini", "gemini-cli-0.61.0/BeforeModel.json", "BeforeModel", "gemini-cli", ""},
		// Written from the published docs (pkg/dialect/testdata/*-docs/README.md).
		{"cursor", "cursor-docs/beforeShellExecution.json", "PreToolUse", "cursor",
			`{"permission":"ask","user_message":"reads .env","agent_message":"reads .env"}` + "\n"},
		{"cursor", "cursor-docs/beforeReadFile.json", "PreToolUse", "cursor",
			`{"permission":"deny","user_message":"` + dialect.AskAsDeny + `reads .env","agent_message":"` + dialect.AskAsDeny + `reads .env"}` + "\n"},
		{"cursor", "cursor-docs/stop.json", "Stop", "cursor", `{"followup_message":"no test evidence"}` + "\n"},
		{"cursor", "cursor-docs/stop.aborted.json", "stop", "cursor", ""},
		{"cursor", "cursor-docs/afterShellExecution.json", "PostToolUse", "cursor", ""},
		{"copilot", "copilot-docs/preToolUse.json", "PreToolUse", "copilot",
			`{"permissionDecision":"ask","permissionDecisionReason":"reads .env"}` + "\n"},
		{"copilot", "copilot-docs/agentStop.json", "Stop", "copilot", `{"decision":"block","reason":"no test evidence"}` + "\n"},
		{"copilot", "copilot-docs/postToolUse.json", "PostToolUse", "copilot", ""},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			raw := captured(t, tc.file)
			before := len(f.intake(t))
			args := []string{"--agent", tc.agent}
			if tc.agent == "copilot" { // its payloads name no event: hooks install passes it
				event, _, _ := strings.Cut(filepath.Base(tc.file), ".")
				args = append(args, "--event", event)
			}
			r := runHook(t, f.env, raw, args...)
			if r.code != 0 || r.stdout != tc.wantStdout {
				t.Fatalf("code=%d stdout=%q stderr=%q, want stdout %q", r.code, r.stdout, r.stderr, tc.wantStdout)
			}
			envs := f.intake(t)[before:]
			if len(envs) == 0 {
				t.Fatal("nothing recorded")
			}
			e := envs[0]
			if e.Kind != schemas.KindEvent || e.HookEvent != tc.wantEvent || e.AgentType != tc.wantType {
				t.Fatalf("envelope %s %s %s, want %s by %s", e.Kind, e.HookEvent, e.AgentType, tc.wantEvent, tc.wantType)
			}
			if !strings.Contains(string(e.Payload), strings.TrimSpace(raw)) {
				t.Errorf("the agent's payload is not kept verbatim: %s", e.Payload)
			}
			if GatedEvents[tc.wantEvent] {
				g.mu.Lock()
				req := g.requests[len(g.requests)-1]
				g.mu.Unlock()
				// The request carries the recorded payload (re-encoded compactly).
				want := jsontext.Value(append([]byte(nil), e.Payload...))
				if err := want.Compact(); err != nil {
					t.Fatal(err)
				}
				if req.HookEvent != tc.wantEvent || req.AgentType != tc.wantType || string(req.Payload) != string(want) {
					t.Errorf("gate request %s by %s, payload %s", req.HookEvent, req.AgentType, req.Payload)
				}
			}
		})
	}
}

// TestDialectsFailClosed: with no gatekeeper, and for a payload the hook
// cannot map, a tool call is denied and a stop blocked in the agent's words,
// and the bad input is recorded as rejected.
func TestDialectsFailClosed(t *testing.T) {
	f := setup(t, true)
	delete(f.env, "CLAIMCHECK_HOOK_GATE")
	f.env["CLAIMCHECK_HOOK_GATE_DEADLINE"] = "500ms"
	tests := []struct {
		name, agent, stdin, wantPrefix string
		rejected                       bool
	}{
		{"gemini tool call, no gatekeeper", "gemini", captured(t, "gemini-cli-0.61.0/BeforeTool.json"), `{"decision":"deny","reason":"claimcheck denied`, false},
		{"gemini stop, no gatekeeper", "gemini", captured(t, "gemini-cli-0.61.0/AfterAgent.json"), `{"decision":"block","reason":"claimcheck blocked`, false},
		{"codex tool call, no gatekeeper", "codex", captured(t, "codex-0.169.0/PreToolUse.json"), `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"`, false},
		{"gemini tool call without tool_input", "gemini",
			`{"session_id":"sess-x","hook_event_name":"BeforeTool","timestamp":"2026-11-25T06:05:48.766Z","tool_name":"run_shell_command"}`,
			`{"decision":"deny","reason":"claimcheck denied`, true},
		{"detected gemini stop with a bad prompt_response", "",
			`{"session_id":"sess-y","hook_event_name":"AfterAgent","timestamp":"2026-11-25T06:05:48.766Z","prompt_response":7}`,
			`{"decision":"block","reason":"claimcheck blocked`, true},
		{"cursor shell command, no gatekeeper", "cursor", captured(t, "cursor-docs/beforeShellExecution.json"),
			`{"permission":"deny","user_message":"claimcheck denied`, false},
		{"cursor stop, no gatekeeper", "cursor", captured(t, "cursor-docs/stop.json"), `{"followup_message":"claimcheck blocked`, false},
		{"cursor MCP call whose tool_input is not JSON", "cursor",
			`{"conversation_id":"conv-z","hook_event_name":"beforeMCPExecution","tool_name":"q","tool_input":"{"}`,
			`{"permission":"deny","user_message":"claimcheck denied`, true},
		{"copilot tool call, no gatekeeper", "copilot --event preToolUse", captured(t, "copilot-docs/preToolUse.json"),
			`{"permissionDecision":"deny","permissionDecisionReason":"claimcheck denied`, false},
		{"copilot stop, no gatekeeper", "copilot --event agentStop", captured(t, "copilot-docs/agentStop.json"),
			`{"decision":"block","reason":"claimcheck blocked`, false},
		{"copilot coding agent tool call without sessionId", "copilot --event preToolUse",
			captured(t, "copilot-docs/preToolUse.coding-agent.json"),
			`{"permissionDecision":"deny","permissionDecisionReason":"claimcheck denied`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.intake(t))
			args := []string{}
			if tc.agent != "" {
				args = append(args, "--agent")
				args = append(args, strings.Fields(tc.agent)...)
			}
			r := runHook(t, f.env, tc.stdin, args...)
			if r.code != 0 || !strings.HasPrefix(r.stdout, tc.wantPrefix) {
				t.Fatalf("code=%d stdout=%q stderr=%q, want stdout starting %q", r.code, r.stdout, r.stderr, tc.wantPrefix)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
				t.Fatalf("answer is not JSON: %v", err)
			}
			if !tc.rejected {
				return
			}
			var found bool
			for _, e := range f.intake(t)[before:] {
				if e.Kind != schemas.KindRejected {
					continue
				}
				if r := strings.ToLower(e.Rejected.Reason); strings.Contains(r, "gemini cli") || strings.Contains(r, "cursor") ||
					strings.Contains(r, "copilot") {
					found = true
				}
			}
			if !found || !strings.Contains(r.stderr, "input rejected") {
				t.Fatalf("the bad input was not recorded as rejected; stderr %q", r.stderr)
			}
		})
	}
}

func TestAgentFlag(t *testing.T) {
	for _, args := range [][]string{{"--agent", "windsurf"}, {"--agent", ""}} {
		r := runHook(t, map[string]string{"HOME": t.TempDir()}, "", args...)
		if r.code != ExitRejected || !strings.Contains(r.stderr, "unknown agent") {
			t.Errorf("%v: code=%d stderr=%q", args, r.code, r.stderr)
		}
	}
	r := runHook(t, map[string]string{"HOME": t.TempDir(), "CLAIMCHECK_HOOK_AGENT": "windsurf"}, "")
	if r.code != ExitRejected || !strings.Contains(r.stderr, "CLAIMCHECK_HOOK_AGENT") {
		t.Errorf("env: code=%d stderr=%q", r.code, r.stderr)
	}
}

// TestGeminiStopFeedbackContinuesTheTurn: after a blocked AfterAgent,
// Gemini CLI sends the reason back as a BeforeAgent prompt (captured:
// BeforeAgent.after-stop-block.json). It is recorded under Gemini's own
// name, not as a UserPromptSubmit, so the block count goes on towards the
// cap; a prompt of the user's still starts a turn.
func TestGeminiStopFeedbackContinuesTheTurn(t *testing.T) {
	f, g := gateSetup(t)
	const reason = "CCSTOP-7731: no test evidence recorded yet; run `go test ./...` and cite its output."
	blocks := 0
	g.set(func(req schemas.GateRequest, d *schemas.GateDecision) []byte {
		if req.HookEvent == schemas.HookStop {
			blocks++
			d.Decision, d.Reason, d.ConsecutiveBlocks = schemas.GateBlock, reason, blocks
		}
		return nil
	})
	const session = "a823d0ed-0c4b-42b5-9f4d-483d38c9a92c"
	r := runHook(t, f.env, captured(t, "gemini-cli-0.61.0/AfterAgent.after-stop-block.json"), "--agent", "gemini")
	if r.code != 0 || !strings.HasPrefix(r.stdout, `{"decision":"block"`) {
		t.Fatalf("stop: %+v", r)
	}
	before := len(f.intake(t))
	if r := runHook(t, f.env, captured(t, "gemini-cli-0.61.0/BeforeAgent.after-stop-block.json"), "--agent", "gemini"); r.code != 0 {
		t.Fatalf("fed-back prompt: %+v", r)
	}
	envs := f.intake(t)[before:]
	if len(envs) != 1 || envs[0].HookEvent != "BeforeAgent" {
		t.Fatalf("fed-back stop reason recorded as %+v, want one BeforeAgent", envs)
	}
	if n, _ := stopBlocks(filepath.Join(f.dir, "state"), session, func(c int) int { return c }); n != 1 {
		t.Errorf("block count %d after the fed-back reason, want 1 (not reset)", n)
	}
	user := strings.Replace(captured(t, "gemini-cli-0.61.0/BeforeAgent.after-stop-block.json"), "CCSTOP-7731:", "Please", 1)
	before = len(f.intake(t))
	if r := runHook(t, f.env, user, "--agent", "gemini"); r.code != 0 {
		t.Fatalf("user prompt: %+v", r)
	}
	if envs := f.intake(t)[before:]; len(envs) == 0 || envs[0].HookEvent != schemas.HookUserPromptSubmit {
		t.Fatalf("user prompt recorded as %+v", envs)
	}
	if n, _ := stopBlocks(filepath.Join(f.dir, "state"), session, func(c int) int { return c }); n != 0 {
		t.Errorf("block count %d after the user's prompt, want 0", n)
	}
}

// TestCursorAndCopilotStopFeedbackContinuesTheTurn: Cursor submits a stop's
// followup_message, Copilot an agentStop block's reason, as the next user
// prompt; if their prompt hook fires for it, it is recorded under the
// agent's own event name and the block count goes on; a prompt of the
// user's still starts a turn.
func TestCursorAndCopilotStopFeedbackContinuesTheTurn(t *testing.T) {
	f, g := gateSetup(t)
	const reason = "claimcheck blocked this stop: no test evidence"
	blocks := 0
	g.set(func(req schemas.GateRequest, d *schemas.GateDecision) []byte {
		if req.HookEvent == schemas.HookStop {
			blocks++
			d.Decision, d.Reason, d.ConsecutiveBlocks = schemas.GateBlock, reason, blocks
		}
		return nil
	})
	for _, tc := range []struct {
		agent, session, stop, prompt, own string
		args                              []string
	}{
		{"cursor", "6b1c2f0e-3d4a-4f7b-9a51-0c8e2d7f4a10", captured(t, "cursor-docs/stop.json"),
			`{"conversation_id":"6b1c2f0e-3d4a-4f7b-9a51-0c8e2d7f4a10","hook_event_name":"beforeSubmitPrompt","prompt":%q,"attachments":[]}`,
			"beforeSubmitPrompt", []string{"--agent", "cursor"}},
		{"copilot", "8f2d5c1a-4b7e-4e0f-9c3d-2a6b1e8f7d54", captured(t, "copilot-docs/agentStop.json"),
			`{"sessionId":"8f2d5c1a-4b7e-4e0f-9c3d-2a6b1e8f7d54","timestamp":1704614500000,"cwd":"/p","prompt":%q}`,
			"userPromptSubmitted", []string{"--agent", "copilot", "--event", "userPromptSubmitted"}},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			stopArgs := []string{"--agent", tc.agent}
			if tc.agent == "copilot" {
				stopArgs = append(stopArgs, "--event", "agentStop")
			}
			if r := runHook(t, f.env, tc.stop, stopArgs...); r.code != 0 || !strings.Contains(r.stdout, reason) {
				t.Fatalf("stop: %+v", r)
			}
			state := filepath.Join(f.dir, "state")
			want, _ := stopBlocks(state, tc.session, func(c int) int { return c })
			before := len(f.intake(t))
			if r := runHook(t, f.env, fmt.Sprintf(tc.prompt, reason), tc.args...); r.code != 0 {
				t.Fatalf("fed-back prompt: %+v", r)
			}
			if envs := f.intake(t)[before:]; len(envs) != 1 || envs[0].HookEvent != tc.own {
				t.Fatalf("fed-back stop reason recorded as %+v, want one %s", envs, tc.own)
			}
			if n, _ := stopBlocks(state, tc.session, func(c int) int { return c }); n != want || n == 0 {
				t.Errorf("block count %d after the fed-back reason, want %d (not reset)", n, want)
			}
			before = len(f.intake(t))
			if r := runHook(t, f.env, fmt.Sprintf(tc.prompt, "Please fix the test"), tc.args...); r.code != 0 {
				t.Fatalf("user prompt: %+v", r)
			}
			if envs := f.intake(t)[before:]; len(envs) == 0 || envs[0].HookEvent != schemas.HookUserPromptSubmit {
				t.Fatalf("user prompt recorded as %+v", envs)
			}
			if n, _ := stopBlocks(state, tc.session, func(c int) int { return c }); n != 0 {
				t.Errorf("block count %d after the user's prompt, want 0", n)
			}
		})
	}
}

// TestGeminiStopReadsTheSessionFile: the hook reads the session file a
// Gemini CLI AfterAgent names (a real one, pkg/dialect/testdata) and the
// gate is asked about its last model message, not about prompt_response,
// which repeats the streamed chunks; a session file it will not read (a
// symbolic link) leaves prompt_response, and the payload says why.
func TestGeminiStopReadsTheSessionFile(t *testing.T) {
	f, g := gateSetup(t)
	g.set(func(req schemas.GateRequest, d *schemas.GateDecision) []byte { return nil })
	var want struct{ Session, Message, PromptResponse string }
	if err := json.Unmarshal([]byte(captured(t, "gemini-cli-0.61.0-chats/honest.want.json")), &want); err != nil {
		t.Fatal(err)
	}
	chats := filepath.Join(t.TempDir(), "tmp", "proj", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(chats, "session-2026-11-28T12-54-"+want.Session[:8]+".jsonl")
	if err := os.WriteFile(file, []byte(captured(t, "gemini-cli-0.61.0-chats/honest.jsonl")), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(chats, "link.jsonl")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, message, source, transcriptError string
	}{
		{"the session file", file, want.Message, "transcript_path", ""},
		{"a symbolic link", link, want.PromptResponse, "prompt_response", "a symbolic link, not followed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(map[string]any{"session_id": want.Session, "transcript_path": tc.path, "cwd": "/p",
				"hook_event_name": "AfterAgent", "timestamp": "2026-11-28T12:54:00.700Z", "prompt": "Run the tests.",
				"prompt_response": want.PromptResponse, "stop_hook_active": false})
			if r := runHook(t, f.env, string(raw), "--agent", "gemini"); r.code != 0 || r.stdout != "" {
				t.Fatalf("stop: %+v, want it let through", r)
			}
			g.mu.Lock()
			req := g.requests[len(g.requests)-1]
			g.mu.Unlock()
			var p struct {
				Message         string `json:"last_assistant_message"`
				Source          string `json:"last_assistant_message_source"`
				TranscriptError string `json:"transcript_error"`
			}
			if err := json.Unmarshal(req.Payload, &p, json.RejectUnknownMembers(false)); err != nil {
				t.Fatal(err)
			}
			if req.HookEvent != schemas.HookStop || p.Message != tc.message || p.Source != tc.source ||
				!strings.Contains(p.TranscriptError, tc.transcriptError) || (tc.transcriptError == "") != (p.TranscriptError == "") {
				t.Errorf("gate asked about %s %+v\nwant message %q from %s, transcript_error %q", req.HookEvent, p, tc.message, tc.source, tc.transcriptError)
			}
		})
	}
}
