package agents

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/proctest"
)

// views renders the scenario's three views for a failure message: what
// the client printed, what the ledger holds, and what the model was shown.
func (w *world) views() string {
	var b strings.Builder
	fmt.Fprintf(&b, "── client (%s) ──\n", w.client)
	if r := w.last; r == nil {
		b.WriteString("(not run)\n")
	} else {
		fmt.Fprintf(&b, "exit %d after %s (timed out: %v)\n", r.code, r.took.Round(1e6), r.timedOut)
		for _, e := range r.events {
			b.WriteString(e.summary() + "\n")
		}
		if s := strings.TrimSpace(r.stderr); s != "" {
			fmt.Fprintf(&b, "stderr: %s\n", proctest.Truncate(s, 1500))
		}
	}
	b.WriteString("── ledger ──\n")
	if len(w.entries) == 0 {
		b.WriteString("(not read)\n")
	}
	for _, e := range w.entries {
		b.WriteString(e.String() + "\n")
	}
	b.WriteString("── model (requests received) ──\n")
	if w.model != nil {
		for i, q := range w.model.requests() {
			tr := turn{req: q.parsed}
			step := q.Step
			if step == "" {
				step = "(side request)"
			}
			fmt.Fprintf(&b, "%2d %s %s %s: %s\n", i, q.Path, q.parsed.Model, step, proctest.Truncate(strings.ReplaceAll(tr.since(), "\n", "⏎"), 300))
		}
		for _, f := range w.model.failures() {
			fmt.Fprintf(&b, "script: %s\n", f)
		}
	}
	return b.String()
}

// summary is a stream-json event on one line.
func (e streamEvent) summary() string {
	switch e.Type {
	case "assistant", "user":
		if e.Message == nil {
			break
		}
		var parts []string
		for _, bl := range (apiMessage{Content: e.Message.Content}).blocks() {
			switch bl.Type {
			case "tool_use":
				parts = append(parts, fmt.Sprintf("tool_use %s %s %s", bl.ID, bl.Name, proctest.Truncate(string(bl.Input), 120)))
			case "tool_result":
				parts = append(parts, fmt.Sprintf("tool_result %s is_error=%v %q", bl.ToolUseID, bl.IsError, proctest.Truncate(bl.text(), 200)))
			default:
				parts = append(parts, fmt.Sprintf("%s %q", bl.Type, proctest.Truncate(bl.text(), 200)))
			}
		}
		return e.Type + ": " + strings.Join(parts, "; ")
	case "result":
		return fmt.Sprintf("result: subtype=%s is_error=%v num_turns=%d result=%q", e.Subtype, e.IsError, e.NumTurn, proctest.Truncate(e.Result, 200))
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(e.raw), &m)
	delete(m, "uuid")
	delete(m, "session_id")
	if e.Subtype == "init" {
		return fmt.Sprintf("system: init model=%v permissionMode=%v version=%v", m["model"], m["permissionMode"], m["claude_code_version"])
	}
	b, _ := json.Marshal(m)
	return proctest.Truncate(string(b), 300)
}
