// Package dialect maps each agent CLI's hook payloads onto the one event
// model the ledger understands (Claude Code's vocabulary: session_id,
// hook_event_name PreToolUse/PostToolUse/UserPromptSubmit/Stop/…,
// tool_name, tool_input, tool_use_id, tool_response), at the edge, in
// claimcheck-hook. Fields an agent does not send stay absent: nothing is
// invented. The agent's bytes are kept verbatim: Claude Code's and Codex's
// payloads are the event's payload as received; a Gemini CLI payload that
// needs mapping travels inside the mapped one as agent_payload, byte for
// byte. The facts each mapping rests on are in docs/agents.md.
package dialect

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/schemas"
)

// Agent names an agent CLI's hook dialect.
type Agent string

// The dialects claimcheck understands.
const (
	Claude  Agent = "claude"  // Claude Code
	Codex   Agent = "codex"   // OpenAI Codex CLI
	Gemini  Agent = "gemini"  // Google Gemini CLI
	Cursor  Agent = "cursor"  // Cursor's agent hooks
	Copilot Agent = "copilot" // GitHub Copilot CLI and coding agent
)

// Agents lists the dialects in the order they are documented.
var Agents = []Agent{Claude, Codex, Gemini, Cursor, Copilot}

// ErrUnknownAgent is returned by Parse for a name that is not a dialect;
// the caller should refuse the configuration.
var ErrUnknownAgent = errors.New("unknown agent")

// ErrWrongDialect wraps payload.ErrMalformed: the payload is another
// agent's (say a Gemini BeforeTool given to a hook installed for Codex).
// The caller records it as rejected input.
var ErrWrongDialect = fmt.Errorf("%w: payload of another agent's dialect", payload.ErrMalformed)

// Parse returns the dialect named s ("claude", "codex", "gemini", "cursor"
// or "copilot").
func Parse(s string) (Agent, error) {
	for _, a := range Agents {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("%w %q: must be one of claude, codex, gemini, cursor, copilot", ErrUnknownAgent, s)
}

// AgentType is the agent_type recorded with the dialect's events.
func (a Agent) AgentType() string {
	switch a {
	case Codex:
		return "codex"
	case Gemini:
		return "gemini-cli"
	case Cursor:
		return "cursor"
	case Copilot:
		return "copilot"
	}
	return "claude-code"
}

// Name is the agent's name for messages.
func (a Agent) Name() string {
	switch a {
	case Codex:
		return "Codex"
	case Gemini:
		return "Gemini CLI"
	case Cursor:
		return "Cursor"
	case Copilot:
		return "Copilot"
	}
	return "Claude Code"
}

// StopCarriesMessage says whether the agent's stop event carries its final
// message (Claude Code's and Codex's last_assistant_message, Gemini CLI's
// prompt_response). Cursor's stop and Copilot's agentStop carry none, so
// their stops cannot cite attestations: the Stop gate judges a turn with a
// task on the session's PASS attestations for it instead. Any other name
// (Claude Code's events carry none) is taken to carry one.
func StopCarriesMessage(a Agent) bool {
	return a != Cursor && a != Copilot
}

// CommandsKnowSession says whether the commands the agent runs can find
// their session without being told: Claude Code sets
// CLAUDE_CODE_SESSION_ID and Codex CODEX_THREAD_ID in their environment,
// which claimcheck claim reads. Gemini CLI gives its commands only
// GEMINI_CLI=1 (seen with 0.61.0), and Cursor and Copilot document no such
// variable, so a block reason names the session for them.
func CommandsKnowSession(a Agent) bool {
	return a != Gemini && a != Cursor && a != Copilot
}

// geminiEvents are the hook_event_name values only Gemini CLI sends
// (contract doc §4.3; captured from gemini-cli 0.61.0).
var geminiEvents = map[string]bool{
	"BeforeTool": true, "AfterTool": true, "BeforeAgent": true, "AfterAgent": true, "BeforeModel": true,
	"AfterModel": true, "BeforeToolSelection": true, "PreCompress": true,
}

// Detect guesses the dialect of raw from its members, for a hook installed
// without --agent: a "conversation_id" means Cursor, a "sessionId" Copilot
// (its camelCase payloads), a top-level string "timestamp" with one of
// Claude Code's event names Copilot's VS Code-compatible format (Copilot
// CLI runs the hooks of a repository's .claude/settings.json with it; see
// known below for the events Gemini CLI shares), a Gemini-only event name
// or another string "timestamp" Gemini CLI, a "turn_id" Codex, anything
// else Claude Code.
// Codex's SessionStart and SessionEnd carry no turn_id and are taken for
// Claude Code's; they are recorded, not gated, and answered alike, so only
// their agent_type is wrong. Install with --agent to be exact.
//
// It reads the top-level members with the token decoder, not the
// reflection-based one: it runs for every event of a hook installed
// without --agent, and first-use reflection costs start-up time.
func Detect(raw []byte) Agent {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return Claude
	}
	turn, gemini, timestamp, transcript, event := false, false, false, false, ""
	// A member that names Cursor or Copilot decides wherever it is; Gemini
	// CLI's and Codex's marks only when neither is there. A string
	// timestamp with one of Claude Code's event names is Copilot's VS
	// Code-compatible format (Claude Code sends no timestamp; Gemini CLI
	// shares only SessionStart, SessionEnd and Notification with it, and
	// always sends transcript_path, which Copilot's SessionStart and
	// SessionEnd lack).
	known := func() Agent {
		switch {
		case timestamp && copilotVSCode[event] != "" && !geminiEvents[event] &&
			(!transcript || event != schemas.HookSessionStart && event != schemas.HookSessionEnd && event != "Notification"):
			return Copilot
		case gemini || timestamp:
			return Gemini
		case turn:
			return Codex
		}
		return Claude
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return known()
		}
		switch n := name.String(); {
		case n == "conversation_id":
			return Cursor
		case n == "sessionId":
			return Copilot
		case n == "timestamp" && dec.PeekKind() == '"':
			timestamp = true
		case n == "transcript_path":
			transcript = true
		case n == "hook_event_name" && dec.PeekKind() == '"':
			v, err := dec.ReadToken()
			if err != nil {
				return known()
			}
			event = v.String()
			gemini = gemini || geminiEvents[event]
			continue
		case n == "turn_id":
			turn = true
		}
		if dec.SkipValue() != nil {
			return known()
		}
	}
	return known()
}

// Event is one hook payload in the ledger's vocabulary.
type Event struct {
	Agent Agent
	// AgentEvent is the event as the agent named it (BeforeTool for
	// Gemini CLI's PreToolUse); Info.HookEvent is the ledger's name.
	AgentEvent string
	Info       payload.Info
	// Payload is what is published and asked about: the agent's bytes
	// for Claude Code and Codex, the mapped payload (carrying the agent's
	// bytes as agent_payload) for a Gemini CLI event that needs mapping.
	Payload []byte
	// Mapped reports that Payload is not the agent's bytes.
	Mapped bool
}

// Options bound what Read accepts.
type Options struct {
	MaxDepth int // payload.DefaultMaxDepth when <= 0
	MaxBytes int // the largest Payload after mapping; no bound when <= 0
	// StopFeedback reports whether prompt is the reason of the session's
	// last blocked stop. Gemini CLI feeds that reason back as a new turn,
	// firing BeforeAgent with it as the prompt; Cursor submits a stop's
	// followup_message, and Copilot an agentStop block's reason, as the
	// next user prompt, and may fire their prompt hooks for it. Such a
	// prompt is not the user's and is recorded unmapped, under the agent's
	// own event name (were it a UserPromptSubmit, it would start a new
	// turn: the block count would start again, and the gate would never
	// reach its cap on a client that has none). Nil: no prompt is feedback.
	StopFeedback func(sessionID, prompt string) bool
	// Event is the event the agent ran the hook for, when the payload does
	// not name it: Copilot's camelCase payloads carry no hook_event_name,
	// so hooks install passes it (claimcheck-hook --event agentStop). Only
	// Copilot's payloads read it; one that names another event is refused.
	Event string
	// Transcript reads the session file a Gemini CLI AfterAgent's
	// transcript_path names (ReadTranscript on the agent's host). Gemini
	// CLI's prompt_response is not the final message as streamed (see
	// geminiFinal); the Stop's last_assistant_message is then the file's
	// last model message. Nil: prompt_response is taken as it is.
	Transcript func(path string) ([]byte, error)
}

// Read checks raw strictly (payload.Inspect) and maps it from agent's
// dialect; an empty agent means Detect. Errors wrap payload.ErrMalformed,
// payload.ErrMissing or payload.ErrTooLarge and name the member at fault.
func Read(agent Agent, raw []byte, opt Options) (Event, error) {
	info, err := payload.Inspect(raw, opt.MaxDepth)
	if agent == "" {
		agent = Detect(raw)
	}
	ev := Event{Agent: agent, AgentEvent: info.HookEvent, Info: info, Payload: raw}
	// Cursor's payloads carry conversation_id, Copilot's camelCase ones
	// sessionId and no event name: a payload missing session_id or
	// hook_event_name is complete for them, and their mapping checks it.
	if err != nil && (!errors.Is(err, payload.ErrMissing) || (agent != Cursor && agent != Copilot)) {
		return ev, err
	}
	switch agent {
	case Claude, Codex:
		if geminiEvents[info.HookEvent] {
			return ev, fmt.Errorf("%w: hook_event_name %q is Gemini CLI's, but this hook is installed for %s (--agent)",
				ErrWrongDialect, info.HookEvent, agent)
		}
		return ev, nil
	case Gemini:
		return mapGemini(ev, raw, opt)
	case Cursor:
		return mapCursor(ev, raw, opt)
	case Copilot:
		return mapCopilot(ev, raw, opt)
	}
	return ev, fmt.Errorf("%w %q", ErrUnknownAgent, agent)
}

// geminiTools maps Gemini CLI's built-in tool names onto the ledger's where
// the input has the same shape, so that the gate's shell and file rules
// (the agent's own hook configuration among them) and the evidence apply:
// run_shell_command's {command} is Bash's (captured from gemini-cli
// 0.61.0); write_file's {file_path, content} is Write's and replace's
// {file_path, old_string, new_string} Edit's (gemini-cli's tool schemas;
// not captured). Other tools keep their own names: read_file's path member
// has changed between versions, and the rest have no counterpart.
var geminiTools = map[string]string{"run_shell_command": "Bash", "write_file": "Write", "replace": "Edit"}

// geminiHooks maps Gemini CLI's events onto the ledger's. Events not listed
// (BeforeModel, AfterModel, BeforeToolSelection, Notification) are recorded
// under their own names, unmapped.
var geminiHooks = map[string]string{
	schemas.HookSessionStart: schemas.HookSessionStart,
	schemas.HookSessionEnd:   schemas.HookSessionEnd,
	"BeforeAgent":            schemas.HookUserPromptSubmit,
	"AfterAgent":             schemas.HookStop,
	"BeforeTool":             schemas.HookPreToolUse,
	"AfterTool":              schemas.HookPostToolUse,
	"PreCompress":            schemas.HookPreCompact,
}

// geminiIn is the part of a Gemini CLI payload the mapping reads
// (google-gemini/gemini-cli docs/hooks/reference.md; captured/gemini-cli-0.61.0).
type geminiIn struct {
	SessionID      string         `json:"session_id"`
	HookEvent      string         `json:"hook_event_name"`
	Cwd            *string        `json:"cwd"`
	TranscriptPath *string        `json:"transcript_path"`
	Timestamp      *string        `json:"timestamp"`
	Source         *string        `json:"source"`
	Reason         *string        `json:"reason"`
	Trigger        *string        `json:"trigger"`
	Prompt         *string        `json:"prompt"`
	PromptResponse *string        `json:"prompt_response"`
	StopHookActive *bool          `json:"stop_hook_active"`
	ToolName       *string        `json:"tool_name"`
	ToolInput      jsontext.Value `json:"tool_input"`
	ToolResponse   jsontext.Value `json:"tool_response"`
}

// mapped is the ledger-vocabulary payload of a Gemini CLI event; members
// the agent did not send are omitted. agent_payload is appended by hand
// so that it stays the agent's bytes. MessageSource names the agent's
// member a Stop's last_assistant_message was read from; TranscriptError
// says why it is not transcript_path (geminiFinal).
type mapped struct {
	SessionID            string         `json:"session_id"`
	HookEvent            string         `json:"hook_event_name"`
	Cwd                  *string        `json:"cwd,omitempty"`
	TranscriptPath       *string        `json:"transcript_path,omitempty"`
	Source               *string        `json:"source,omitempty"`
	Reason               *string        `json:"reason,omitempty"`
	Trigger              *string        `json:"trigger,omitempty"`
	Prompt               *string        `json:"prompt,omitempty"`
	StopHookActive       *bool          `json:"stop_hook_active,omitempty"`
	LastAssistantMessage *string        `json:"last_assistant_message,omitempty"`
	MessageSource        *string        `json:"last_assistant_message_source,omitempty"`
	TranscriptError      *string        `json:"transcript_error,omitempty"`
	ToolName             *string        `json:"tool_name,omitempty"`
	ToolUseID            *string        `json:"tool_use_id,omitempty"`
	ToolInput            jsontext.Value `json:"tool_input,omitzero"`
	ToolResponse         *string        `json:"tool_response,omitempty"`
	Error                *string        `json:"error,omitempty"`
	Agent                string         `json:"agent"`
	AgentEvent           string         `json:"agent_event"`
	AgentTimestamp       *string        `json:"agent_timestamp,omitempty"`
}

func mapGemini(ev Event, raw []byte, opt Options) (Event, error) {
	hookEvent, ok := geminiHooks[ev.Info.HookEvent]
	if !ok {
		return ev, nil // recorded as sent, under Gemini's own name
	}
	// Named in the ledger's words even when the payload is refused below,
	// so that a refused BeforeTool or AfterAgent still fails closed.
	ev.Info.HookEvent = hookEvent
	var in geminiIn
	if err := json.Unmarshal(raw, &in, json.RejectUnknownMembers(false)); err != nil {
		return ev, fmt.Errorf("%w: Gemini CLI %s: %s", payload.ErrMalformed, ev.AgentEvent, memberError(err))
	}
	out := mapped{SessionID: in.SessionID, HookEvent: hookEvent, Cwd: in.Cwd, TranscriptPath: in.TranscriptPath, Source: in.Source,
		Reason: in.Reason, Trigger: in.Trigger, Agent: string(Gemini), AgentEvent: in.HookEvent, AgentTimestamp: in.Timestamp}
	switch in.HookEvent {
	case "BeforeAgent":
		if in.Prompt == nil {
			return ev, fmt.Errorf("%w: Gemini CLI BeforeAgent: prompt (a string)", payload.ErrMissing)
		}
		if opt.StopFeedback != nil && opt.StopFeedback(in.SessionID, *in.Prompt) {
			ev.Info.HookEvent = ev.AgentEvent
			return ev, nil
		}
		out.Prompt = in.Prompt
	case "AfterAgent":
		out.StopHookActive = in.StopHookActive
		geminiFinal(&in, &out, opt)
	case "BeforeTool", "AfterTool":
		if in.ToolName == nil || *in.ToolName == "" {
			return ev, fmt.Errorf("%w: Gemini CLI %s: tool_name (a non-empty string)", payload.ErrMissing, in.HookEvent)
		}
		if in.ToolInput.Kind() != '{' {
			return ev, fmt.Errorf("%w: Gemini CLI %s: tool_input (an object)", payload.ErrMissing, in.HookEvent)
		}
		name := *in.ToolName
		if n, ok := geminiTools[name]; ok {
			name = n
		}
		out.ToolName, out.ToolInput = &name, in.ToolInput
		if in.HookEvent == "AfterTool" {
			var err error
			if out.HookEvent, out.ToolResponse, out.Error, err = geminiResult(in.ToolResponse); err != nil {
				return ev, err
			}
		}
	}
	return finish(ev, &out, raw, opt)
}

// geminiFinal sets a Gemini CLI Stop's final message. AfterAgent's
// prompt_response is not the final message as streamed (gemini-cli
// 0.61.0): a text streamed in chunks c1…cn is "c1…cn" followed by " c2" …
// " cn", and after a blocked stop the turn's earlier responses come first,
// a line each. So with opt.Transcript the final message is the last model
// message of the session file transcript_path names (GeminiFinalMessage),
// when that text is part of prompt_response (what Gemini CLI says the turn
// answered); last_assistant_message_source is "transcript_path". Else,
// or when the file cannot be read or understood, it is prompt_response,
// the source "prompt_response" and transcript_error why. Without either
// there is no final message, and no source.
func geminiFinal(in *geminiIn, out *mapped, opt Options) {
	source := func(s string) *string { return &s }
	if opt.Transcript != nil {
		msg, err := "", error(nil)
		switch {
		case in.TranscriptPath == nil || *in.TranscriptPath == "":
			err = fmt.Errorf("%w: no transcript_path", ErrTranscript)
		default:
			var data []byte
			if data, err = opt.Transcript(*in.TranscriptPath); err == nil {
				msg, err = GeminiFinalMessage(data, in.SessionID)
			}
		}
		if err == nil && in.PromptResponse != nil && !strings.Contains(*in.PromptResponse, msg) {
			err = fmt.Errorf("%w: its last model message is not part of prompt_response", ErrTranscript)
		}
		if err == nil {
			out.LastAssistantMessage, out.MessageSource = &msg, source("transcript_path")
			return
		}
		if !errors.Is(err, ErrTranscript) {
			err = fmt.Errorf("%w: %w", ErrTranscript, err)
		}
		out.TranscriptError = source(err.Error())
	}
	if in.PromptResponse != nil {
		out.LastAssistantMessage, out.MessageSource = in.PromptResponse, source("prompt_response")
	}
}

// finish encodes the mapped payload with the agent's bytes appended
// verbatim as agent_payload, bounded by opt.MaxBytes, and makes it the
// event's payload.
func finish(ev Event, out *mapped, raw []byte, opt Options) (Event, error) {
	enc, err := json.Marshal(out, json.Deterministic(true))
	if err != nil {
		return ev, fmt.Errorf("%w: %s %s: %w", payload.ErrMalformed, ev.Agent.Name(), ev.AgentEvent, err)
	}
	enc = append(enc[:len(enc)-1], `,"agent_payload":`...)
	enc = append(enc, raw...)
	enc = append(enc, '}')
	if opt.MaxBytes > 0 && len(enc) > opt.MaxBytes {
		return ev, fmt.Errorf("%w: %s %s mapped with its payload kept is %d bytes, the limit is %d",
			payload.ErrTooLarge, ev.Agent.Name(), ev.AgentEvent, len(enc), opt.MaxBytes)
	}
	if _, err := payload.Inspect(enc, opt.MaxDepth); err != nil {
		// A tool input decoded from a string can nest deeper than the
		// agent's payload did.
		return ev, fmt.Errorf("%s %s mapped: %w", ev.Agent.Name(), ev.AgentEvent, err)
	}
	ev.Info.SessionID, ev.Info.HookEvent, ev.Payload, ev.Mapped = out.SessionID, out.HookEvent, enc, true
	ev.Info.ToolName, ev.Info.ToolUseID = "", ""
	if out.ToolName != nil {
		ev.Info.ToolName = *out.ToolName
	}
	if out.ToolUseID != nil {
		ev.Info.ToolUseID = *out.ToolUseID
	}
	return ev, nil
}

// geminiResult maps AfterTool's tool_response {llmContent, returnDisplay,
// error}: an error makes it a PostToolUseFailure with that error; the
// output is returnDisplay (what the user saw), else llmContent, when a
// string.
func geminiResult(v jsontext.Value) (event string, output, errText *string, err error) {
	var r struct {
		LLMContent    jsontext.Value `json:"llmContent"`
		ReturnDisplay jsontext.Value `json:"returnDisplay"`
		Error         jsontext.Value `json:"error"`
	}
	if v.Kind() != '{' || json.Unmarshal(v, &r, json.RejectUnknownMembers(false)) != nil {
		return "", nil, nil, fmt.Errorf("%w: Gemini CLI AfterTool: tool_response (an object)", payload.ErrMissing)
	}
	str := func(v jsontext.Value) *string {
		var s string
		if v.Kind() == '"' && json.Unmarshal(v, &s) == nil {
			return &s
		}
		return nil
	}
	output = str(r.ReturnDisplay)
	if output == nil {
		output = str(r.LLMContent)
	}
	switch r.Error.Kind() {
	case 0, 'n':
		return schemas.HookPostToolUse, output, nil, nil
	case '{':
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(r.Error, &e, json.RejectUnknownMembers(false)) == nil && e.Message != "" {
			errText = &e.Message
		}
	default:
		if errText = str(r.Error); errText != nil && *errText == "" {
			return schemas.HookPostToolUse, output, nil, nil
		}
	}
	if errText == nil {
		s := string(bytes.TrimSpace(r.Error))
		errText = &s
	}
	return schemas.HookPostToolUseFailure, output, errText, nil
}

// memberError shortens a decoding error to the member and the problem.
func memberError(err error) string {
	var se *json.SemanticError
	if errors.As(err, &se) && se.JSONPointer != "" {
		return fmt.Sprintf("member %s: %v", se.JSONPointer, se.Err)
	}
	return err.Error()
}
