// Package timeline renders one session's replayed ledger as a single
// self-contained HTML page for people: prompts, tool calls with their
// durations and outcomes, edits, test runs, gate decisions with their
// reasons, claims and attestations with their verification status,
// redactions, overrides, alerts and crashes, each row with its ledger
// position and chain check. The page loads nothing (its content security
// policy forbids every fetch); html/template escapes everything the agent
// wrote.
package timeline

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/claimcheck/claimcheck/pkg/command"
	"github.com/claimcheck/claimcheck/pkg/export"
	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/schemas"
)

//go:embed timeline.html.tmpl
var files embed.FS

var page = template.Must(template.New("timeline.html.tmpl").Funcs(template.FuncMap{
	"short": func(s string, n int) string {
		if r := []rune(s); len(r) > n {
			return string(r[:n]) + "…"
		}
		return s
	},
	"long": func(s string, n int) bool { return len([]rune(s)) > n },
}).ParseFS(files, "timeline.html.tmpl"))

// Attestation is what the caller found of an attestation a verdict names.
type Attestation struct {
	OK     bool
	Status string // "verified, signed by v1", "not in ATTEST", the verification error
}

// Row is one line of the timeline.
type Row struct {
	Pos      string
	N        uint64
	At       time.Time
	Offset   string
	Class    string // prompt, tool, edit, test, gate, claim, attest, redaction, override, alert, crash, session, fault, other
	Label    string
	Text     string
	Duration string
	Outcome  string
	OutClass string // ok, bad, warn, none
	Notes    []string
	Check    replay.Check
	Reason   string
}

// Timeline collects a session's records.
type Timeline struct {
	Session string
	Host    string
	Rows    []*Row
	// Counts by kind of row, for the header.
	Counts     map[string]int
	first      time.Time
	last       time.Time
	calls      map[string]*Row // open tool calls by tool_use_id
	byEvent    map[string]*Row // tool calls by their PreToolUse's event id
	attestRows []*Row
	attestIDs  []string
}

// New starts the timeline of a session.
func New(session string) *Timeline {
	return &Timeline{Session: session, Counts: map[string]int{}, calls: map[string]*Row{}, byEvent: map[string]*Row{}}
}

// Add adds one record, in ledger order.
func (t *Timeline) Add(r *replay.Record) {
	d := export.Decode(r)
	e := &d.Entry
	at := entryTime(e)
	if t.first.IsZero() || (!at.IsZero() && at.Before(t.first)) {
		t.first = at
	}
	if at.After(t.last) {
		t.last = at
	}
	if t.Host == "" {
		t.Host = e.Host
	}
	row := &Row{Pos: r.Pos.String(), N: e.N, At: at, Check: r.Check, Reason: r.Reason, Text: d.Summary, OutClass: "none"}
	if r.Check == replay.CheckFault {
		t.Counts["fault"]++
	}
	if len(e.Redactions) > 0 {
		rules := make([]string, 0, len(e.Redactions))
		for _, x := range e.Redactions {
			rules = append(rules, x.Rule)
		}
		row.Notes = append(row.Notes, fmt.Sprintf("%d secrets redacted (%s)", len(e.Redactions), strings.Join(rules, ", ")))
		t.Counts["redaction"] += len(e.Redactions)
	}
	switch e.HookEvent {
	case schemas.HookPreToolUse:
		t.toolCall(row, &d)
	case schemas.HookPostToolUse, schemas.HookPostToolUseFailure:
		if t.toolResult(row, &d, at) {
			return // merged into its call's row
		}
	case schemas.GateDecisionEvent:
		if t.gate(row, &d) {
			return
		}
	default:
		t.other(row, &d)
	}
	if row.Class == "" {
		row.Class = "other"
	}
	if len(e.Redactions) > 0 && row.Class == "other" {
		row.Class = "redaction"
	}
	if r.Check == replay.CheckFault {
		row.Class = "fault"
	}
	t.Rows = append(t.Rows, row)
}

func (t *Timeline) toolCall(row *Row, d *export.Decoded) {
	e := &d.Entry
	row.Class, row.Label = "tool", e.ToolName
	switch {
	case slices.Contains([]string{"Edit", "Write", "MultiEdit", "NotebookEdit"}, e.ToolName):
		row.Class = "edit"
	case e.ToolName == "Bash" && isTestRun(d.Command):
		row.Class, row.Label = "test", "Bash (test run)"
	}
	t.Counts[row.Class]++
	row.Outcome, row.OutClass = "no result", "warn"
	t.calls[e.ToolUseID] = row
	t.byEvent[e.EventID] = row
}

// toolResult completes the call's row; false when the result has no
// PreToolUse in the timeline (it gets a row of its own).
func (t *Timeline) toolResult(row *Row, d *export.Decoded, at time.Time) bool {
	e := &d.Entry
	call := t.calls[e.ToolUseID]
	failed := e.HookEvent == schemas.HookPostToolUseFailure
	outcome, class := "ok", "ok"
	if failed {
		outcome, class = "failed: "+d.Error, "bad"
	}
	if call == nil || e.ToolUseID == "" {
		row.Class, row.Label = "tool", e.ToolName
		row.Outcome, row.OutClass = outcome, class
		row.Notes = append(row.Notes, "result without its PreToolUse in the ledger: not evidence")
		t.Counts["tool"]++
		return false
	}
	delete(t.calls, e.ToolUseID)
	if !call.At.IsZero() && !at.IsZero() {
		call.Duration = at.Sub(call.At).Round(time.Millisecond).String()
	}
	if call.OutClass != "bad" { // a gate denial stays the outcome
		call.Outcome, call.OutClass = outcome, class
	}
	if failed {
		t.Counts["failed"]++
	}
	call.Notes = append(call.Notes, "result at "+row.Pos+" (n="+fmt.Sprint(e.N)+")")
	call.Notes = append(call.Notes, row.Notes...)
	if row.Check != replay.CheckOK && call.Check == replay.CheckOK {
		call.Check, call.Reason = row.Check, row.Reason
	}
	return true
}

// gate attaches a decision to the tool call it decided; false when it
// decided something else (a stop): it gets a row of its own.
func (t *Timeline) gate(row *Row, d *export.Decoded) bool {
	t.Counts["gate"]++
	outcome, class := d.Decision, "ok"
	switch d.Decision {
	case schemas.GateDeny, schemas.GateBlock:
		class = "bad"
		t.Counts["denied"]++
	case schemas.GateAsk:
		class = "warn"
	}
	note := fmt.Sprintf("gate: %s", d.Decision)
	if d.Rule != "" {
		note += " (" + d.Rule + ")"
	}
	if d.Reason != "" {
		note += ": " + d.Reason
	}
	if call := t.byEvent[d.DecisionEventID]; call != nil && d.DecisionEventID != "" {
		call.Notes = append(call.Notes, note)
		if class == "bad" {
			call.Outcome, call.OutClass = "denied by the gate", "bad"
		}
		return true
	}
	row.Class, row.Label, row.Outcome, row.OutClass = "gate", "Gate decision", outcome, class
	row.Text = note
	return false
}

func (t *Timeline) other(row *Row, d *export.Decoded) {
	e := &d.Entry
	row.Label = first(e.HookEvent, e.Kind)
	switch {
	case e.Kind == schemas.EntryContract:
		row.Class, row.Label = "claim", "Contract"
		if e.Contract != nil {
			row.Text = e.Contract.Objective
		}
	case e.HookEvent == schemas.HookUserPromptSubmit:
		row.Class, row.Label, row.Text = "prompt", "Prompt", d.Prompt
	case e.HookEvent == schemas.HookStop || e.HookEvent == schemas.HookSubagentStop:
		row.Class, row.Label, row.Text = "session", "Stop", d.Message
	case e.HookEvent == schemas.HookSessionStart || e.HookEvent == schemas.HookSessionEnd:
		row.Class = "session"
	case e.Kind == schemas.EntryClaim:
		row.Class, row.Label = "claim", "Claim"
	case e.Kind == schemas.EntryVerdict:
		row.Class, row.Label = "claim", "Verdict "+d.Verdict
		row.Text = strings.TrimSpace(d.Claim + " by " + d.Validator)
		row.Outcome, row.OutClass = d.Verdict, "bad"
		if d.Verdict == schemas.Pass {
			row.OutClass = "ok"
		}
		if d.AttestationID != "" {
			row.Class = "attest"
			t.attestRows = append(t.attestRows, row)
			t.attestIDs = append(t.attestIDs, d.AttestationID)
		}
	case e.HookEvent == schemas.GateOverrideEvent || e.HookEvent == schemas.OverrideEvent:
		row.Class, row.Label = "override", "Override request"
		if e.HookEvent == schemas.GateOverrideEvent {
			row.Label = "Gate override"
		}
	case e.HookEvent == schemas.GateAlertEvent || e.HookEvent == schemas.GateFindingEvent:
		row.Class = "alert"
	case e.HookEvent == schemas.HookCrashEvent:
		row.Class, row.Label, row.Outcome, row.OutClass = "crash", "Hook crash", "crash", "bad"
	}
	if row.Class != "" {
		t.Counts[row.Class]++
	}
}

// Render writes the page. atts holds what was found of each attestation
// a verdict names; sum is the replay's summary (chain check, faults).
func (t *Timeline) Render(w io.Writer, atts map[string]Attestation, sum *replay.Summary, generated time.Time) error {
	for i, row := range t.attestRows {
		id := t.attestIDs[i]
		a, ok := atts[id]
		if !ok {
			a = Attestation{Status: "not checked"}
		}
		row.Notes = append(row.Notes, fmt.Sprintf("attestation %s: %s", id, a.Status))
		if !a.OK {
			row.OutClass = "bad"
			row.Outcome += " (attestation not verified)"
		} else {
			t.Counts["verified"]++
		}
	}
	for _, row := range t.Rows {
		if !row.At.IsZero() && !t.first.IsZero() {
			row.Offset = "+" + row.At.Sub(t.first).Round(time.Second).String()
		}
	}
	data := struct {
		*Timeline
		First, Last, Generated string
		Span                   string
		Sum                    *replay.Summary
		Legend                 []string
	}{Timeline: t, First: t.first.Format(time.RFC3339), Last: t.last.Format(time.RFC3339), Generated: generated.UTC().Format(time.RFC3339),
		Span: t.last.Sub(t.first).Round(time.Second).String(), Sum: sum,
		Legend: []string{"prompt", "tool", "edit", "test", "gate", "claim", "attest", "override", "alert", "crash", "redaction", "fault"}}
	return page.Execute(w, data)
}

func entryTime(e *schemas.Entry) time.Time {
	for _, s := range []string{e.ReceivedAt, e.IngestedAt} {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// testRunners are the programs (or program and subcommand) that run tests.
var testRunners = []string{"pytest", "py.test", "jest", "vitest", "tox", "rspec", "mocha", "go test", "cargo test", "npm test",
	"yarn test", "pnpm test", "bun test", "mvn test", "mvn verify", "gradle test", "./gradlew test", "dotnet test", "deno test",
	"make test", "make check"}

// isTestRun reports whether a shell line runs a test runner.
func isTestRun(line string) bool {
	for _, c := range command.Parse(line) {
		if len(c.Argv) == 0 {
			continue
		}
		name := path.Base(c.Argv[0])
		if slices.Contains(testRunners, name) {
			return true
		}
		if len(c.Argv) > 1 && slices.Contains(testRunners, name+" "+c.Argv[1]) {
			return true
		}
		if (name == "python" || name == "python3") && len(c.Argv) > 2 && c.Argv[1] == "-m" &&
			(c.Argv[2] == "pytest" || c.Argv[2] == "unittest") {
			return true
		}
	}
	return false
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
