package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/clientcontract"
)

// dialectAgent drives claimcheck-hook --agent codex|gemini with payloads
// shaped as the real clients send them, each checked against the payloads
// captured from codex 0.169.0 and gemini-cli 0.61.0 (pkg/dialect/testdata,
// pkg/clientcontract.Captured), through claimcheck up.
type dialectAgent struct {
	t       *testing.T
	env     []string
	agent   string
	session string
	turn    string
}

func (a *dialectAgent) hook(fields string) result {
	a.t.Helper()
	var common string
	switch a.agent {
	case "codex":
		common = fmt.Sprintf(`"session_id":%q,"transcript_path":"/home/u/.codex/sessions/rollout.jsonl","cwd":"/repo",`+
			`"model":"gpt-5.5","permission_mode":"bypassPermissions",`, a.session)
		if !strings.Contains(fields, `"SessionStart"`) { // thread-scoped events carry no turn
			common += fmt.Sprintf(`"turn_id":%q,`, a.turn)
		}
	case "gemini":
		common = fmt.Sprintf(`"session_id":%q,"transcript_path":"/home/u/.gemini/tmp/proj/chats/s.jsonl","cwd":"/repo","timestamp":%q,`,
			a.session, time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	raw := []byte("{" + common + fields + "}")
	client := map[string]string{"codex": "codex-0.169.0", "gemini": "gemini-cli-0.61.0"}[a.agent]
	contract, err := clientcontract.Captured(client)
	if err != nil {
		a.t.Fatal(err)
	}
	if err := contract.Check(raw, false); err != nil { // only fields the client sends, in its types
		a.t.Fatal(err)
	}
	return runBin(a.t, a.env, raw, "claimcheck-hook", "--agent", a.agent)
}

func (a *dialectAgent) record(fields string) {
	a.t.Helper()
	if r := a.hook(fields); r.code != 0 || r.stdout != "" {
		a.t.Fatalf("%s hook %s: %+v", a.agent, fields, r)
	}
}

// shell runs one shell command as the agent's tool loop reports it.
func (a *dialectAgent) shell(cmd, out string) {
	a.t.Helper()
	switch a.agent {
	case "codex": // the model's call_id as tool_use_id in both events; the output a string
		id := fmt.Sprintf("call_%d", time.Now().UnixNano())
		in := fmt.Sprintf(`"tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":%q`, cmd, id)
		a.record(`"hook_event_name":"PreToolUse",` + in)
		a.record(`"hook_event_name":"PostToolUse",` + in + fmt.Sprintf(`,"tool_response":%q`, out))
	case "gemini": // no id at all
		in := fmt.Sprintf(`"tool_name":"run_shell_command","tool_input":{"command":%q,"description":"run"}`, cmd)
		a.record(`"hook_event_name":"BeforeTool",` + in)
		a.record(`"hook_event_name":"AfterTool",` + in + fmt.Sprintf(`,"tool_response":{"llmContent":%q,"returnDisplay":%q}`, out, out))
	}
}

func (a *dialectAgent) stop(message string) stopAnswer {
	a.t.Helper()
	var r result
	switch a.agent {
	case "codex":
		r = a.hook(fmt.Sprintf(`"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":%q`, message))
	case "gemini":
		r = a.hook(fmt.Sprintf(`"hook_event_name":"AfterAgent","prompt":"p","prompt_response":%q,"stop_hook_active":false`, message))
	}
	return readStop(a.t, r)
}

func (a *dialectAgent) claim() (verdict, result) {
	a.t.Helper()
	r := runBin(a.t, a.env, nil, "claimcheck", "claim", "--session", a.session, "--claim", "done", "--validator", "test_pass",
		"--args", `{"command_substring":"go test ./..."}`, "--json", "--timeout", "30s")
	var v verdict
	if err := json.Unmarshal([]byte(r.stdout), &v, json.RejectUnknownMembers(false)); err != nil {
		a.t.Fatalf("claim --json output is not a verdict: %v\n%+v", err, r)
	}
	return v, r
}

// TestCodexAndGeminiSessionsEndToEnd drives a session of each dialect
// through the built claimcheck-hook, claimcheck up (ingest, verifier,
// gatekeeper) and claimcheck claim: prompt, a shell tool call reported
// before and after, a claim, and stops. Codex: a stop claiming done is
// blocked without evidence (in Codex's words) and let through citing the
// PASS. Gemini CLI, which sends no tool ids: the same, its test run paired
// with its BeforeTool by tool and input; and a stop blocked again and
// again ends at claimcheck's cap, NOT verified.
func TestCodexAndGeminiSessionsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	hookDir := filepath.Join(dir, "hook")
	_, url := upEnv(t, []string{"CLAIMCHECK_HOOK_STATE_DIR=" + hookDir}, filepath.Join(dir, "data"), "127.0.0.1:0")
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + hookDir}
	const prompt = "Run the tests with `go test ./...` and tell me the result"

	t.Run("codex", func(t *testing.T) {
		a := &dialectAgent{t: t, env: env, agent: "codex", session: "01a21151-ecca-79a1-b5be-ff8d6979c8e2", turn: "01a21151-ed87-70b0-9c8e-d2b9cd4957aa"}
		a.record(`"hook_event_name":"SessionStart","source":"startup"`)
		a.record(fmt.Sprintf(`"hook_event_name":"UserPromptSubmit","prompt":%q`, prompt))
		if ans := a.stop("I fixed it. All tests pass now."); ans.Decision != "block" || !strings.Contains(ans.Reason, "claimcheck claim --claim done") {
			t.Fatalf("unbacked done (Codex's commands know their session: no --session): %+v", ans)
		}
		a.shell("go test ./...", goTestPass)
		v, r := a.claim()
		if v.Verdict != "PASS" || v.AttestationID == "" {
			t.Fatalf("claim: %+v %+v", v, r)
		}
		msg := "Fixed it; all tests pass.\n\n" + finalBlock("done", v.AttestationID)
		if ans := a.stop(msg); ans.Decision != "" {
			t.Fatalf("attested done was not let through: %+v", ans)
		}
		entries, _ := show(t, url, a.session, 7)
		var pre, post int
		for _, e := range entries {
			switch e.HookEvent {
			case "PreToolUse":
				pre++
			case "PostToolUse":
				post++
			}
		}
		if pre != 1 || post != 1 {
			t.Fatalf("ledger holds %d PreToolUse and %d PostToolUse, want 1 and 1", pre, post)
		}
	})

	t.Run("gemini", func(t *testing.T) {
		a := &dialectAgent{t: t, env: env, agent: "gemini", session: "e849aea9-2b9f-40db-a376-c106011fb0f2"}
		a.record(`"hook_event_name":"SessionStart","source":"startup"`)
		a.record(fmt.Sprintf(`"hook_event_name":"BeforeAgent","prompt":%q`, prompt))
		// Gemini CLI's commands get no session id: the claim to run names it.
		if ans := a.stop("I fixed it. All tests pass now."); ans.Decision != "block" ||
			!strings.Contains(ans.Reason, "claimcheck claim --session "+a.session+" --claim done") {
			t.Fatalf("unbacked done: %+v", ans)
		}
		a.shell("go test ./...", goTestPass)
		v, r := a.claim()
		if v.Verdict != "PASS" || v.AttestationID == "" {
			t.Fatalf("claim on a Gemini test run paired with its BeforeTool by input: %+v %+v", v, r)
		}
		msg := "Fixed it; all tests pass.\n\n" + finalBlock("done", v.AttestationID)
		if ans := a.stop(msg); ans.Decision != "" {
			t.Fatalf("attested done was not let through: %+v", ans)
		}
		// The ledger holds the mapped events, each with Gemini's bytes.
		entries, _ := show(t, url, a.session, 6)
		var mapped int
		for _, e := range entries {
			if (e.HookEvent == "PreToolUse" || e.HookEvent == "PostToolUse") && strings.Contains(e.Payload, `"agent_event":"`) &&
				strings.Contains(e.Payload, `"agent_payload":{`) {
				mapped++
			}
		}
		if mapped != 2 {
			t.Fatalf("%d mapped tool events in the ledger, want 2", mapped)
		}
		// The gate's file rules apply to Gemini's write_file: the agent may
		// not rewrite its own hook configuration.
		r = a.hook(`"hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"/repo/.gemini/settings.json","content":"{}"}`)
		if r.code != 0 || !strings.HasPrefix(r.stdout, `{"decision":"deny","reason":`) {
			t.Fatalf("write_file to .gemini/settings.json: %+v", r)
		}
		// Gemini CLI has no cap of its own: it feeds each block's reason back
		// as a BeforeAgent prompt and stops again. That prompt continues the
		// turn, so claimcheck's cap ends it, NOT verified.
		a = &dialectAgent{t: t, env: env, agent: "gemini", session: "e849aea9-2b9f-40db-a376-c106011fb0f3"}
		a.record(`"hook_event_name":"SessionStart","source":"startup"`)
		a.record(fmt.Sprintf(`"hook_event_name":"BeforeAgent","prompt":%q`, prompt))
		// An AfterTool with no BeforeTool of the same call before it (piped
		// into the hook by hand) backs nothing.
		r = a.hook(`"hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"go test ./...","description":"run"},` +
			fmt.Sprintf(`"tool_response":{"llmContent":%q,"returnDisplay":%q}`, goTestPass, goTestPass))
		if r.code != 0 {
			t.Fatalf("a lone AfterTool: %+v", r)
		}
		if v, r := a.claim(); v.Verdict == "PASS" || !strings.Contains(strings.Join(v.Reasons, " ")+v.NextStep, "no unpaired PreToolUse") {
			t.Fatalf("a lone Gemini AfterTool backed a claim, or the verdict does not say why not: %+v %+v", v, r)
		}
		// A passing AfterTool piped into the hook while the real run is
		// under way pairs with its BeforeTool first; the agent's own result
		// (a failure) then finds no call left, which voids both: the claim
		// is not PASS, and ledger show names the piped one.
		in := `"tool_name":"run_shell_command","tool_input":{"command":"go test ./...","description":"run"}`
		a.record(`"hook_event_name":"BeforeTool",` + in)
		a.record(`"hook_event_name":"AfterTool",` + in + fmt.Sprintf(`,"tool_response":{"llmContent":%q,"returnDisplay":%q}`, goTestPass, goTestPass))
		a.record(`"hook_event_name":"AfterTool",` + in + fmt.Sprintf(`,"tool_response":{"llmContent":%q,"returnDisplay":%q}`, goTestFail, goTestFail))
		if v, r := a.claim(); v.Verdict == "PASS" {
			t.Fatalf("a result piped in while the call ran backed a claim: %+v %+v", v, r)
		}
		if r := runBin(t, []string{"CLAIMCHECK_NATS_URL=" + url}, nil, "claimcheck", "ledger", "show", "--session", a.session); !strings.Contains(r.stdout, "besides the agent's own") {
			t.Fatalf("ledger show does not mark the voided results:\n%s", r.stdout)
		}
		for i := 0; ; i++ {
			ans := a.stop("I fixed it. All tests pass now.")
			if ans.Decision == "" {
				if !strings.Contains(ans.SystemMessage, "NOT verified") {
					t.Fatalf("stop let through without saying it is not verified: %+v", ans)
				}
				break
			}
			if i > 10 {
				t.Fatalf("still blocking after %d fed-back stops: the cap was not reached", i)
			}
			a.record(fmt.Sprintf(`"hook_event_name":"BeforeAgent","prompt":%q`, ans.Reason))
		}
	})
}

// cursor runs claimcheck-hook --agent cursor with a Cursor payload: the
// common input of Cursor's hooks documentation and the event's fields,
// checked against the payloads written from it (pkg/dialect/testdata/cursor-docs).
func (a *dialectAgent) cursor(fields string) result {
	a.t.Helper()
	raw := []byte(fmt.Sprintf(`{"conversation_id":%q,"generation_id":"c0a8e9b2-71d4-4c3e-8f16-5b2d9e0a7c33","model":"claude-4.5-sonnet",`+
		`"cursor_version":"1.7.2","workspace_roots":["/repo"],"user_email":null,%s}`, a.session, fields))
	contract, err := clientcontract.Captured("cursor-docs")
	if err != nil {
		a.t.Fatal(err)
	}
	if err := contract.Check(raw, false); err != nil { // only fields the documentation gives, in its types
		a.t.Fatal(err)
	}
	return runBin(a.t, a.env, raw, "claimcheck-hook", "--agent", "cursor")
}

// copilot runs claimcheck-hook --agent copilot --event EVENT, as hooks
// install configures it, with a camelCase payload of Copilot's CLI hooks
// reference (pkg/dialect/testdata/copilot-docs), which names no event.
func (a *dialectAgent) copilot(event, fields string) result {
	a.t.Helper()
	raw := []byte(fmt.Sprintf(`{"sessionId":%q,"timestamp":%d,"cwd":"/repo",%s}`, a.session, time.Now().UnixMilli(), fields))
	return runBin(a.t, a.env, raw, "claimcheck-hook", "--agent", "copilot", "--event", event)
}

func answerOf(t *testing.T, r result) map[string]string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("hook exit %d: %+v", r.code, r)
	}
	out := map[string]string{}
	if strings.TrimSpace(r.stdout) == "" {
		return out
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("hook stdout is not one JSON object of strings: %v: %q", err, r.stdout)
	}
	return out
}

// TestCursorAndCopilotSessionsEndToEnd drives a session of each through the
// built claimcheck-hook, claimcheck up and claimcheck claim: prompt, a shell
// tool call reported before and after, a claim, and stops. Neither agent
// sends a tool call id (the run pairs with its call by tool and input, as
// Gemini CLI's) nor a final message with its stop (the gate judges the turn
// on its PASS attestations): a stop is blocked in the agent's words without
// evidence and let through with it. In the next turn, with no evidence,
// every stop is blocked, the block reason fed back as a prompt continues
// the turn, and claimcheck's cap ends it, NOT verified (the agent has no
// field to show that in: the allow is silent, and claimcheck session status
// says it).
func TestCursorAndCopilotSessionsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	hookDir := filepath.Join(dir, "hook")
	_, url := upEnv(t, []string{"CLAIMCHECK_HOOK_STATE_DIR=" + hookDir}, filepath.Join(dir, "data"), "127.0.0.1:0")
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + hookDir}
	const prompt = "Run the tests with `go test ./...` and tell me the result"

	type agentSteps struct {
		prompt func(a *dialectAgent, text string) map[string]string
		shell  func(a *dialectAgent, cmd, out string) map[string]string // the answer to the call before it runs
		stop   func(a *dialectAgent) (reason string, ans map[string]string)
		denied func(ans map[string]string) bool
	}
	steps := map[string]agentSteps{
		"cursor": {
			prompt: func(a *dialectAgent, text string) map[string]string {
				return answerOf(t, a.cursor(fmt.Sprintf(`"hook_event_name":"beforeSubmitPrompt","prompt":%q,"attachments":[]`, text)))
			},
			shell: func(a *dialectAgent, cmd, out string) map[string]string {
				ans := answerOf(t, a.cursor(fmt.Sprintf(`"hook_event_name":"beforeShellExecution","command":%q,"cwd":"/repo"`, cmd)))
				if len(ans) == 0 {
					answerOf(t, a.cursor(fmt.Sprintf(`"hook_event_name":"afterShellExecution","command":%q,"output":%q,"duration":1234`, cmd, out)))
				}
				return ans
			},
			stop: func(a *dialectAgent) (string, map[string]string) {
				ans := answerOf(t, a.cursor(`"hook_event_name":"stop","status":"completed","loop_count":0`))
				return ans["followup_message"], ans
			},
			denied: func(ans map[string]string) bool {
				return ans["permission"] == "deny" && ans["agent_message"] != "" && ans["user_message"] == ans["agent_message"]
			},
		},
		"copilot": {
			prompt: func(a *dialectAgent, text string) map[string]string {
				return answerOf(t, a.copilot("userPromptSubmitted", fmt.Sprintf(`"prompt":%q`, text)))
			},
			shell: func(a *dialectAgent, cmd, out string) map[string]string {
				args := fmt.Sprintf(`"toolName":"bash","toolArgs":%q`, fmt.Sprintf(`{"command":%q,"description":"run"}`, cmd))
				ans := answerOf(t, a.copilot("preToolUse", args))
				if len(ans) == 0 {
					answerOf(t, a.copilot("postToolUse", args+fmt.Sprintf(`,"toolResult":{"resultType":"success","textResultForLlm":%q}`, out)))
				}
				return ans
			},
			stop: func(a *dialectAgent) (string, map[string]string) {
				ans := answerOf(t, a.copilot("agentStop", `"transcriptPath":"/home/u/.copilot/session-state/s/events.jsonl","stopReason":"end_turn"`))
				if ans["decision"] != "block" {
					return "", ans
				}
				return ans["reason"], ans
			},
			denied: func(ans map[string]string) bool {
				return ans["permissionDecision"] == "deny" && ans["permissionDecisionReason"] != ""
			},
		},
	}
	sessions := map[string]string{"cursor": "6b1c2f0e-3d4a-4f7b-9a51-0c8e2d7f4a20", "copilot": "8f2d5c1a-4b7e-4e0f-9c3d-2a6b1e8f7d60"}
	for _, agent := range []string{"cursor", "copilot"} {
		s := steps[agent]
		t.Run(agent, func(t *testing.T) {
			a := &dialectAgent{t: t, env: env, agent: agent, session: sessions[agent]}
			if agent == "copilot" {
				answerOf(t, a.copilot("sessionStart", fmt.Sprintf(`"source":"new","initialPrompt":%q`, prompt)))
			}
			if ans := s.prompt(a, prompt); len(ans) != 0 {
				t.Fatalf("prompt answered %v", ans)
			}
			reason, ans := s.stop(a)
			if !strings.Contains(reason, "claimcheck claim --session "+a.session+" ") {
				t.Fatalf("unbacked stop (the claim to run names the session): %v", ans)
			}
			if ans := s.shell(a, "go test ./...", goTestPass); len(ans) != 0 {
				t.Fatalf("go test ./... answered %v", ans)
			}
			v, r := a.claim()
			if v.Verdict != "PASS" || v.AttestationID == "" {
				t.Fatalf("claim on a %s test run paired with its call by tool and input: %+v %+v", agent, v, r)
			}
			if reason, ans := s.stop(a); reason != "" || len(ans) != 0 {
				t.Fatalf("stop of a turn whose task has a PASS answered %v, want silence (allowed)", ans)
			}
			// The pre-tool gate answers in the agent's words, and the call does not run.
			if ans := s.shell(a, "rm -rf /", ""); !s.denied(ans) {
				t.Fatalf("rm -rf / answered %v", ans)
			}
			if agent == "copilot" { // its file tools, when their arguments name the file in "path", meet the gate's file rules
				ans := answerOf(t, a.copilot("preToolUse", `"toolName":"create","toolArgs":"{\"path\":\"/repo/.github/hooks/claimcheck.json\",\"file_text\":\"{}\"}"`))
				if !s.denied(ans) {
					t.Fatalf("create .github/hooks/claimcheck.json answered %v", ans)
				}
				ans = answerOf(t, a.copilot("preToolUse", `"toolName":"view","toolArgs":"{\"path\":\"/repo/.env\"}"`))
				if ans["permissionDecision"] != "ask" || ans["permissionDecisionReason"] == "" {
					t.Fatalf("view .env answered %v", ans)
				}
				// The same session's events in the VS Code-compatible format (a
				// PascalCase hook file, or a .claude/settings.json, which Copilot
				// CLI also runs) through a hook installed without --agent: read
				// as Copilot's and answered in its words, not taken for Gemini's
				// (a session of its own, so that this denial does not count
				// toward the level of the one above).
				r := runBin(t, env, []byte(fmt.Sprintf(`{"hook_event_name":"PreToolUse","session_id":%q,"timestamp":%q,"cwd":"/repo",`+
					`"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}`, "8f2d5c1a-4b7e-4e0f-9c3d-2a6b1e8f7d61",
					time.Now().UTC().Format(time.RFC3339Nano))),
					"claimcheck-hook")
				if ans := answerOf(t, r); !s.denied(ans) {
					t.Fatalf("rm -rf / in the VS Code-compatible format answered %v", ans)
				}
				copilotReadsSecretsRedacted(t, env, prompt)
			}
			if agent == "cursor" { // beforeReadFile cannot ask: claimcheck's ask is a deny there
				ans := answerOf(t, a.cursor(`"hook_event_name":"beforeReadFile","file_path":"/repo/.env","content":"API_KEY=abc\n","attachments":[]`))
				if !s.denied(ans) || !strings.Contains(ans["agent_message"], "cannot ask") {
					t.Fatalf("read of .env answered %v", ans)
				}
				// Cursor's generic tool events carry a tool_use_id: a run
				// reported through them backs a claim, paired by id, in a
				// conversation of its own.
				g := &dialectAgent{t: t, env: env, agent: agent, session: "6b1c2f0e-3d4a-4f7b-9a51-0c8e2d7f4a21"}
				s.prompt(g, prompt)
				shell := `"tool_name":"Shell","tool_input":{"command":"go test ./...","working_directory":"/repo"},"tool_use_id":"call_7Hq2","cwd":"/repo"`
				if ans := answerOf(t, g.cursor(`"hook_event_name":"preToolUse",`+shell+`,"agent_message":"Running the tests."`)); len(ans) != 0 {
					t.Fatalf("generic preToolUse of go test answered %v", ans)
				}
				out, _ := json.Marshal(map[string]any{"output": goTestPass, "exitCode": 0})
				answerOf(t, g.cursor(fmt.Sprintf(`"hook_event_name":"postToolUse",%s,"tool_output":%q,"duration":1234`, shell, out)))
				if v, r := g.claim(); v.Verdict != "PASS" {
					t.Fatalf("claim on a run reported through Cursor's generic events: %+v %+v", v, r)
				}
				ans = answerOf(t, g.cursor(`"hook_event_name":"preToolUse","tool_name":"Shell","tool_input":{"command":"rm -rf /"},"tool_use_id":"call_9","cwd":"/repo"`))
				if !s.denied(ans) {
					t.Fatalf("generic preToolUse of rm -rf / answered %v", ans)
				}
			}
			// The ledger holds the mapped tool events with the agent's bytes, none with a tool_use_id.
			entries, _ := show(t, url, a.session, 4)
			var mapped int
			for _, e := range entries {
				if (e.HookEvent == "PreToolUse" || e.HookEvent == "PostToolUse") && strings.Contains(e.Payload, `"agent":"`+agent+`"`) &&
					strings.Contains(e.Payload, `"agent_payload":{`) {
					mapped++
					if strings.Contains(e.Payload, `"tool_use_id"`) {
						t.Errorf("a tool_use_id was made up: %s", e.Payload)
					}
				}
			}
			if mapped < 2 {
				t.Fatalf("%d mapped tool events in the ledger, want at least 2", mapped)
			}
			// A new task, no evidence for it: every stop is blocked; the
			// reason fed back as a prompt continues the turn, so claimcheck's
			// cap ends it.
			if ans := s.prompt(a, "Now run the linter with `go vet ./...` and tell me the result"); len(ans) != 0 {
				t.Fatalf("prompt answered %v", ans)
			}
			for i := 0; ; i++ {
				reason, ans := s.stop(a)
				if reason == "" {
					if len(ans) != 0 {
						t.Fatalf("capped stop answered %v, want silence (%s has no field for it)", ans, agent)
					}
					break
				}
				if i > 10 {
					t.Fatalf("still blocking after %d fed-back stops: the cap was not reached", i)
				}
				if ans := s.prompt(a, reason); len(ans) != 0 {
					t.Fatalf("fed-back reason answered %v", ans)
				}
			}
			st := runBin(t, env, nil, "claimcheck", "session", "status", "--session", a.session)
			if st.code != 1 || !strings.Contains(st.stdout, "not verified (capped") {
				t.Fatalf("session status after the cap: %+v", st)
			}
		})
	}
}

// copilotReadsSecretsRedacted: a Copilot result holding a secret is
// answered with modifiedResult, its text the result with the secret
// replaced by the rule's marker, and the warning in additionalContext;
// the answer never holds the secret (a session of its own).
func copilotReadsSecretsRedacted(t *testing.T, env []string, prompt string) {
	t.Helper()
	const token = "ghp_x1V9rK3sQ7bT2mN8pL4wZ6cY0dF5gH1jK9aB"
	a := &dialectAgent{t: t, env: env, agent: "copilot", session: "8f2d5c1a-4b7e-4e0f-9c3d-2a6b1e8f7d62"}
	answerOf(t, a.copilot("userPromptSubmitted", fmt.Sprintf(`"prompt":%q`, prompt)))
	args := fmt.Sprintf(`"toolName":"bash","toolArgs":%q`, `{"command":"cat notes.txt","description":"read the notes"}`)
	if ans := answerOf(t, a.copilot("preToolUse", args)); len(ans) != 0 {
		t.Fatalf("cat notes.txt answered %v", ans)
	}
	out := "deploy notes\nGITHUB_TOKEN=" + token + "\nrun make deploy\n"
	r := a.copilot("postToolUse", args+fmt.Sprintf(`,"toolResult":{"resultType":"success","textResultForLlm":%q}`, out))
	if r.code != 0 || strings.Contains(r.stdout, token) {
		t.Fatalf("postToolUse of a result holding a secret: exit %d, answer %q", r.code, r.stdout)
	}
	var ans struct {
		ModifiedResult struct {
			ResultType string `json:"resultType"`
			Text       string `json:"textResultForLlm"`
		} `json:"modifiedResult"`
		AdditionalContext string `json:"additionalContext"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil {
		t.Fatalf("answer %q: %v", r.stdout, err)
	}
	if ans.ModifiedResult.ResultType != "success" || ans.ModifiedResult.Text != strings.Replace(out, token, "[REDACTED:github-pat]", 1) ||
		!strings.Contains(ans.AdditionalContext, "secret") {
		t.Fatalf("the result holding a secret was answered %+v", ans)
	}
}
