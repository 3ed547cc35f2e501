package dialect

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/schemas"
)

// AskAsDeny prefixes the reason of an "ask" that a dialect cannot express
// and is answered as a deny, the safer of the two.
const AskAsDeny = "claimcheck would ask the user before this tool call, and this agent cannot ask from a hook, so it is denied: "

// CopilotWithheld begins the text that replaces a tool result claimcheck
// blocked, for agents that can replace it (Copilot's modifiedResult).
const CopilotWithheld = "claimcheck withheld this tool result: "

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
// reason carries the warning at high confidence, and below that
// hookSpecificOutput.additionalContext (its PostToolUse output schema has
// it, and codex 0.169.0 hands it to the model beside the output:
// e2e/agents TestCodex, suspect-output).
//
// Cursor and Copilot: see AnswerEvent.
func (a Agent) Answer(d schemas.GateDecision) []byte {
	return a.AnswerEvent("", d)
}

// AnswerEvent is Answer for the agent's event agentEvent (Cursor answers
// its events in different shapes):
//
//   - Cursor: a beforeShellExecution or beforeMCPExecution deny or ask is
//     {"permission", "user_message", "agent_message"} with the reason as
//     both messages; beforeReadFile takes allow or deny only, so its "ask"
//     is a deny; a stop block is {"followup_message": reason}, which Cursor
//     submits as the next user message. Cursor has no message for the user
//     on other answers, so a capped stop's NOT verified and SessionStart's
//     context are not shown (the ledger keeps them).
//   - Copilot (GitHub Copilot hooks reference; the same in its camelCase
//     and VS Code-compatible formats): a preToolUse deny or ask is
//     {"permissionDecision", "permissionDecisionReason"} (the cloud agent,
//     with no user, takes ask as deny); an agentStop or subagentStop block
//     is {"decision":"block","reason"}, the reason becoming the next
//     prompt; a flagged tool result gets {"additionalContext"}, appended to
//     the result the model reads, and a blocked one (postToolUse) has its
//     result replaced through modifiedResult by CopilotWithheld and the
//     reason, one holding a secret by its text redacted (the decision's
//     updated output); sessionStart's context is {"additionalContext"}. Copilot has
//     no message for the user (a capped stop's NOT verified is not shown).
func (a Agent) AnswerEvent(agentEvent string, d schemas.GateDecision) []byte {
	switch a {
	case Codex, Gemini:
	case Cursor, Copilot:
		return a.answerOther(agentEvent, d)
	default:
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
	case post && a == Codex && d.Decision != schemas.GateBlock && d.AdditionalContext != "":
		// Codex's PostToolUse takes the warning for the model (codex-rs
		// hooks schema; seen reaching the model with codex 0.169.0).
		out = append(out, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":`...)
		out = append(out, q(d.AdditionalContext)...)
		out = append(out, '}')
	case post && d.Decision == schemas.GateBlock:
		// Codex: the reason of a block, with the warning meant for the
		// model; Codex gives the model the reason instead of the output.
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

func (a Agent) answerOther(agentEvent string, d schemas.GateDecision) []byte {
	q := func(s string) string { b, _ := jsontext.AppendQuote(nil, s); return string(b) }
	deny := d.Decision == schemas.GateDeny || d.Decision == schemas.GateAsk
	switch {
	case d.HookEvent == schemas.HookPreToolUse && deny && a == Cursor:
		permission, reason := "deny", d.Reason
		if d.Decision == schemas.GateAsk {
			if cursorNoAsk[agentEvent] {
				reason = AskAsDeny + reason
			} else {
				permission = "ask"
			}
		}
		return []byte(`{"permission":` + q(permission) + `,"user_message":` + q(reason) + `,"agent_message":` + q(reason) + "}\n")
	case d.HookEvent == schemas.HookPreToolUse && deny: // Copilot
		return []byte(`{"permissionDecision":` + q(d.Decision) + `,"permissionDecisionReason":` + q(d.Reason) + "}\n")
	case a == Copilot && (d.HookEvent == schemas.HookPostToolUse || d.HookEvent == schemas.HookPostToolUseFailure):
		var out string
		if d.Decision == schemas.GateBlock && d.HookEvent == schemas.HookPostToolUse {
			// The result the model would read is replaced: what a block of a
			// result means here (postToolUse's modifiedResult).
			out = `"modifiedResult":{"resultType":"success","textResultForLlm":` + q(CopilotWithheld+d.Reason) + `}`
		} else if text, ok := redactedText(d); ok {
			// A result holding a secret: the model reads it redacted. The
			// hook maps textResultForLlm to tool_response, a string, so the
			// redacted output is that string.
			out = `"modifiedResult":{"resultType":"success","textResultForLlm":` + q(text) + `}`
		}
		if d.AdditionalContext != "" {
			if out != "" {
				out += ","
			}
			out += `"additionalContext":` + q(d.AdditionalContext)
		}
		if out == "" {
			return nil
		}
		return []byte("{" + out + "}\n")
	case a == Cursor && (agentEvent == "postToolUse" || agentEvent == "postToolUseFailure") && d.AdditionalContext != "":
		// The generic after-tool events take additional_context, appended
		// after the result (the after-Shell/MCP events read no answer).
		return []byte(`{"additional_context":` + q(d.AdditionalContext) + "}\n")
	case a == Copilot && d.HookEvent == schemas.HookSessionStart && d.AdditionalContext != "":
		return []byte(`{"additionalContext":` + q(d.AdditionalContext) + "}\n")
	case d.Decision != schemas.GateBlock || (d.HookEvent != schemas.HookStop && d.HookEvent != schemas.HookSubagentStop):
		return nil
	case a == Cursor:
		return []byte(`{"followup_message":` + q(d.Reason) + "}\n")
	default:
		return []byte(`{"decision":"block","reason":` + q(d.Reason) + "}\n")
	}
}

// redactedText is a PostToolUse decision's redacted output when it is a
// string (a Copilot result's text, as the hook maps it).
func redactedText(d schemas.GateDecision) (string, bool) {
	if d.HookEvent != schemas.HookPostToolUse || d.UpdatedToolOutput.Kind() != '"' {
		return "", false
	}
	var text string
	if json.Unmarshal(d.UpdatedToolOutput, &text) != nil {
		return "", false
	}
	return text, true
}
