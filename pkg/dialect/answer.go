package dialect

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/schemas"
)

// AskAsDeny prefixes the reason of an "ask" that a dialect cannot express
// and is answered as a deny, the safer of the two.
const AskAsDeny = "claimcheck would ask the user before this tool call, and this agent cannot ask from a hook, so it is denied: "

// Answer renders a gate decision (d.HookEvent in the ledger's vocabulary)
// in the agent's own words, for the hook's stdout with exit code 0. An
// empty result means "answer by silence" (allow). When stdout cannot be
// written, exit code 2 with the reason on stderr blocks a stop and denies
// a tool call in all three dialects.
//
//   - Claude Code: decision.ClaudeAnswer.
//   - Codex: a PreToolUse deny is Claude Code's hookSpecificOutput; "ask"
//     is answered as a deny (Codex refuses "ask" and then runs the call); a
//     Stop block is {"decision":"block","reason"}.
//   - Gemini CLI: a BeforeTool deny is {"decision":"deny","reason"}, "ask"
//     answered as a deny (Gemini has no ask); an AfterAgent block is
//     {"decision":"block","reason"} (the alias of "deny" that gemini-cli
//     0.61.0 was seen to honour), the reason becoming the next prompt.
//
// Codex and Gemini get no hookSpecificOutput.additionalContext for
// SessionStart or a prompt: what is meant for the model is shown to the
// user as the systemMessage instead. A flagged tool result (PostToolUse):
// Gemini's AfterTool gets hookSpecificOutput.additionalContext (and a
// block with its reason at high confidence); Codex gets a block whose
// reason carries the warning at high confidence, and below that only the
// systemMessage (the user is told; the model is not).
func (a Agent) Answer(d schemas.GateDecision) []byte {
	if a != Codex && a != Gemini {
		return decision.ClaudeAnswer(d)
	}
	q := func(s string) []byte { b, _ := jsontext.AppendQuote(nil, s); return b }
	var out []byte
	reason := d.Reason
	if d.Decision == schemas.GateAsk {
		reason = AskAsDeny + reason
	}
	post := d.HookEvent == schemas.HookPostToolUse || d.HookEvent == schemas.HookPostToolUseFailure
	switch {
	case post && a == Gemini && (d.Decision == schemas.GateBlock || d.AdditionalContext != ""):
		// AfterTool takes hookSpecificOutput.additionalContext (gemini-cli
		// docs/hooks/reference.md; not captured from a real client).
		out = append(out, '{')
		if d.Decision == schemas.GateBlock {
			out = append(out, `"decision":"block","reason":`...)
			out = append(out, q(d.Reason)...)
			out = append(out, ',')
		}
		out = append(out, `"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":`...)
		out = append(out, q(d.AdditionalContext)...)
		out = append(out, '}')
	case post && d.Decision == schemas.GateBlock:
		// Codex: the reason of a block, with the warning meant for the
		// model (its PostToolUse additionalContext is not documented).
		out = append(out, `{"decision":"block","reason":`...)
		out = append(out, q(d.Reason+"\n"+d.AdditionalContext)...)
	case d.HookEvent == schemas.HookPreToolUse && (d.Decision == schemas.GateDeny || d.Decision == schemas.GateAsk):
		if a == Codex {
			out = append(out,
				`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":`...)
			out = append(out, q(reason)...)
			out = append(out, '}')
			if d.SystemMessage != "" {
				out = append(out, `,"systemMessage":`...)
				out = append(out, q(d.SystemMessage)...)
			}
			return append(out, "}\n"...)
		}
		out = append(out, `{"decision":"deny","reason":`...)
		out = append(out, q(reason)...)
	case d.Decision == schemas.GateBlock:
		out = append(out, `{"decision":"block","reason":`...)
		out = append(out, q(reason)...)
	default:
		msg := d.SystemMessage
		if msg == "" {
			msg = d.AdditionalContext
		}
		if msg == "" {
			return nil
		}
		out = append(out, `{"systemMessage":`...)
		return append(append(out, q(msg)...), "}\n"...)
	}
	if d.SystemMessage != "" {
		out = append(out, `,"systemMessage":`...)
		out = append(out, q(d.SystemMessage)...)
	}
	return append(out, "}\n"...)
}
