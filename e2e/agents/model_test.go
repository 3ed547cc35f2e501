package agents

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/claimcheck/claimcheck/pkg/proctest"
)

// model is a scripted Anthropic Messages API, OpenAI Responses API for
// Codex and Gemini API for Gemini CLI. Each streamed request of the agent's
// main loop (one that offers the Bash tool, Codex's exec_command or Gemini
// CLI's run_shell_command) is answered by the next step of the script; anything else Claude Code asks (token counts, side
// requests to other models) gets a small sensible answer. Every request is
// recorded, so that a test can check what the model was shown.
type model struct {
	srv *httptest.Server

	mu    sync.Mutex
	steps []step
	next  int
	reqs  []modelRequest
	errs  []string // failed expectations of steps, unanswerable requests
	toolN int
}

// step answers one main-loop request. A step with repeat answers every
// request from there on (an agent that insists).
type step struct {
	name   string
	repeat bool
	reply  func(tr *turn) reply
}

// reply is the assistant's content: text, then tool calls (stop_reason
// tool_use), or text alone (end_turn).
type reply struct {
	text  string
	tools []toolCall
	// chunks streams a Gemini reply's text in that many chunks (one when
	// < 2; the other APIs' text is always streamed in two), as a real
	// model does; see streamGemini.
	chunks int
}

type toolCall struct {
	name  string
	input map[string]any
}

func bash(command, description string) toolCall {
	return toolCall{"Bash", map[string]any{"command": command, "description": description}}
}

// modelRequest is one request as the server received it.
type modelRequest struct {
	Method, Path string
	Body         []byte
	Step         string // the step that answered it; "" for a side request
	parsed       apiRequest
}

type apiRequest struct {
	Model    string       `json:"model"`
	Stream   bool         `json:"stream"`
	Messages []apiMessage `json:"messages"`
	// Input is a Responses API request's conversation (OpenAI, Codex).
	Input []respItem `json:"input"`
	Tools []struct {
		Name string `json:"name"`
		// FunctionDeclarations are a Gemini API request's tools.
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	// Contents is a Gemini API request's conversation (Gemini CLI).
	Contents []gemContent `json:"contents"`
}

// gemContent is one turn of a Gemini API request: role user or model, its
// parts text, a functionCall the model made, or the functionResponse the
// client sent back for it.
type gemContent struct {
	Role  string    `json:"role"`
	Parts []gemPart `json:"parts"`
}

type gemPart struct {
	Text         string `json:"text"`
	FunctionCall *struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string         `json:"id"`
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
	} `json:"functionResponse"`
}

// text is a part's readable text: its text, or a function response's
// output or error (Gemini CLI sends {"output": …} or {"error": …}).
func (p gemPart) text() string {
	if p.FunctionResponse == nil {
		return p.Text
	}
	var parts []string
	for _, k := range []string{"output", "error"} {
		if v, ok := p.FunctionResponse.Response[k].(string); ok {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, "\n")
}

// gemini tells a Gemini API request from the others.
func (r apiRequest) gemini() bool { return r.Contents != nil }

// respItem is one item of a Responses API request's input: a message
// (role user, developer or assistant; its content input_text or
// output_text parts), a function_call the model made, or the
// function_call_output the client sent back for it.
type respItem struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Output    any    `json:"output"`
}

// text is an item's readable text: a message's parts, a function call's
// output (a string, or content parts).
func (it respItem) text() string {
	var parts []string
	for _, c := range it.Content {
		parts = append(parts, c.Text)
	}
	switch o := it.Output.(type) {
	case string:
		parts = append(parts, o)
	case []any:
		for _, x := range o {
			if m, ok := x.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
	}
	return strings.Join(parts, "\n")
}

// responses tells a Responses API request from a Messages API one.
func (r apiRequest) responses() bool { return r.Input != nil }

type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type apiBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// blocks returns a message's content as blocks (a string is one text block).
func (m apiMessage) blocks() []apiBlock {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []apiBlock{{Type: "text", Text: s}}
	}
	var bs []apiBlock
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

// text is a block's readable text: a text block's text, a tool result's
// content (a string or text blocks).
func (b apiBlock) text() string {
	if b.Type != "tool_result" {
		return b.Text
	}
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var bs []apiBlock
	_ = json.Unmarshal(b.Content, &bs)
	var parts []string
	for _, x := range bs {
		parts = append(parts, x.Text)
	}
	return strings.Join(parts, "\n")
}

// turn is what a step sees: the request, and a way to record an
// expectation that failed.
type turn struct {
	m    *model
	step string
	req  apiRequest
}

// since returns the text of everything after the assistant's last message
// (tool results and user messages, which carry hook feedback).
func (tr *turn) since() string {
	var parts []string
	if tr.req.gemini() {
		for i := len(tr.req.Contents) - 1; i >= 0 && tr.req.Contents[i].Role != "model"; i-- {
			for j := len(tr.req.Contents[i].Parts) - 1; j >= 0; j-- {
				parts = append([]string{tr.req.Contents[i].Parts[j].text()}, parts...)
			}
		}
		return strings.Join(parts, "\n")
	}
	if tr.req.responses() {
		for i := len(tr.req.Input) - 1; i >= 0; i-- {
			it := tr.req.Input[i]
			if it.Type == "function_call" || it.Type == "reasoning" || it.Role == "assistant" {
				break
			}
			parts = append([]string{it.text()}, parts...)
		}
		return strings.Join(parts, "\n")
	}
	for i := len(tr.req.Messages) - 1; i >= 0 && tr.req.Messages[i].Role != "assistant"; i-- {
		for _, b := range tr.req.Messages[i].blocks() {
			parts = append([]string{b.text()}, parts...)
		}
	}
	return strings.Join(parts, "\n")
}

// toolResult returns the result the agent sent for the previous reply's
// n-th tool call (0-based).
func (tr *turn) toolResult(n int) (apiBlock, bool) {
	if tr.req.gemini() {
		id := fmt.Sprintf(callIDFormat, n)
		for _, c := range tr.req.Contents {
			for _, p := range c.Parts {
				if p.FunctionResponse != nil && p.FunctionResponse.ID == id {
					text, _ := json.Marshal(p.text())
					return apiBlock{Type: "tool_result", ToolUseID: id, Content: text}, true
				}
			}
		}
		return apiBlock{}, false
	}
	if tr.req.responses() {
		id := fmt.Sprintf(callIDFormat, n)
		for _, it := range tr.req.Input {
			if it.Type == "function_call_output" && it.CallID == id {
				text, _ := json.Marshal(it.text())
				return apiBlock{Type: "tool_result", ToolUseID: id, Content: text}, true
			}
		}
		return apiBlock{}, false
	}
	id := fmt.Sprintf(toolUseIDFormat, n)
	for _, m := range tr.req.Messages {
		for _, b := range m.blocks() {
			if b.Type == "tool_result" && b.ToolUseID == id {
				return b, true
			}
		}
	}
	return apiBlock{}, false
}

func (tr *turn) expect(ok bool, format string, args ...any) {
	if !ok {
		tr.m.mu.Lock()
		tr.m.errs = append(tr.m.errs, fmt.Sprintf("step %q: ", tr.step)+fmt.Sprintf(format, args...))
		tr.m.mu.Unlock()
	}
}

// The ids of the script's tool calls, numbered from 0 in the session:
// Anthropic's tool_use ids and OpenAI's function call ids.
const (
	toolUseIDFormat = "toolu_e2e%04d"
	callIDFormat    = "call_e2e%04d"
)

func newModel(t *testing.T, steps ...step) *model {
	m := &model{steps: steps}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *model) url() string { return m.srv.URL }

func (m *model) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := modelRequest{Method: r.Method, Path: r.URL.Path, Body: body}
	_ = json.Unmarshal(body, &rec.parsed)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		m.record(rec)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens":%d}`, len(body)/4)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		if rec.parsed.Stream && rec.offers("Bash") {
			m.answer(w, rec)
			return
		}
		m.record(rec)
		m.side(w, rec)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		// Codex's main loop offers its shell tool, exec_command.
		if rec.parsed.Stream && rec.offers("exec_command") {
			m.answer(w, rec)
			return
		}
		m.record(rec)
		m.mu.Lock()
		m.errs = append(m.errs, fmt.Sprintf("unexpected Responses API request (stream %v, tools %v): %s",
			rec.parsed.Stream, rec.parsed.Tools, proctest.Truncate(string(body), 300)))
		m.mu.Unlock()
		streamResponses(w, rec.parsed.Model, reply{text: "ok"}, nil)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/") &&
		strings.HasSuffix(r.URL.Path, ":streamGenerateContent") && r.URL.Query().Get("alt") == "sse":
		// Gemini CLI's main loop offers its shell tool, run_shell_command.
		if rec.offers("run_shell_command") {
			m.answer(w, rec)
			return
		}
		m.record(rec)
		m.mu.Lock()
		m.errs = append(m.errs, fmt.Sprintf("unexpected Gemini API request %s: %s", r.URL, proctest.Truncate(string(body), 300)))
		m.mu.Unlock()
		streamGemini(w, reply{text: "ok"}, nil)
	default:
		m.record(rec)
		m.mu.Lock()
		m.errs = append(m.errs, fmt.Sprintf("unexpected request %s %s", r.Method, r.URL))
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"type":"error","error":{"type":"not_found_error","message":"not scripted"}}`)
	}
}

func (r modelRequest) offers(tool string) bool {
	for _, x := range r.parsed.Tools {
		if x.Name == tool {
			return true
		}
		for _, f := range x.FunctionDeclarations {
			if f.Name == tool {
				return true
			}
		}
	}
	return false
}

func (m *model) record(rec modelRequest) {
	m.mu.Lock()
	m.reqs = append(m.reqs, rec)
	m.mu.Unlock()
}

// answer runs the next step and streams its reply.
func (m *model) answer(w http.ResponseWriter, rec modelRequest) {
	m.mu.Lock()
	var s step
	switch {
	case m.next < len(m.steps):
		s = m.steps[m.next]
		if !s.repeat {
			m.next++
		}
	default:
		m.errs = append(m.errs, fmt.Sprintf("main-loop request %d came after the script's last step", len(m.reqs)+1))
		s = step{name: "(script exhausted)", reply: func(*turn) reply { return reply{text: "The script has ended."} }}
	}
	rec.Step = s.name
	m.reqs = append(m.reqs, rec)
	m.mu.Unlock()
	rp := s.reply(&turn{m: m, step: s.name, req: rec.parsed})
	m.mu.Lock()
	format := toolUseIDFormat
	if rec.parsed.responses() || rec.parsed.gemini() {
		format = callIDFormat
	}
	ids := make([]string, len(rp.tools))
	for i := range rp.tools {
		ids[i] = fmt.Sprintf(format, m.toolN)
		m.toolN++
	}
	m.mu.Unlock()
	if rec.parsed.gemini() {
		streamGemini(w, rp, ids)
		return
	}
	if rec.parsed.responses() {
		streamResponses(w, rec.parsed.Model, rp, ids)
		return
	}
	stream(w, rec.parsed.Model, rp, ids)
}

// streamResponses writes a reply as the Responses API's server-sent events,
// as Codex reads them: response.created, each output item added, its text
// in deltas, and done (the text as a message item, each tool call as a
// function_call item whose arguments are a JSON string), then
// response.completed.
func streamResponses(w http.ResponseWriter, modelName string, rp reply, ids []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	seq := 0
	event := func(name string, v map[string]any) {
		v["type"] = name
		v["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	id := "resp_e2e_" + ids0(ids)
	event("response.created", map[string]any{"response": map[string]any{"id": id, "object": "response", "status": "in_progress", "model": modelName}})
	idx := 0
	if rp.text != "" {
		msgID := "msg_e2e_" + ids0(ids)
		event("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{
			"type": "message", "id": msgID, "role": "assistant", "status": "in_progress", "content": []any{},
		}})
		half := len(rp.text) / 2
		for _, part := range []string{rp.text[:half], rp.text[half:]} {
			event("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "delta": part})
		}
		event("response.output_item.done", map[string]any{"output_index": idx, "item": map[string]any{
			"type": "message", "id": msgID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": rp.text, "annotations": []any{}}},
		}})
		idx++
	}
	for i, tc := range rp.tools {
		args, _ := json.Marshal(tc.input)
		item := map[string]any{"type": "function_call", "id": "fc_" + ids[i], "call_id": ids[i], "name": tc.name, "arguments": string(args), "status": "completed"}
		event("response.output_item.added", map[string]any{"output_index": idx, "item": item})
		event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		idx++
	}
	event("response.completed", map[string]any{"response": map[string]any{
		"id": id, "object": "response", "status": "completed", "model": modelName,
		"usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 20, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 120},
	}})
}

// streamGemini writes a reply as the Gemini API's server-sent events
// (streamGenerateContent?alt=sse), as Gemini CLI reads them: one
// GenerateContentResponse per data line, the text, then the function calls
// (with the script's ids, which Gemini CLI sends back in its
// functionResponse), the last chunk with finishReason STOP and usage. The
// text is one chunk unless the reply asks for more, as a real model
// streams: Gemini CLI 0.61.0 gives AfterAgent's prompt_response a text
// streamed in chunks c1…cn as c1…cn, then " c2" … " cn" (it appends each
// chunk's text to the first chunk's part in place, then joins every
// chunk's text with spaces); the hook reads the final message from the
// session file instead (docs/agents.md, Gemini CLI).
func streamGemini(w http.ResponseWriter, rp reply, ids []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	chunk := func(parts []any, last bool) {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		v := map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-2.5-flash"}
		if last {
			cand["finishReason"] = "STOP"
			v["usageMetadata"] = map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}
		}
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	var chunks [][]any
	switch {
	case rp.text != "":
		for _, part := range splitText(rp.text, rp.chunks) {
			chunks = append(chunks, []any{map[string]any{"text": part}})
		}
	}
	for i, tc := range rp.tools {
		chunks = append(chunks, []any{map[string]any{"functionCall": map[string]any{"id": ids[i], "name": tc.name, "args": tc.input}}})
	}
	for i, c := range chunks {
		chunk(c, i == len(chunks)-1)
	}
}

// splitText cuts text into n pieces of about equal length (one when n < 2),
// each cut at a rune boundary.
func splitText(text string, n int) []string {
	if n < 2 {
		return []string{text}
	}
	var parts []string
	for i := n; i > 1 && text != ""; i-- {
		cut := len(text) / i
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++
		}
		if cut == 0 {
			continue
		}
		parts, text = append(parts, text[:cut]), text[cut:]
	}
	if text != "" {
		parts = append(parts, text)
	}
	return parts
}

// stream writes a reply as the Messages API's server-sent events.
func stream(w http.ResponseWriter, modelName string, rp reply, ids []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	event := func(name string, v map[string]any) {
		v["type"] = name
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	event("message_start", map[string]any{"message": map[string]any{
		"id": "msg_e2e_" + ids0(ids), "type": "message", "role": "assistant", "model": modelName,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	idx := 0
	if rp.text != "" {
		event("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		// Two deltas, as a real stream splits text.
		half := len(rp.text) / 2
		for _, part := range []string{rp.text[:half], rp.text[half:]} {
			event("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": part}})
		}
		event("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	for i, tc := range rp.tools {
		in, _ := json.Marshal(tc.input)
		event("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{
			"type": "tool_use", "id": ids[i], "name": tc.name, "input": map[string]any{},
		}})
		half := len(in) / 2
		for _, part := range []string{string(in[:half]), string(in[half:])} {
			event("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		event("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	stop := "end_turn"
	if len(rp.tools) > 0 {
		stop = "tool_use"
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}})
	event("message_stop", map[string]any{})
}

func ids0(ids []string) string {
	if len(ids) > 0 {
		return ids[0]
	}
	return "text"
}

// side answers a request outside the main loop (a title, a summary, a
// quota check) with a short text, streamed or not, as asked.
func (m *model) side(w http.ResponseWriter, rec modelRequest) {
	if rec.parsed.Stream {
		stream(w, rec.parsed.Model, reply{text: "ok"}, nil)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "msg_e2e_side", "type": "message", "role": "assistant", "model": rec.parsed.Model,
		"content":     []any{map[string]any{"type": "text", "text": "ok"}},
		"stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 1},
	})
}

// requests returns a copy of the requests received so far.
func (m *model) requests() []modelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]modelRequest(nil), m.reqs...)
}

// failures returns the steps' failed expectations and unanswerable requests.
func (m *model) failures() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.errs...)
}

// at names the step the script has reached.
func (m *model) at() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.next < len(m.steps) && m.steps[m.next].repeat:
		return fmt.Sprintf("%d/%d %q (repeating)", m.next+1, len(m.steps), m.steps[m.next].name)
	case m.next < len(m.steps) && m.next > 0:
		return fmt.Sprintf("%d/%d %q answered, %q next", m.next, len(m.steps), m.steps[m.next-1].name, m.steps[m.next].name)
	case m.next == 0:
		return fmt.Sprintf("0/%d (no main-loop request yet)", len(m.steps))
	}
	return fmt.Sprintf("%d/%d (script done; last %q)", m.next, len(m.steps), m.steps[len(m.steps)-1].name)
}

// answeredBy returns the requests a step answered, as the step saw them.
func (m *model) answeredBy(step string) []*turn {
	var out []*turn
	for _, q := range m.requests() {
		if q.Step == step {
			out = append(out, &turn{m: m, step: step, req: q.parsed})
		}
	}
	return out
}

// mainRequests counts the main-loop requests.
func (m *model) mainRequests() int {
	n := 0
	for _, q := range m.requests() {
		if q.Step != "" {
			n++
		}
	}
	return n
}
