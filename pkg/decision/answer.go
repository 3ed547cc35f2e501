package decision

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/schemas"
)

// ClaudeAnswer renders a decision the way Claude Code reads a hook's output
// (stdout of a command hook, the body of an http hook's 200 response):
//   - Stop/SubagentStop block: {"decision":"block","reason":…} (+ systemMessage);
//   - PreToolUse deny or ask: hookSpecificOutput.permissionDecision and its
//     reason (+ systemMessage);
//   - PostToolUse / PostToolUseFailure with a flagged result:
//     hookSpecificOutput.additionalContext (+ top-level "block" and reason
//     for PostToolUse at high confidence; + hookSpecificOutput.
//     updatedToolOutput, the result with its secrets redacted; +
//     systemMessage);
//   - UserPromptSubmit and SessionStart: systemMessage and
//     hookSpecificOutput.additionalContext;
//   - allow: nothing, or only a systemMessage (an explicit PreToolUse allow
//     would skip the user's permission prompt).
//
// An empty result means "answer by silence".
func ClaudeAnswer(d schemas.GateDecision) []byte {
	var out []byte
	q := func(s string) []byte { b, _ := jsontext.AppendQuote(nil, s); return b }
	sysMsg := func() {
		if d.SystemMessage != "" {
			out = append(out, `,"systemMessage":`...)
			out = append(out, q(d.SystemMessage)...)
		}
	}
	switch {
	case d.HookEvent == schemas.HookPreToolUse && (d.Decision == schemas.GateDeny || d.Decision == schemas.GateAsk):
		out = append(out, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":`...)
		out = append(out, q(d.Decision)...)
		out = append(out, `,"permissionDecisionReason":`...)
		out = append(out, q(d.Reason)...)
		out = append(out, '}')
		sysMsg()
		out = append(out, "}\n"...)
	case (d.HookEvent == schemas.HookPostToolUse || d.HookEvent == schemas.HookPostToolUseFailure) &&
		(d.Decision == schemas.GateBlock || d.AdditionalContext != ""):
		// A flagged tool result: the warning goes next to the result
		// (block + reason; PostToolUseFailure takes no decision, so its
		// reason joins the context) and into the model's context.
		ctx := d.AdditionalContext
		out = append(out, '{')
		if d.Decision == schemas.GateBlock && d.HookEvent == schemas.HookPostToolUse {
			out = append(out, `"decision":"block","reason":`...)
			out = append(out, q(d.Reason)...)
			out = append(out, ',')
		} else if d.Decision == schemas.GateBlock && d.Reason != "" {
			ctx = d.Reason + "\n" + ctx
		}
		out = append(out, `"hookSpecificOutput":{"hookEventName":`...)
		out = append(out, q(d.HookEvent)...)
		out = append(out, `,"additionalContext":`...)
		out = append(out, q(ctx)...)
		if len(d.UpdatedToolOutput) > 0 && d.HookEvent == schemas.HookPostToolUse {
			out = append(out, `,"updatedToolOutput":`...)
			out = append(out, d.UpdatedToolOutput...)
		}
		out = append(out, '}')
		sysMsg()
		out = append(out, "}\n"...)
	case d.Decision == schemas.GateBlock:
		out = append(out, `{"decision":"block","reason":`...)
		out = append(out, q(d.Reason)...)
		sysMsg()
		out = append(out, "}\n"...)
	case d.AdditionalContext != "" && (d.HookEvent == schemas.HookUserPromptSubmit || d.HookEvent == schemas.HookSessionStart):
		out = append(out, '{')
		if d.SystemMessage != "" {
			out = append(out, `"systemMessage":`...)
			out = append(out, q(d.SystemMessage)...)
			out = append(out, ',')
		}
		out = append(out, `"hookSpecificOutput":{"hookEventName":`...)
		out = append(out, q(d.HookEvent)...)
		out = append(out, `,"additionalContext":`...)
		out = append(out, q(d.AdditionalContext)...)
		out = append(out, "}}\n"...)
	case d.SystemMessage != "":
		out = append(out, `{"systemMessage":`...)
		out = append(out, q(d.SystemMessage)...)
		out = append(out, "}\n"...)
	}
	return out
}
