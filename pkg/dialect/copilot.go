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
// errorOccurred, notification, permissionRequest and subagentStart are
// recorded under their own names.
var copilotHooks = map[string]string{
	"sessionStart":        schemas.HookSessionStart,
	"sessionEnd":          schemas.HookSessionEnd,
	"userPromptSubmitted": schemas.HookUserPromptSubmit,
	"preToolUse":          schemas.HookPreToolUse,
	"postToolUse":         schemas.HookPostToolUse,
	"postToolUseFailure":  schemas.HookPostToolUseFailure,
	"agentStop":           schemas.HookStop,
	"subagentStop":        schemas.HookSubagentStop,
	"preCompact":          schemas.HookPreCompact,
	"errorOccurred":       "errorOccurred",
	"notification":        "notification",
	"permissionRequest":   "permissionRequest",
	"subagentStart":       "subagentStart",
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

// copilotIn is the part of a Copilot camelCase payload the mapping reads.
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
}

// mapCopilot maps a Copilot payload in its camelCase format (the events
// named camelCase in the hook file, as hooks install writes them). That
// format names no event (only notification's carries hook_event_name), so
// the event is opt.Event, which hooks install passes as --event; a payload
// naming another event is refused. sessionId is the session; toolName and
// toolArgs (an object, or a JSON string holding one: the two references
// disagree) the tool call, Copilot's bash named Bash (its {command} is
// Bash's); other tools keep their names and their input is not inspected.
// view, edit and create whose arguments hold a string "path" (GitHub's
// hooks configuration page reads edit's so; the other members are not
// documented) are Read, Edit and Write with that path as file_path added,
// so that the gate's file rules apply; one that also has a file_path
// member is left as it is (the gate could check the wrong path).
// postToolUse's toolResult.textResultForLlm is the output, a resultType
// other than "success" making it a PostToolUseFailure; postToolUseFailure's
// error is the error. A userPromptSubmitted whose prompt is the last stop
// block's reason coming back is recorded as Copilot's own event. Copilot sends no tool call id, no final message with
// agentStop and no stop_hook_active: they stay absent.
func mapCopilot(ev Event, raw []byte, opt Options) (Event, error) {
	var in copilotIn
	err := json.Unmarshal(raw, &in, json.RejectUnknownMembers(false))
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
	hookEvent, ok := copilotHooks[agentEvent]
	if !ok {
		if agentEvent == "Notification" { // notification's payload names itself so
			hookEvent, ok = copilotHooks["notification"]
		}
		if !ok {
			return ev, fmt.Errorf("%w: Copilot: unknown event %q", payload.ErrMalformed, agentEvent)
		}
	}
	ev.Info.HookEvent = hookEvent // so that a refused gated event still fails closed
	if err != nil {
		return ev, fmt.Errorf("%w: Copilot %s: %s", payload.ErrMalformed, agentEvent, memberError(err))
	}
	if in.SessionID == nil || *in.SessionID == "" {
		return ev, fmt.Errorf("%w: Copilot %s: sessionId (a non-empty string; the camelCase payloads carry it)",
			payload.ErrMissing, agentEvent)
	}
	out := mapped{SessionID: *in.SessionID, HookEvent: hookEvent, Cwd: in.Cwd, TranscriptPath: in.TranscriptPath,
		Agent: string(Copilot), AgentEvent: agentEvent}
	switch agentEvent {
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
			out.HookEvent = agentEvent
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
		ResultType *string `json:"resultType"`
		Text       *string `json:"textResultForLlm"`
	}
	if v.Kind() != '{' || json.Unmarshal(v, &r, json.RejectUnknownMembers(false)) != nil {
		return "", nil, nil, fmt.Errorf("%w: Copilot postToolUse: toolResult (an object of strings)", payload.ErrMissing)
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
var copilotFileTools = map[string]string{"view": "Read", "edit": "Edit", "create": "Write"}

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
