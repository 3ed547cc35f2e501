package agents

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/claimcheck/claimcheck/pkg/proctest"
)

// entry is one line of `claimcheck ledger show --session S --json`.
type entry struct {
	N         uint64 `json:"n"`
	HookEvent string `json:"hook_event"`
	Kind      string `json:"kind"`
	EventID   string `json:"event_id"`
	Payload   string `json:"payload"`
	// Verdict is a verdict entry's verdict (PASS, FAIL, REFUSED).
	Verdict *struct {
		Verdict string `json:"verdict"`
	} `json:"verdict"`
}

// hookPayload is the part of a recorded hook payload the scenarios read.
type hookPayload struct {
	Event       string          `json:"hook_event_name"`
	Transcript  string          `json:"transcript_path"`
	ToolName    string          `json:"tool_name"`
	ToolUseID   string          `json:"tool_use_id"`
	ToolInput   json.RawMessage `json:"tool_input"`
	StopActive  bool            `json:"stop_hook_active"`
	LastMessage string          `json:"last_assistant_message"`
}

// gateDecision is a GateDecision entry's decision.
type gateDecision struct {
	HookEvent         string   `json:"hook_event_name"`
	EventID           string   `json:"event_id"`
	Decision          string   `json:"decision"`
	Reason            string   `json:"reason"`
	Reasons           []string `json:"reasons"`
	Rule              string   `json:"rule"`
	SystemMessage     string   `json:"system_message"`
	ConsecutiveBlocks int      `json:"consecutive_blocks"`
	Capped            bool     `json:"capped"`
	Source            string   `json:"source"`
}

func (e entry) hook() hookPayload {
	var p hookPayload
	_ = json.Unmarshal([]byte(e.Payload), &p)
	return p
}

// gate returns the decision of a GateDecision entry.
func (e entry) gate() (gateDecision, bool) {
	if e.HookEvent != "GateDecision" {
		return gateDecision{}, false
	}
	var p struct {
		Decision gateDecision `json:"decision"`
	}
	err := json.Unmarshal([]byte(e.Payload), &p)
	return p.Decision, err == nil
}

// String is the entry on one line, for the report.
func (e entry) String() string {
	if d, ok := e.gate(); ok {
		return fmt.Sprintf("%3d GateDecision %s %s → %s (%s, source %s, blocks %d, capped %v) %s", e.N, d.HookEvent, d.EventID, d.Decision,
			d.Rule, d.Source, d.ConsecutiveBlocks, d.Capped, proctest.Truncate(d.Reason+d.SystemMessage, 160))
	}
	h := e.hook()
	s := fmt.Sprintf("%3d %s %s %s", e.N, e.Kind, e.HookEvent, e.EventID)
	if h.ToolUseID != "" {
		s += fmt.Sprintf(" %s %s %s", h.ToolName, h.ToolUseID, proctest.Truncate(string(h.ToolInput), 100))
	}
	if h.Event == "Stop" {
		s += fmt.Sprintf(" stop_hook_active=%v %q", h.StopActive, proctest.Truncate(h.LastMessage, 80))
	}
	return s
}

// ledger reads the session's entries, polling until done says the view is
// complete (ingest chains behind the hook's acknowledgement) or 30 s pass;
// it returns what it last read either way.
func (w *world) ledger(session string, done func([]entry) bool) []entry {
	w.t.Helper()
	var out []entry
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r := w.claimcheck("ledger", "show", "--session", session, "--json")
		if r.code == 0 {
			out = nil
			sc := bufio.NewScanner(strings.NewReader(r.stdout))
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				var e entry
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					w.t.Fatalf("ledger show --json line is not JSON: %v\n%s", err, sc.Text())
				}
				out = append(out, e)
			}
			w.entries = out
			if done(out) {
				return out
			}
		}
		if time.Now().After(deadline) {
			return out
		}
	}
}

// count counts the entries of a hook event.
func count(es []entry, event string) int {
	n := 0
	for _, e := range es {
		if e.HookEvent == event && e.Kind == "event" {
			n++
		}
	}
	return n
}

// decisions returns the gate decisions of an event kind, in ledger order.
func decisions(es []entry, event string) []gateDecision {
	var out []gateDecision
	for _, e := range es {
		if d, ok := e.gate(); ok && d.HookEvent == event {
			out = append(out, d)
		}
	}
	return out
}

// gateFinding is the part of a recorded GateFinding the scenarios read.
type gateFinding struct {
	Kind       string `json:"kind"`
	Confidence string `json:"confidence"`
	Level      string `json:"level"` // a level_change's new level
	Tool       string `json:"tool"`
	Source     string `json:"source"`
}

// label is "kind:confidence" for a finding, "kind:LEVEL" for a level change.
func (f gateFinding) label() string { return f.Kind + ":" + f.Confidence + f.Level }

// findings returns the session's gate findings, in ledger order.
func findings(es []entry) []gateFinding {
	var out []gateFinding
	for _, e := range es {
		var p struct {
			Finding gateFinding `json:"finding"`
		}
		if e.HookEvent == "GateFinding" && json.Unmarshal([]byte(e.Payload), &p) == nil {
			out = append(out, p.Finding)
		}
	}
	return out
}

// labels returns the findings' labels.
func labels(fs []gateFinding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.label())
	}
	return out
}

// writeNotes writes NOTES.md into the project: injectedNotes when high,
// else suspectNotes. It returns its path.
func (w *world) writeNotes(high bool) string {
	w.t.Helper()
	notes, path := suspectNotes, filepath.Join(w.project, "NOTES.md")
	if high {
		notes = injectedNotes
	}
	if err := os.WriteFile(path, []byte(notes), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return path
}

// sawAfter returns what the model read after the assistant's last message
// in the one request the script's step answered.
func (w *world) sawAfter(step string) string {
	w.t.Helper()
	trs := w.model.answeredBy(step)
	if len(trs) != 1 {
		w.fatalf("model: %d requests answered by %q, want 1", len(trs), step)
	}
	return trs[0].since()
}

// injectionLedger checks the ledger of a session whose one tool result was
// flagged: the injection finding and the level change the escalation
// table gives (medium: RESTRICT; high: CHECKPOINT), and one PostToolUse
// answered posttool.injection (blocked at high confidence). It returns
// that decision.
func (w *world) injectionLedger(es []entry, high bool) gateDecision {
	w.t.Helper()
	want, decision := []string{"injection:medium", "level_change:RESTRICT"}, "allow"
	if high {
		want, decision = []string{"injection:high", "level_change:CHECKPOINT"}, "block"
	}
	if got := labels(findings(es)); strings.Join(got, " ") != strings.Join(want, " ") {
		w.errorf("ledger: findings %v, want %v", got, want)
	}
	ds := decisions(es, "PostToolUse")
	if count(es, "PostToolUse") != 1 || len(ds) != 1 || ds[0].Decision != decision || ds[0].Rule != "posttool.injection" {
		w.fatalf("ledger: PostToolUse decisions %+v, want one %s (posttool.injection)", ds, decision)
	}
	return ds[0]
}

// decisionFor returns the decision recorded for the PreToolUse of a tool call.
func decisionFor(es []entry, toolUseID string) (gateDecision, bool) {
	ev := ""
	for _, e := range es {
		if h := e.hook(); e.HookEvent == "PreToolUse" && h.ToolUseID == toolUseID {
			ev = e.EventID
		}
	}
	for _, e := range es {
		if d, ok := e.gate(); ok && ev != "" && d.EventID == ev {
			return d, true
		}
	}
	return gateDecision{}, false
}

// pairing checks every tool call in the ledger: a PostToolUse (or
// PostToolUseFailure) has the PreToolUse of its tool_use_id before it, and
// a PreToolUse has its Post unless the gate refused it (deny or ask).
func pairing(es []entry) []string {
	var problems []string
	pre := map[string]bool{}
	post := map[string]bool{}
	var order []string
	for _, e := range es {
		h := e.hook()
		switch e.HookEvent {
		case "PreToolUse":
			if e.Kind != "event" {
				continue
			}
			if pre[h.ToolUseID] {
				problems = append(problems, fmt.Sprintf("n=%d: a second PreToolUse of %s", e.N, h.ToolUseID))
			}
			pre[h.ToolUseID] = true
			order = append(order, h.ToolUseID)
		case "PostToolUse", "PostToolUseFailure":
			if !pre[h.ToolUseID] {
				problems = append(problems, fmt.Sprintf("n=%d: %s of %s without its PreToolUse before it", e.N, e.HookEvent, h.ToolUseID))
			}
			post[h.ToolUseID] = true
		}
	}
	for _, id := range order {
		if post[id] {
			continue
		}
		if d, ok := decisionFor(es, id); ok && (d.Decision == "deny" || d.Decision == "ask") {
			continue
		}
		problems = append(problems, fmt.Sprintf("PreToolUse of %s has neither a PostToolUse nor a deny/ask decision", id))
	}
	return problems
}
