package decision

import (
	"encoding/json"
	"testing"

	"github.com/claimcheck/claimcheck/schemas"
)

func TestClaudeAnswer(t *testing.T) {
	for _, tc := range []struct {
		d    schemas.GateDecision
		want string
	}{
		{schemas.GateDecision{HookEvent: "Stop", Decision: schemas.GateAllow}, ""},
		{schemas.GateDecision{HookEvent: "PreToolUse", Decision: schemas.GateAllow}, ""},
		{schemas.GateDecision{HookEvent: "Stop", Decision: schemas.GateBlock, Reason: "run \"pytest\""}, `{"decision":"block","reason":"run \"pytest\""}`},
		{schemas.GateDecision{HookEvent: "Stop", Decision: schemas.GateBlock, Reason: "r", SystemMessage: "m"}, `{"decision":"block","reason":"r","systemMessage":"m"}`},
		{schemas.GateDecision{HookEvent: "Stop", Decision: schemas.GateAllow, SystemMessage: "override"}, `{"systemMessage":"override"}`},
		{schemas.GateDecision{HookEvent: "PreToolUse", Decision: schemas.GateDeny, Reason: "no"}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{schemas.GateDecision{HookEvent: "PreToolUse", Decision: schemas.GateAsk, Reason: "sure?"}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"sure?"}}`},
		{schemas.GateDecision{HookEvent: "UserPromptSubmit", Decision: schemas.GateAllow, SystemMessage: "alert", AdditionalContext: "ctx"}, `{"systemMessage":"alert","hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ctx"}}`},
		{schemas.GateDecision{HookEvent: "UserPromptSubmit", Decision: schemas.GateAllow, AdditionalContext: "ctx"}, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ctx"}}`},
		// A refusal at a degradation level carries the level change for the user.
		{schemas.GateDecision{HookEvent: "PreToolUse", Decision: schemas.GateDeny, Reason: "no", SystemMessage: "level"}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"},"systemMessage":"level"}`},
		// Tool results: clean is silence; flagged is additionalContext; high confidence also blocks.
		{schemas.GateDecision{HookEvent: "PostToolUse", Decision: schemas.GateAllow}, ""},
		{schemas.GateDecision{HookEvent: "PostToolUse", Decision: schemas.GateAllow, AdditionalContext: "data", SystemMessage: "m"}, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"data"},"systemMessage":"m"}`},
		{schemas.GateDecision{HookEvent: "PostToolUse", Decision: schemas.GateBlock, Reason: "r", AdditionalContext: "data"}, `{"decision":"block","reason":"r","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"data"}}`},
		{schemas.GateDecision{HookEvent: "PostToolUseFailure", Decision: schemas.GateAllow, AdditionalContext: "data"}, `{"hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"data"}}`},
	} {
		got := string(ClaudeAnswer(tc.d))
		if tc.want == "" {
			if got != "" {
				t.Errorf("%+v: %q, want silence", tc.d, got)
			}
			continue
		}
		if got != tc.want+"\n" {
			t.Errorf("%+v:\n got %s\nwant %s", tc.d, got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("not JSON: %s", got)
		}
	}
}
