// Package export writes replayed ledger entries for other tools: NDJSON
// (every entry exactly as stored), CSV (a fixed column set for
// spreadsheets) and the Elastic Common Schema (ECS, for a SIEM). The
// formats are listed in docs/forensics.md.
package export

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/schemas"
)

// Format is an export format.
type Format string

// Formats.
const (
	NDJSON Format = "ndjson"
	CSV    Format = "csv"
	ECS    Format = "ecs"
)

// Formats lists the formats ParseFormat accepts.
var Formats = []Format{NDJSON, CSV, ECS}

// ParseFormat reads --format.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	return "", fmt.Errorf("--format %q: want ndjson, csv or ecs (Elastic Common Schema)", s)
}

// Writer writes records in one format.
type Writer interface {
	Write(*replay.Record) error
	// Flush writes out what is buffered (an export that follows the ledger
	// flushes after each entry).
	Flush() error
	// Close flushes what is buffered; it does not close the underlying writer.
	Close() error
}

// New returns a Writer of format f onto w. appending continues an earlier
// export (CSV writes no header row).
func New(f Format, w io.Writer, appending bool) (Writer, error) {
	if !slices.Contains(Formats, f) {
		return nil, fmt.Errorf("--format %q: want ndjson, csv or ecs", f)
	}
	bw := newAheadWriter(w)
	switch f {
	case CSV:
		cw := csv.NewWriter(bw)
		if !appending {
			if err := cw.Write(Columns); err != nil {
				_ = bw.Close()
				return nil, err
			}
		}
		return &csvWriter{bw: bw, w: cw}, nil
	case ECS:
		return &ecsWriter{w: bw}, nil
	}
	return &ndjsonWriter{w: bw}, nil
}

// ndjsonWriter writes each entry as stored, one a line: byte for byte the
// ledger's canonical entry, so its hash still verifies.
type ndjsonWriter struct{ w *aheadWriter }

func (n *ndjsonWriter) Write(r *replay.Record) error {
	if _, err := n.w.Write(r.Raw); err != nil {
		return err
	}
	return n.w.WriteByte('\n')
}

func (n *ndjsonWriter) Flush() error { return n.w.Flush() }
func (n *ndjsonWriter) Close() error { return n.w.Close() }

// Columns are the CSV columns, in order.
var Columns = []string{"pos", "ingested_at", "received_at", "host", "chain", "n", "kind", "hook_event", "tool_name",
	"tool_use_id", "event_id", "origin", "agent_type", "agent_id", "decision", "rule", "claim", "verdict", "attestation_id",
	"redactions", "payload_digest", "hash", "prev_hash", "check", "summary"}

type csvWriter struct {
	bw  *aheadWriter
	w   *csv.Writer
	row []string
}

func (c *csvWriter) Write(r *replay.Record) error {
	d := Decode(r)
	e := &d.Entry
	redactions := ""
	if len(e.Redactions) > 0 {
		redactions = strconv.Itoa(len(e.Redactions))
	}
	n := ""
	if e.N > 0 {
		n = strconv.FormatUint(e.N, 10)
	}
	c.row = append(c.row[:0], r.Pos.String(), e.IngestedAt, e.ReceivedAt, e.Host, r.Chain, n, e.Kind, e.HookEvent,
		e.ToolName, e.ToolUseID, e.EventID, e.Origin, e.AgentType, e.AgentID, d.Decision, d.Rule, d.Claim, d.Verdict,
		d.AttestationID, redactions, e.PayloadDigest, e.Hash, e.PrevHash, string(r.Check), d.Summary)
	for i, v := range c.row {
		c.row[i] = cell(v)
	}
	return c.w.Write(c.row)
}

func (c *csvWriter) Flush() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return err
	}
	return c.bw.Flush()
}

func (c *csvWriter) Close() error {
	err := c.Flush()
	if cerr := c.bw.Close(); err == nil {
		err = cerr
	}
	return err
}

// cell neutralises a value a spreadsheet would run as a formula (OWASP,
// "CSV injection"): an agent chooses its commands, and a command such as
// =HYPERLINK(…) must reach the reviewer as text.
func cell(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// Decoded is an entry with what the formats show of its payload.
type Decoded struct {
	Entry schemas.Entry
	// Err says why the entry could not be decoded (Entry is then partial).
	Err error

	Command, FilePath, URL, Prompt, Message  string // of tool calls and prompts
	Error                                    string // of failed tool calls and hook crashes
	Decision, Rule, Reason, DecisionSource   string // of gate decisions
	DecisionEventID                          string // the event a gate decision decided
	Signed                                   bool   // a gate decision or finding carries its signatures
	Finding                                  string // a gate finding's kind (hook_config_drift, ungated_session)
	Claim, Verdict, AttestationID, Validator string // of claims and verdicts
	Summary                                  string // one line for people
}

// payload is what Decode reads of a payload.
type payload struct {
	Prompt    string `json:"prompt"`
	Message   string `json:"last_assistant_message"`
	Reason    string `json:"reason"`
	Error     string `json:"error"`
	ToolInput struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		URL      string `json:"url"`
		Pattern  string `json:"pattern"`
	} `json:"tool_input"`
	Decision struct {
		EventID  string `json:"event_id"`
		Decision string `json:"decision"`
		Rule     string `json:"rule"`
		Reason   string `json:"reason"`
		Source   string `json:"source"`
	} `json:"decision"`
	Finding struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"finding"`
	Signed *struct{} `json:"signed"`
}

// Decode reads a record's entry and the parts of its payload the formats
// show.
func Decode(r *replay.Record) Decoded {
	var d Decoded
	if err := json.Unmarshal(r.Raw, &d.Entry, json.RejectUnknownMembers(false)); err != nil {
		d.Err = err
		d.Summary = "unreadable entry: " + err.Error()
		return d
	}
	e := &d.Entry
	if e.Claim != nil {
		d.Claim, d.Validator = e.Claim.Claim, e.Claim.Validator
	}
	if v := e.Verdict; v != nil {
		d.Claim, d.Verdict, d.AttestationID, d.Validator = v.Claim, v.Verdict, v.AttestationID, v.Validator
	}
	var p payload
	if e.Payload != nil {
		_ = json.Unmarshal([]byte(*e.Payload), &p, json.RejectUnknownMembers(false))
	}
	d.Command, d.FilePath, d.URL, d.Prompt, d.Message, d.Error = p.ToolInput.Command, p.ToolInput.FilePath, p.ToolInput.URL,
		p.Prompt, p.Message, p.Error
	if e.HookEvent == schemas.GateDecisionEvent {
		d.Decision, d.Rule, d.Reason, d.DecisionSource = p.Decision.Decision, p.Decision.Rule, p.Decision.Reason, p.Decision.Source
		d.DecisionEventID = p.Decision.EventID
	}
	d.Signed, d.Finding = p.Signed != nil, p.Finding.Kind
	d.Summary = summary(&d, &p)
	return d
}

func summary(d *Decoded, p *payload) string {
	e := &d.Entry
	var parts []string
	switch {
	case d.Decision != "":
		parts = append(parts, d.Decision, d.Reason)
	case d.Verdict != "":
		parts = append(parts, d.Claim, d.Validator, d.Verdict, d.AttestationID)
	case d.Claim != "":
		parts = append(parts, d.Claim, d.Validator)
	case e.Kind != schemas.EntryEvent:
		parts = append(parts, e.Reason)
	default:
		for _, s := range []string{p.ToolInput.Command, p.ToolInput.FilePath, p.ToolInput.URL, p.ToolInput.Pattern, p.Prompt,
			p.Message, p.Finding.Message, p.Reason} {
			if s != "" {
				parts = append(parts, s)
				break
			}
		}
	}
	if d.Error != "" {
		parts = append(parts, "error: "+d.Error)
	}
	if len(e.Redactions) > 0 {
		parts = append(parts, fmt.Sprintf("(%d secrets redacted)", len(e.Redactions)))
	}
	return oneLine(strings.Join(parts, " "), 200)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
