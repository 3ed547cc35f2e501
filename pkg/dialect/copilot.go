package dialect

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/schemas"
)

// copilotHooks maps GitHub Copilot's hook events (their camelCase names in
// .github/hooks/*.json) onto the ledger's (docs.github.com, Copilot CLI
// hooks reference and hooks configuration reference; contract doc §4.4).
// errorOccurred, notification, permissionRequest, subagentStart and
// userPromptTransformed are recorded under their own names.
var copilotHooks = map[string]string{
	"sessionStart":          schemas.HookSessionStart,
	"sessionEnd":            schemas.HookSessionEnd,
	"userPromptSubmitted":   schemas.HookUserPromptSubmit,
	"preToolUse":            schemas.HookPreToolUse,
	"postToolUse":           schemas.HookPostToolUse,
	"postToolUseFailure":    schemas.HookPostToolUseFailure,
	"agentStop":             schemas.HookStop,
	"subagentStop":          schemas.HookSubagentStop,
	"preCompact":            schemas.HookPreCompact,
	"errorOccurred":         "errorOccurred",
	"notification":          "notification",
	"permissionRequest":     "permissionRequest",
	"subagentStart":         "subagentStart",
	"userPromptTransformed": "userPromptTransformed",
}

// CopilotEvents lists Copilot's hook events (sorted), for --event.
func CopilotEvents() []string {
	out := make([]string, 0, len(copilotHooks))
	for e := range copilotHooks {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// copilotVSCode maps the events of Copilot's VS Code-compatible format
// (the events named in PascalCase in a hook file, which is what Copilot CLI
// reads from a repository's .claude/settings.json too) onto its camelCase
// names.
var copilotVSCode = map[string]string{
	"SessionStart": "sessionStart", "SessionEnd": "sessionEnd", "UserPromptSubmit": "userPromptSubmitted",
	"PreToolUse": "preToolUse", "PostToolUse": "postToolUse", "PostToolUseFailure": "postToolUseFailure",
	"Stop": "agentStop", "SubagentStop": "subagentStop", "PreCompact": "preCompact", "ErrorOccurred": "errorOccurred",
	"Notification": "notification",
}

// copilotIn is the part of a Copilot payload the mapping reads, in either
// format: camelCase members, or the VS Code-compatible format's snake_case
// ones (GitHub Copilot hooks reference, "Hook event input payloads").
type copilotIn struct {
	SessionID      *string        `json:"sessionId"`
	HookEvent      *string        `json:"hook_event_name"`
	Cwd            *string        `json:"cwd"`
	TranscriptPath *string        `json:"transcriptPath"`
	Source         *string        `json:"source"`
	Reason         *string        `json:"reason"`
	Trigger        *string        `json:"trigger"`
	Prompt         *string        `json:"prompt"`
	ToolName       *string        `json:"toolName"`
	ToolArgs       jsontext.Value `json:"toolArgs"`
	ToolResult     jsontext.Value `json:"toolResult"`
	Error          jsontext.Value `json:"error"`
	// Both formats: agentStop's stop_hook_active; subagentStop's final text
	// (response, or last_assistant_message in the VS Code format).
	StopHookActive       *bool   `json:"stop_hook_active"`
	Response             *string `json:"response"`
	LastAssistantMessage *string `json:"last_assistant_message"`
	// The VS Code-compatible format's names.
	SessionIDSnake      *string        `json:"session_id"`
	TranscriptPathSnake *string        `json:"transcript_path"`
	ToolNameSnake       *string        `json:"tool_name"`
	ToolInput           jsontext.Value `json:"tool_input"`
	ToolResultSnake     jsontext.Value `json:"tool_result"`
}

// normalize reads the VS Code-compatible format's members into the
// camelCase ones (a payload carries one format or the other).
func (in *copilotIn) normalize() {
	first := func(a, b *string) *string {
		if a != nil {
			return a
		}
		return b
	}
	in.SessionID = first(in.SessionID, in.SessionIDSnake)
	in.TranscriptPath = first(in.TranscriptPath, in.TranscriptPathSnake)
	in.ToolName = first(in.ToolName, in.ToolNameSnake)
	in.Response = first(in.Response, in.LastAssistantMessage)
	if in.ToolArgs == nil {
		in.ToolArgs = in.ToolInput
	}
	if in.ToolResult == nil {
		in.ToolResult = in.ToolResultSnake
	}
}

// mapCopilot maps a Copilot payload (GitHub Copilot hooks reference, for
// Copilot CLI and the cloud (coding) agent, whose payloads are the same).
// In the camelCase format (the events named camelCase in the hook file, as
// hooks install writes them) the payload names no event (only
// notification's carries hook_event_name), so the event is opt.Event, which
// hooks install passes as --event; a payload naming another event is
// refused. In the VS Code-compatible format (events named in PascalCase, as
// in a .claude/settings.json, which Copilot CLI reads too) hook_event_name
// names it and the members are snake_case. sessionId (session_id) is the
// session; toolName and toolArgs (tool_name and tool_input; an object, or a
// JSON string holding one) the tool call, Copilot's bash named Bash (its
// {command} is Bash's; the VS Code format names it Bash itself); other
// tools keep their names and their input is not inspected. view, edit and
// create (Read, Edit and Write in the VS Code format) whose arguments hold
// a string "path" are Read, Edit and Write with that path as file_path
// added, so that the gate's file rules apply; one that also has a
// file_path member is left as it is (the gate could check the wrong path).
// postToolUse's toolResult.textResultForLlm is the output, a resultType
// other than "success" making it a PostToolUseFailure; postToolUseFailure's
// error is the error; agentStop's stop_hook_active is kept, and
// subagentStop's response is its final message. A userPromptSubmitted
// whose prompt is the last stop block's reason coming back is recorded as
// Copilot's own event. Copilot sends no tool call id and no final message
// with agentStop: they stay absent.
func mapCopilot(ev Event, raw []byte, opt Options) (Event, error) {
	var in copilotIn
	err := json.Unmarshal(raw, &in, json.RejectUnknownMembers(false))
	in.normalize()
	agentEvent := opt.Event
	if err == nil && in.HookEvent != nil && *in.HookEvent != "" {
		switch {
		case agentEvent == "":
			agentEvent = *in.HookEvent
		case !strings.EqualFold(agentEvent, *in.HookEvent):
			return ev, fmt.Errorf("%w: Copilot: the payload names event %q, the hook was run for %q (--event)",
				payload.ErrMalformed, *in.HookEvent, agentEvent)
		}
	}
	if agentEvent == "" {
		return ev, fmt.Errorf("%w: Copilot: its payloads name no event; run the hook with --event "+
			"(claimcheck hooks install --agent copilot does)", payload.ErrMissing)
	}
	ev.AgentEvent = agentEvent
	if camel, ok := copilotVSCode[agentEvent]; ok { // the VS Code-compatible format (and notification's payload)
		agentEvent = camel
	}
	hookEvent, ok := copilotHooks[agentEvent]
	if !ok {
		return ev, fmt.Errorf("%w: Copilot: unknown event %q", payload.ErrMalformed, ev.AgentEvent)
	}
	if hookEvent == agentEvent { // not mapped: recorded under the name it was sent as
		hookEvent = ev.AgentEvent
	}
	ev.Info.HookEvent = hookEvent // so that a refused gated event still fails closed
	if err != nil {
		return ev, fmt.Errorf("%w: Copilot %s: %s", payload.ErrMalformed, agentEvent, memberError(err))
	}
	if in.SessionID == nil || *in.SessionID == "" {
		return ev, fmt.Errorf("%w: Copilot %s: sessionId (a non-empty string; session_id in the VS Code-compatible format)",
			payload.ErrMissing, ev.AgentEvent)
	}
	out := mapped{SessionID: *in.SessionID, HookEvent: hookEvent, Cwd: in.Cwd, TranscriptPath: in.TranscriptPath,
		Agent: string(Copilot), AgentEvent: ev.AgentEvent}
	switch agentEvent {
	case "agentStop":
		out.StopHookActive = in.StopHookActive
	case "subagentStop":
		out.LastAssistantMessage = in.Response
	case "sessionStart":
		out.Source = in.Source
	case "sessionEnd":
		out.Reason = in.Reason
	case "preCompact":
		out.Trigger = in.Trigger
	case "userPromptSubmitted":
		if in.Prompt == nil {
			return ev, fmt.Errorf("%w: Copilot userPromptSubmitted: prompt (a string)", payload.ErrMissing)
		}
		if opt.StopFeedback != nil && opt.StopFeedback(*in.SessionID, *in.Prompt) {
			// Copilot enqueues a stop block's reason as the next prompt:
			// that continues the turn (see Options.StopFeedback).
			out.HookEvent = ev.AgentEvent
			break
		}
		out.Prompt = in.Prompt
	case "preToolUse", "postToolUse", "postToolUseFailure":
		if in.ToolName == nil || *in.ToolName == "" {
			return ev, fmt.Errorf("%w: Copilot %s: toolName (a non-empty string)", payload.ErrMissing, agentEvent)
		}
		args, err := objectArgs(in.ToolArgs)
		if err != nil {
			return ev, fmt.Errorf("%w: Copilot %s: toolArgs (%w)", payload.ErrMissing, agentEvent, err)
		}
		name := *in.ToolName
		if name == "bash" {
			name = "Bash"
		}
		if n, ok := copilotFileTools[name]; ok {
			if filePath, ok := copilotPath(args); ok {
				name, args = n, addMember(args, "file_path", filePath)
			}
		}
		out.ToolName, out.ToolInput = &name, args
		switch agentEvent {
		case "postToolUse":
			if out.HookEvent, out.ToolResponse, out.Error, err = copilotResult(in.ToolResult); err != nil {
				return ev, err
			}
		case "postToolUseFailure":
			var msg string
			if in.Error.Kind() != '"' || json.Unmarshal(in.Error, &msg) != nil {
				return ev, fmt.Errorf("%w: Copilot postToolUseFailure: error (a string)", payload.ErrMissing)
			}
			out.Error = &msg
		}
	}
	return finish(ev, &out, raw, opt)
}

// copilotResult maps postToolUse's toolResult {resultType,
// textResultForLlm}: the text is the output; a resultType other than
// "success" (failure, denied, error) makes it a PostToolUseFailure whose
// error is the text.
func copilotResult(v jsontext.Value) (event string, output, errText *string, err error) {
	var r struct {
		ResultType      *string `json:"resultType"`
		Text            *string `json:"textResultForLlm"`
		ResultTypeSnake *string `json:"result_type"` // the VS Code-compatible format
		TextSnake       *string `json:"text_result_for_llm"`
	}
	if v.Kind() != '{' || json.Unmarshal(v, &r, json.RejectUnknownMembers(false)) != nil {
		return "", nil, nil, fmt.Errorf("%w: Copilot postToolUse: toolResult (an object of strings)", payload.ErrMissing)
	}
	if r.ResultType == nil && r.Text == nil {
		r.ResultType, r.Text = r.ResultTypeSnake, r.TextSnake
	}
	if r.ResultType != nil && *r.ResultType != "success" {
		text := *r.ResultType
		if r.Text != nil && *r.Text != "" {
			text = *r.Text
		}
		return schemas.HookPostToolUseFailure, r.Text, &text, nil
	}
	return schemas.HookPostToolUse, r.Text, nil, nil
}

// copilotFileTools are Copilot's file tools (Copilot CLI hooks reference,
// "Tool names for hook matching") and the ledger's tool each is, when its
// arguments name the file in "path".
var copilotFileTools = map[string]string{
	"view": "Read", "edit": "Edit", "create": "Write",
	"Read": "Read", "Edit": "Edit", "Write": "Write", // the VS Code-compatible format's names
}

// copilotPath returns args' string "path" when args has no "file_path".
func copilotPath(args jsontext.Value) (string, bool) {
	var a struct {
		Path     *string        `json:"path"`
		FilePath jsontext.Value `json:"file_path"`
	}
	if json.Unmarshal(args, &a, json.RejectUnknownMembers(false)) != nil || a.Path == nil || *a.Path == "" || a.FilePath != nil {
		return "", false
	}
	return *a.Path, true
}

// addMember returns obj (a JSON object) with the string member name: val
// appended.
func addMember(obj jsontext.Value, name, val string) jsontext.Value {
	b := bytes.TrimSpace(obj)
	out := append([]byte(nil), b[:len(b)-1]...)
	if len(bytes.TrimSpace(b[1:len(b)-1])) > 0 {
		out = append(out, ',')
	}
	out, _ = jsontext.AppendQuote(out, name)
	out = append(out, ':')
	out, _ = jsontext.AppendQuote(out, val)
	return append(out, '}')
}
