package dialect

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/schemas"
)

// cursorHooks maps Cursor's agent hook events onto the ledger's (Cursor's
// hooks documentation, cursor.com/docs/agent/hooks; contract doc §4.2).
// The newer generic tool events preToolUse, postToolUse and
// postToolUseFailure, and sessionStart and sessionEnd, are mapped as
// third-party copies of Cursor's page give them (testdata/cursor-docs
// README): they carry a tool_use_id. Every other event (afterAgentResponse,
// afterAgentThought, the Tab hooks, the subagent and preCompact events) is
// recorded under its own name, with the conversation as the session.
var cursorHooks = map[string]string{
	"preToolUse":           schemas.HookPreToolUse,
	"postToolUse":          schemas.HookPostToolUse,
	"postToolUseFailure":   schemas.HookPostToolUseFailure,
	"sessionStart":         schemas.HookSessionStart,
	"sessionEnd":           schemas.HookSessionEnd,
	"beforeSubmitPrompt":   schemas.HookUserPromptSubmit,
	"beforeShellExecution": schemas.HookPreToolUse,
	"afterShellExecution":  schemas.HookPostToolUse,
	"beforeMCPExecution":   schemas.HookPreToolUse,
	"afterMCPExecution":    schemas.HookPostToolUse,
	"beforeReadFile":       schemas.HookPreToolUse,
	"afterFileEdit":        schemas.HookPostToolUse,
	"stop":                 schemas.HookStop,
}

// CursorPermissionEvents are Cursor's events answered with
// {"permission", "user_message", "agent_message"}; beforeReadFile takes
// allow or deny only.
var CursorPermissionEvents = map[string]bool{"beforeShellExecution": true, "beforeMCPExecution": true, "beforeReadFile": true,
	"preToolUse": true}

// cursorNoAsk are the permission events whose "ask" Cursor does not
// enforce: beforeReadFile takes allow or deny only, and preToolUse's
// schema accepts ask but does not act on it (the copies of its page say).
var cursorNoAsk = map[string]bool{"beforeReadFile": true, "preToolUse": true}

// cursorIn is the part of a Cursor payload the mapping reads.
type cursorIn struct {
	ConversationID *string        `json:"conversation_id"`
	HookEvent      string         `json:"hook_event_name"`
	TranscriptPath *string        `json:"transcript_path"`
	Cwd            *string        `json:"cwd"`
	Command        *string        `json:"command"`
	Output         *string        `json:"output"`
	ToolName       *string        `json:"tool_name"`
	ToolInput      jsontext.Value `json:"tool_input"`
	ResultJSON     *string        `json:"result_json"`
	FilePath       *string        `json:"file_path"`
	Edits          jsontext.Value `json:"edits"`
	Prompt         *string        `json:"prompt"`
	Status         *string        `json:"status"`
	// The generic tool events.
	ToolUseID    *string `json:"tool_use_id"`
	ToolOutput   *string `json:"tool_output"`
	ErrorMessage *string `json:"error_message"`
}

// mapCursor maps a Cursor payload: conversation_id is the session (it is
// stable across the conversation's turns); beforeShellExecution and
// afterShellExecution are a Bash call ({command}, the output as the
// result); beforeMCPExecution and afterMCPExecution the MCP tool by its
// name (tool_input, a JSON string, decoded; result_json the result);
// beforeReadFile a Read ({file_path}: the file's content is not copied,
// only kept in agent_payload); afterFileEdit a MultiEdit's result
// ({file_path, edits}: Claude Code's MultiEdit input); beforeSubmitPrompt a
// prompt (unless it is the last stop block's followup_message coming back,
// recorded as Cursor's own beforeSubmitPrompt); stop a Stop when its status is "completed" (or absent): an
// aborted or failed loop is recorded as Cursor's own "stop", not gated (a
// block would auto-submit a follow-up after the user stopped the agent).
// Cursor sends no tool call id, no final message with stop and no
// stop_hook_active (its loop_count is kept in agent_payload): they stay
// absent.
func mapCursor(ev Event, raw []byte, opt Options) (Event, error) {
	hookEvent, ok := cursorHooks[ev.AgentEvent]
	if !ok {
		hookEvent = ev.AgentEvent
	}
	ev.Info.HookEvent = hookEvent // so that a refused gated event still fails closed
	var in cursorIn
	if err := json.Unmarshal(raw, &in, json.RejectUnknownMembers(false)); err != nil {
		return ev, fmt.Errorf("%w: Cursor %s: %s", payload.ErrMalformed, ev.AgentEvent, memberError(err))
	}
	if in.HookEvent == "" {
		return ev, fmt.Errorf("%w: Cursor: hook_event_name (a non-empty string)", payload.ErrMissing)
	}
	if in.ConversationID == nil || *in.ConversationID == "" {
		return ev, fmt.Errorf("%w: Cursor %s: conversation_id (a non-empty string)", payload.ErrMissing, in.HookEvent)
	}
	out := mapped{SessionID: *in.ConversationID, HookEvent: hookEvent, Cwd: in.Cwd, TranscriptPath: in.TranscriptPath,
		Agent: string(Cursor), AgentEvent: in.HookEvent}
	obj := func(members ...any) jsontext.Value {
		m := map[string]any{}
		for i := 0; i+1 < len(members); i += 2 {
			m[members[i].(string)] = members[i+1]
		}
		b, _ := json.Marshal(m, json.Deterministic(true))
		return b
	}
	need := func(v *string, what string) error {
		if v == nil || *v == "" {
			return fmt.Errorf("%w: Cursor %s: %s (a non-empty string)", payload.ErrMissing, in.HookEvent, what)
		}
		return nil
	}
	tool := func(name string) { out.ToolName = &name }
	switch in.HookEvent {
	case "preToolUse", "postToolUse", "postToolUseFailure":
		if err := need(in.ToolName, "tool_name"); err != nil {
			return ev, err
		}
		if err := need(in.ToolUseID, "tool_use_id"); err != nil {
			return ev, err
		}
		input, err := objectArgs(in.ToolInput)
		if err != nil {
			return ev, fmt.Errorf("%w: Cursor %s: tool_input (%w)", payload.ErrMissing, in.HookEvent, err)
		}
		name := *in.ToolName
		if name == "Shell" { // {command, …}: the command is Bash's
			name = "Bash"
		}
		tool(name)
		out.ToolInput, out.ToolUseID = input, in.ToolUseID
		switch in.HookEvent {
		case "postToolUse":
			out.ToolResponse = cursorToolOutput(in.ToolOutput)
		case "postToolUseFailure":
			msg := "the tool failed"
			if in.ErrorMessage != nil && *in.ErrorMessage != "" {
				msg = *in.ErrorMessage
			}
			out.Error = &msg
		}
	case "beforeSubmitPrompt":
		if in.Prompt == nil {
			return ev, fmt.Errorf("%w: Cursor beforeSubmitPrompt: prompt (a string)", payload.ErrMissing)
		}
		if opt.StopFeedback != nil && opt.StopFeedback(*in.ConversationID, *in.Prompt) {
			// Cursor submits a stop's followup_message as the next user
			// message: that continues the turn (see Options.StopFeedback).
			out.HookEvent = in.HookEvent
			break
		}
		out.Prompt = in.Prompt
	case "beforeShellExecution", "afterShellExecution":
		if err := need(in.Command, "command"); err != nil {
			return ev, err
		}
		tool("Bash")
		out.ToolInput = obj("command", *in.Command)
		out.ToolResponse = in.Output
	case "beforeMCPExecution", "afterMCPExecution":
		if err := need(in.ToolName, "tool_name"); err != nil {
			return ev, err
		}
		input, err := objectArgs(in.ToolInput)
		if err != nil {
			return ev, fmt.Errorf("%w: Cursor %s: tool_input (%w)", payload.ErrMissing, in.HookEvent, err)
		}
		tool(*in.ToolName)
		out.ToolInput, out.ToolResponse = input, in.ResultJSON
	case "beforeReadFile":
		if err := need(in.FilePath, "file_path"); err != nil {
			return ev, err
		}
		tool("Read")
		out.ToolInput = obj("file_path", *in.FilePath)
	case "afterFileEdit":
		if err := need(in.FilePath, "file_path"); err != nil {
			return ev, err
		}
		if in.Edits.Kind() != '[' {
			return ev, fmt.Errorf("%w: Cursor afterFileEdit: edits (an array)", payload.ErrMissing)
		}
		tool("MultiEdit")
		out.ToolInput = obj("file_path", *in.FilePath, "edits", in.Edits)
	case "stop":
		if in.Status != nil && *in.Status != "completed" {
			out.HookEvent = in.HookEvent
		}
	}
	return finish(ev, &out, raw, opt)
}

// objectArgs returns a tool's arguments as an object: given as one, or as
// a JSON string holding one (Cursor's MCP tool_input, Copilot's toolArgs).
func objectArgs(v jsontext.Value) (jsontext.Value, error) {
	switch v.Kind() {
	case '{':
		return v, nil
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		if obj := jsontext.Value(bytes.TrimSpace([]byte(s))); obj.Kind() == '{' && obj.IsValid() {
			return obj, nil
		}
		return nil, errors.New("a JSON string that does not hold one JSON object")
	}
	return nil, errors.New("a JSON object, or a string holding one")
}

// cursorToolOutput reads postToolUse's tool_output, a JSON string: for
// Shell an object {"output", "exitCode"}, whose output is the result; any
// other text is kept as it is.
func cursorToolOutput(v *string) *string {
	if v == nil {
		return nil
	}
	var o struct {
		Output *string `json:"output"`
	}
	if json.Unmarshal([]byte(*v), &o, json.RejectUnknownMembers(false)) == nil && o.Output != nil {
		return o.Output
	}
	return v
}
