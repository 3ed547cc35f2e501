package dialect_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/dialect"
	"github.com/claimcheck/claimcheck/schemas"
)

// TestAnswerShapes checks each dialect's answer against the output
// contract in the contract doc (§1.4 Claude Code, §4.1 Codex, §4.3 and
// §4.7 Gemini CLI).
func TestAnswerShapes(t *testing.T) {
	deny := schemas.GateDecision{HookEvent: schemas.HookPreToolUse, Decision: schemas.GateDeny, Reason: "R"}
	ask := schemas.GateDecision{HookEvent: schemas.HookPreToolUse, Decision: schemas.GateAsk, Reason: "R"}
	block := schemas.GateDecision{HookEvent: schemas.HookStop, Decision: schemas.GateBlock, Reason: "R", SystemMessage: "S"}
	allow := schemas.GateDecision{HookEvent: schemas.HookStop, Decision: schemas.GateAllow}
	capped := schemas.GateDecision{HookEvent: schemas.HookStop, Decision: schemas.GateAllow, SystemMessage: "NOT verified"}
	start := schemas.GateDecision{HookEvent: schemas.HookSessionStart, Decision: schemas.GateAllow, SystemMessage: "S",
		AdditionalContext: "C"}
	prompt := schemas.GateDecision{HookEvent: schemas.HookUserPromptSubmit, Decision: schemas.GateAllow, AdditionalContext: "C"}
	flagged := schemas.GateDecision{HookEvent: schemas.HookPostToolUse, Decision: schemas.GateAllow, AdditionalContext: "C", SystemMessage: "S"}
	blocked := schemas.GateDecision{HookEvent: schemas.HookPostToolUse, Decision: schemas.GateBlock, Reason: "R", AdditionalContext: "C"}
	tests := []struct {
		name  string
		agent dialect.Agent
		d     schemas.GateDecision
		want  string // "" answers by silence
	}{
		{"claude deny", dialect.Claude, deny, string(decision.ClaudeAnswer(deny))},
		{"claude ask", dialect.Claude, ask, string(decision.ClaudeAnswer(ask))},
		{"claude block", dialect.Claude, block, string(decision.ClaudeAnswer(block))},

		{"claude flagged result", dialect.Claude, flagged, string(decision.ClaudeAnswer(flagged))},
		{"codex flagged result", dialect.Codex, flagged, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"C"},"systemMessage":"S"}`},
		{"codex blocked result", dialect.Codex, blocked, `{"decision":"block","reason":"R\nC"}`},
		{"gemini flagged result", dialect.Gemini, flagged, `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"C"},"systemMessage":"S"}`},
		{"gemini blocked result", dialect.Gemini, blocked,
			`{"decision":"block","reason":"R","hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"C"}}`},

		{"codex deny", dialect.Codex, deny,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}`},
		{"codex ask is a deny", dialect.Codex, ask,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"` +
				dialect.AskAsDeny + `R"}}`},
		{"codex stop block", dialect.Codex, block, `{"decision":"block","reason":"R","systemMessage":"S"}`},
		{"codex allow", dialect.Codex, allow, ""},
		{"codex capped allow", dialect.Codex, capped, `{"systemMessage":"NOT verified"}`},
		{"codex session start", dialect.Codex, start, `{"systemMessage":"S"}`},
		{"codex prompt context", dialect.Codex, prompt, `{"systemMessage":"C"}`},

		{"gemini deny", dialect.Gemini, deny, `{"decision":"deny","reason":"R"}`},
		{"gemini ask is a deny", dialect.Gemini, ask, `{"decision":"deny","reason":"` + dialect.AskAsDeny + `R"}`},
		{"gemini stop block", dialect.Gemini, block, `{"decision":"block","reason":"R","systemMessage":"S"}`},
		{"gemini allow", dialect.Gemini, allow, ""},
		{"gemini capped allow", dialect.Gemini, capped, `{"systemMessage":"NOT verified"}`},
		{"gemini session start", dialect.Gemini, start, `{"systemMessage":"S"}`},

		{"cursor deny", dialect.Cursor, deny, `{"permission":"deny","user_message":"R","agent_message":"R"}`},
		{"cursor ask", dialect.Cursor, ask, `{"permission":"ask","user_message":"R","agent_message":"R"}`},
		{"cursor stop block", dialect.Cursor, block, `{"followup_message":"R"}`},
		{"cursor allow", dialect.Cursor, allow, ""},
		{"cursor capped allow (no message field)", dialect.Cursor, capped, ""},
		{"cursor session start", dialect.Cursor, start, ""},
		{"cursor prompt context", dialect.Cursor, prompt, ""},

		{"copilot deny", dialect.Copilot, deny, `{"permissionDecision":"deny","permissionDecisionReason":"R"}`},
		{"copilot ask", dialect.Copilot, ask, `{"permissionDecision":"ask","permissionDecisionReason":"R"}`},
		{"copilot flagged result", dialect.Copilot, flagged, `{"additionalContext":"C"}`},
		{"copilot blocked result", dialect.Copilot, blocked,
			`{"modifiedResult":{"resultType":"success","textResultForLlm":"` + dialect.CopilotWithheld + `R"},"additionalContext":"C"}`},
		{"copilot flagged failure", dialect.Copilot,
			schemas.GateDecision{HookEvent: schemas.HookPostToolUseFailure, Decision: schemas.GateBlock, Reason: "R", AdditionalContext: "C"},
			`{"additionalContext":"C"}`},
		{"copilot clean result", dialect.Copilot, schemas.GateDecision{HookEvent: schemas.HookPostToolUse, Decision: schemas.GateAllow}, ""},
		{"copilot result with a secret: read redacted", dialect.Copilot, schemas.GateDecision{HookEvent: schemas.HookPostToolUse,
			Decision: schemas.GateAllow, AdditionalContext: "C", UpdatedToolOutput: jsontext.Value(`"t=[REDACTED:github-pat]\n\"q\""`)},
			`{"modifiedResult":{"resultType":"success","textResultForLlm":"t=[REDACTED:github-pat]\n\"q\""},"additionalContext":"C"}`},
		{"copilot result with a secret, blocked: withheld", dialect.Copilot, schemas.GateDecision{HookEvent: schemas.HookPostToolUse,
			Decision: schemas.GateBlock, Reason: "R", AdditionalContext: "C", UpdatedToolOutput: jsontext.Value(`"t=[REDACTED:x]"`)},
			`{"modifiedResult":{"resultType":"success","textResultForLlm":"` + dialect.CopilotWithheld + `R"},"additionalContext":"C"}`},
		{"copilot redacted output not a text (no Copilot shape)", dialect.Copilot, schemas.GateDecision{HookEvent: schemas.HookPostToolUse,
			Decision: schemas.GateAllow, AdditionalContext: "C", UpdatedToolOutput: jsontext.Value(`{"stdout":"[REDACTED:x]"}`)},
			`{"additionalContext":"C"}`},
		{"copilot failure with a redacted output (an error is not replaced)", dialect.Copilot, schemas.GateDecision{
			HookEvent: schemas.HookPostToolUseFailure, Decision: schemas.GateAllow, AdditionalContext: "C",
			UpdatedToolOutput: jsontext.Value(`"[REDACTED:x]"`)}, `{"additionalContext":"C"}`},
		{"copilot stop block", dialect.Copilot, block, `{"decision":"block","reason":"R"}`},
		{"copilot allow", dialect.Copilot, allow, ""},
		{"copilot capped allow (no message field)", dialect.Copilot, capped, ""},
		{"copilot session start", dialect.Copilot, start, `{"additionalContext":"C"}`},
		{"copilot prompt context (its command hooks' output is dropped)", dialect.Copilot, prompt, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tt.agent.Answer(tt.d))
			if tt.want == "" {
				if got != "" {
					t.Fatalf("answer %q, want silence", got)
				}
				return
			}
			if want := tt.want; want[len(want)-1] != '\n' {
				tt.want += "\n"
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(got), &v); err != nil {
				t.Errorf("answer is not one JSON object: %v", err)
			}
		})
	}
}

// TestCursorReadFileCannotAsk: Cursor's beforeReadFile takes allow or deny
// only, so an ask there is a deny saying so.
func TestCursorReadFileCannotAsk(t *testing.T) {
	ask := schemas.GateDecision{HookEvent: schemas.HookPreToolUse, Decision: schemas.GateAsk, Reason: "R"}
	want := `{"permission":"deny","user_message":"` + dialect.AskAsDeny + `R","agent_message":"` + dialect.AskAsDeny + `R"}` + "\n"
	if got := string(dialect.Cursor.AnswerEvent("beforeReadFile", ask)); got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
	if got := string(dialect.Cursor.AnswerEvent("beforeShellExecution", ask)); !strings.HasPrefix(got, `{"permission":"ask"`) {
		t.Errorf("shell ask answered %q", got)
	}
}

// TestCodexAnswersMeetItsOutputSchemas validates every answer claimcheck
// gives Codex against the output contract Codex publishes for each event
// (testdata/codex-output, written from codex-rs/hooks/schema/generated).
func TestCodexAnswersMeetItsOutputSchemas(t *testing.T) {
	c := jsonschema.NewCompiler()
	compiled := map[string]*jsonschema.Schema{}
	for event, file := range map[string]string{
		schemas.HookPreToolUse: "pre-tool-use", schemas.HookPostToolUse: "post-tool-use", schemas.HookPostToolUseFailure: "post-tool-use",
		schemas.HookStop: "stop", schemas.HookSessionStart: "session-start", schemas.HookUserPromptSubmit: "user-prompt-submit",
	} {
		path := filepath.Join("testdata", "codex-output", file+".json")
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(fixture(t, filepath.Join("codex-output", file+".json"))))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(path, doc); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
		if compiled[event], err = c.Compile(path); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("why ", 50)
	decisions := []schemas.GateDecision{
		{HookEvent: schemas.HookPreToolUse, Decision: schemas.GateDeny, Reason: long},
		{HookEvent: schemas.HookPreToolUse, Decision: schemas.GateAsk, Reason: "R", SystemMessage: "S"},
		{HookEvent: schemas.HookPreToolUse, Decision: schemas.GateAllow},
		{HookEvent: schemas.HookStop, Decision: schemas.GateBlock, Reason: "R", SystemMessage: "S"},
		{HookEvent: schemas.HookStop, Decision: schemas.GateAllow, SystemMessage: "NOT verified"},
		{HookEvent: schemas.HookSessionStart, Decision: schemas.GateAllow, SystemMessage: "S", AdditionalContext: "C"},
		{HookEvent: schemas.HookUserPromptSubmit, Decision: schemas.GateAllow, AdditionalContext: "C"},
		{HookEvent: schemas.HookPostToolUse, Decision: schemas.GateAllow, AdditionalContext: "C", SystemMessage: "S"},
		{HookEvent: schemas.HookPostToolUse, Decision: schemas.GateBlock, Reason: "R", AdditionalContext: "C"},
		{HookEvent: schemas.HookPostToolUseFailure, Decision: schemas.GateAllow, AdditionalContext: "C"},
	}
	checked := 0
	for _, d := range decisions {
		out := dialect.Codex.Answer(d)
		if len(out) == 0 {
			continue // silence is always a valid answer
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%s %s: answer is not JSON: %v: %s", d.HookEvent, d.Decision, err, out)
		}
		if err := compiled[d.HookEvent].Validate(v); err != nil {
			t.Errorf("%s %s: answer %s does not meet Codex's output schema: %v", d.HookEvent, d.Decision, out, err)
		}
		checked++
	}
	if checked < 8 {
		t.Fatalf("only %d answers were checked", checked)
	}
	// The schemas can fail: a member Codex does not know is refused.
	v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"decision":"deny","reason":"R"}`))
	if compiled[schemas.HookStop].Validate(v) == nil {
		t.Fatal("the stop schema took a decision Codex does not know")
	}
}

// Cursor's generic events: preToolUse does not act on ask (a deny saying
// so), and postToolUse takes additional_context where the older
// afterShellExecution reads no answer.
func TestCursorGenericEventAnswers(t *testing.T) {
	ask := schemas.GateDecision{HookEvent: schemas.HookPreToolUse, Decision: schemas.GateAsk, Reason: "R"}
	if got := string(dialect.Cursor.AnswerEvent("preToolUse", ask)); !strings.HasPrefix(got, `{"permission":"deny","user_message":"`+dialect.AskAsDeny) {
		t.Errorf("preToolUse ask answered %q", got)
	}
	flagged := schemas.GateDecision{HookEvent: schemas.HookPostToolUse, Decision: schemas.GateBlock, Reason: "R", AdditionalContext: "C"}
	if got, want := string(dialect.Cursor.AnswerEvent("postToolUse", flagged)), `{"additional_context":"C"}`+"\n"; got != want {
		t.Errorf("postToolUse flagged answered %q, want %q", got, want)
	}
	if got := dialect.Cursor.AnswerEvent("afterShellExecution", flagged); len(got) != 0 {
		t.Errorf("afterShellExecution answered %q, want silence", got)
	}
}
