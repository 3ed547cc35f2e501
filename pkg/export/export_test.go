package export

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/schemas"
)

// fixture is one entry of every kind the ECS mapping distinguishes.
type fixture struct {
	name                  string
	entry                 schemas.Entry
	payload               string
	kind, category, etype string // wanted event.kind, event.category[0], event.type[0]
	outcome               string
}

func fixtures() []fixture {
	gate := func(decision string) string {
		return fmt.Sprintf(`{"session_id":"s1","hook_event_name":"GateDecision","decision":{"decision":%q,"rule":"stop.needs_attestation","reason":"no attestation backs \"done\"","source":"gatekeeper"}}`, decision)
	}
	ev := func(hook, tool string) schemas.Entry {
		return schemas.Entry{Kind: schemas.EntryEvent, HookEvent: hook, ToolName: tool, ToolUseID: "toolu_01"}
	}
	return []fixture{
		{"session start", ev(schemas.HookSessionStart, ""), `{"source":"startup"}`, "event", "session", "start", ""},
		{"prompt", ev(schemas.HookUserPromptSubmit, ""), `{"prompt":"fix the login bug"}`, "event", "session", "info", ""},
		{"pre bash", ev(schemas.HookPreToolUse, "Bash"), `{"tool_input":{"command":"go test ./..."}}`, "event", "api", "start", ""},
		{"post edit", ev(schemas.HookPostToolUse, "Edit"), `{"tool_input":{"file_path":"/src/login.go"}}`, "event", "api", "end", "success"},
		{"post fetch", ev(schemas.HookPostToolUse, "WebFetch"), `{"tool_input":{"url":"https://example.com/a"}}`, "event", "api", "end", "success"},
		{"post failure", ev(schemas.HookPostToolUseFailure, "Bash"), `{"tool_input":{"command":"make"},"error":"exit 2"}`, "event", "api", "end", "failure"},
		{"formula command", ev(schemas.HookPreToolUse, "Bash"), `{"tool_input":{"command":"=HYPERLINK(\"http://x\",\"y\"), \"quoted\"\nnext"}}`, "event", "api", "start", ""},
		{"stop", ev(schemas.HookStop, ""), `{"last_assistant_message":"Done."}`, "event", "session", "info", ""},
		{"session end", ev(schemas.HookSessionEnd, ""), `{"reason":"exit"}`, "event", "session", "end", ""},
		{"gate allow", ev(schemas.GateDecisionEvent, ""), gate("allow"), "event", "intrusion_detection", "allowed", ""},
		{"gate deny", ev(schemas.GateDecisionEvent, ""), gate("deny"), "event", "intrusion_detection", "denied", ""},
		{"gate block", ev(schemas.GateDecisionEvent, ""), gate("block"), "event", "intrusion_detection", "denied", ""},
		{"gate ask", ev(schemas.GateDecisionEvent, ""), gate("ask"), "event", "intrusion_detection", "info", ""},
		{"override", ev(schemas.GateOverrideEvent, ""), `{"reason":"release hotfix"}`, "event", "iam", "admin", "success"},
		{"override request", ev(schemas.OverrideEvent, ""), `{"prompt":"ignore the gate"}`, "event", "intrusion_detection", "info", ""},
		{"alert", ev(schemas.GateAlertEvent, ""), `{"reason":"3 override prompts in 1h"}`, "alert", "intrusion_detection", "info", ""},
		{"finding", ev(schemas.GateFindingEvent, ""), `{"finding":{"kind":"ungated_session","message":"events stopped"}}`, "alert", "configuration", "info", ""},
		{"crash", ev(schemas.HookCrashEvent, ""), `{"error":"panic: nil map"}`, "event", "process", "end", "failure"},
		{"redacted", schemas.Entry{Kind: schemas.EntryEvent, HookEvent: schemas.HookPostToolUse, ToolName: "Bash",
			Redactions: []schemas.Redaction{{Digest: "sha256:" + strings.Repeat("ab", 32), Rule: "aws-access-token"}}},
			`{"tool_input":{"command":"cat .env"}}`, "event", "api", "end", "success"},
		{"claim", schemas.Entry{Kind: schemas.EntryClaim, HookEvent: schemas.ClaimRequestEvent,
			Claim: &schemas.Claim{Args: jsontext.Value(`{}`), Claim: "done", RequestID: "r1", Validator: "test_pass"}},
			"", "event", "api", "start", ""},
		{"verdict pass", schemas.Entry{Kind: schemas.EntryVerdict, Verdict: &schemas.Verdict{Args: jsontext.Value(`{}`),
			AttestationID: "01M80WE0KB0GHCCYC51DTJMBRY", Claim: "done", Reasons: []string{}, Validator: "test_pass", Verdict: "PASS"}},
			"", "event", "api", "info", "success"},
		{"verdict fail", schemas.Entry{Kind: schemas.EntryVerdict, Verdict: &schemas.Verdict{Args: jsontext.Value(`{}`),
			Claim: "done", Reasons: []string{"no test run"}, Validator: "test_pass", Verdict: "FAIL"}},
			"", "event", "api", "info", "failure"},
		{"contract", schemas.Entry{Kind: schemas.EntryContract}, "", "event", "configuration", "creation", ""},
		{"invalid", schemas.Entry{Kind: schemas.EntryInvalid, Reason: "payload is not JSON"}, "", "pipeline_error", "", "", ""},
		{"key rotated", schemas.Entry{Kind: schemas.EntryRotator, HookEvent: schemas.RotatorKeyRotated}, "", "event", "configuration", "change", "success"},
		{"segment deleted", schemas.Entry{Kind: schemas.EntryRotator, HookEvent: schemas.RotatorSegmentDeleted}, "", "event", "file", "deletion", "success"},
	}
}

// records seals the fixtures into one chain and returns them as replayed.
func records(t *testing.T) ([]fixture, []*replay.Record) {
	t.Helper()
	fs := fixtures()
	var out []*replay.Record
	prev := digest.Zero
	at := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	for i := range fs {
		e := fs[i].entry
		e.V, e.N, e.PrevHash, e.Chain, e.SessionID = 1, uint64(i+1), prev, "s1", "s1"
		e.EventID, e.Host, e.Origin, e.Bundle = fmt.Sprintf("01JD%022d", i+1), "dev1.example.com", "hook:dev1.example.com", "test"
		e.IngestedAt, e.ReceivedAt = at.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), at.Format(time.RFC3339Nano)
		if fs[i].payload != "" {
			p := fs[i].payload
			e.Payload, e.PayloadDigest, e.PayloadSize = &p, digest.SHA256([]byte(p)), len(p)
		}
		raw, err := chain.Seal(&e)
		if err != nil {
			t.Fatalf("%s: %v", fs[i].name, err)
		}
		prev = e.Hash
		out = append(out, &replay.Record{Pos: replay.Pos{Seq: uint64(10 + i), Index: 1}, Source: replay.SourceHot, Chain: "s1",
			Raw: raw, Check: replay.CheckOK})
	}
	return fs, out
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"ndjson": NDJSON, "CSV": CSV, "ecs": ECS} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "ocsf", "json", "ndjson ", "ecs;rm"} {
		if _, err := ParseFormat(bad); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("--format %q", bad)) {
			t.Errorf("ParseFormat(%q): %v", bad, err)
		}
	}
}

// NDJSON is every entry exactly as stored: the chain verifies from it.
func TestNDJSONKeepsEntriesByteForByte(t *testing.T) {
	_, recs := records(t)
	var buf bytes.Buffer
	w, err := New(NDJSON, &buf, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != len(recs) {
		t.Fatalf("%d lines, want %d", len(lines), len(recs))
	}
	for i, l := range lines {
		if !bytes.Equal(l, recs[i].Raw) {
			t.Fatalf("line %d differs from the stored entry", i)
		}
	}
	if err := chain.Verify("s1", lines); err != nil {
		t.Fatalf("the export does not verify: %v", err)
	}
}

func TestCSVColumnsAndFormulaNeutralised(t *testing.T) {
	fs, recs := records(t)
	var buf bytes.Buffer
	w, err := New(CSV, &buf, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v", err)
	}
	if !slices.Equal(rows[0], Columns) || len(rows) != len(recs)+1 {
		t.Fatalf("header %v, %d rows", rows[0], len(rows))
	}
	col := func(row []string, name string) string { return row[slices.Index(Columns, name)] }
	for i, row := range rows[1:] {
		if len(row) != len(Columns) {
			t.Fatalf("row %d has %d cells", i, len(row))
		}
		if col(row, "pos") != recs[i].Pos.String() || col(row, "n") != fmt.Sprint(i+1) || col(row, "check") != "ok" {
			t.Fatalf("row %d (%s): %v", i, fs[i].name, row)
		}
		for _, c := range row {
			if c != "" && strings.ContainsRune("=+-@", rune(c[0])) {
				t.Fatalf("row %d (%s): cell %q would run as a formula", i, fs[i].name, c)
			}
		}
		switch fs[i].name {
		case "formula command":
			if s := col(row, "summary"); !strings.HasPrefix(s, `'=HYPERLINK("http://x","y"), "quoted" next`) {
				t.Fatalf("summary %q", s)
			}
		case "gate deny":
			if col(row, "decision") != "deny" || col(row, "rule") != "stop.needs_attestation" {
				t.Fatalf("gate: %v", row)
			}
		case "verdict pass":
			if col(row, "verdict") != "PASS" || col(row, "attestation_id") != "01M80WE0KB0GHCCYC51DTJMBRY" {
				t.Fatalf("verdict: %v", row)
			}
		case "redacted":
			if col(row, "redactions") != "1" {
				t.Fatalf("redactions: %v", row)
			}
		}
	}
}

// ecsField is one field definition of ecs_flat.json.
type ecsField struct {
	Type          string   `json:"type"`
	Normalize     []string `json:"normalize"`
	Required      bool     `json:"required"`
	AllowedValues []struct {
		Name               string   `json:"name"`
		ExpectedEventTypes []string `json:"expected_event_types"`
	} `json:"allowed_values"`
}

func loadECS(t *testing.T) map[string]ecsField {
	t.Helper()
	raw, err := os.ReadFile("testdata/ecs/ecs_flat.json")
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]ecsField
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	if len(fields) < 1000 || fields["event.category"].AllowedValues == nil {
		t.Fatalf("ecs_flat.json: %d fields", len(fields))
	}
	return fields
}

// validateECS checks a document against ECS's field definitions: every
// field outside the custom "claimcheck" set is an ECS field of the right
// type (arrays only where ECS normalises to one), the required fields are
// there, categorisation fields take allowed values, and each event.type is
// one ECS expects for one of the document's categories.
func validateECS(fields map[string]ecsField, doc map[string]any) []string {
	var problems []string
	var walk func(prefix string, v any)
	leaf := func(name string, v any) {
		f, ok := fields[name]
		if !ok {
			problems = append(problems, name+": not an ECS field")
			return
		}
		vals := []any{v}
		if arr, isArr := v.([]any); isArr {
			if !slices.Contains(f.Normalize, "array") {
				problems = append(problems, name+": an array where ECS wants one value")
				return
			}
			vals = arr
		}
		for _, x := range vals {
			if p := checkType(f.Type, x); p != "" {
				problems = append(problems, name+": "+p)
			}
			if f.AllowedValues != nil {
				s, _ := x.(string)
				if !slices.ContainsFunc(f.AllowedValues, func(a struct {
					Name               string   `json:"name"`
					ExpectedEventTypes []string `json:"expected_event_types"`
				}) bool {
					return a.Name == s
				}) {
					problems = append(problems, fmt.Sprintf("%s: %q is not an allowed value", name, s))
				}
			}
		}
	}
	walk = func(prefix string, v any) {
		m, isObj := v.(map[string]any)
		if !isObj || (prefix != "" && (fields[prefix].Type == "object" || fields[prefix].Type == "flattened")) {
			leaf(prefix, v)
			return
		}
		for k, x := range m {
			name := k
			if prefix != "" {
				name = prefix + "." + k
			}
			if name == "claimcheck" {
				continue // the custom field set
			}
			walk(name, x)
		}
	}
	walk("", doc)
	for name, f := range fields {
		if f.Required && lookup(doc, name) == nil {
			problems = append(problems, name+": required, missing")
		}
	}
	// event.type against the categories' expected types.
	cats, _ := lookup(doc, "event.category").([]any)
	types, _ := lookup(doc, "event.type").([]any)
	for _, ty := range types {
		ok := false
		for _, c := range cats {
			for _, a := range fields["event.category"].AllowedValues {
				if a.Name == c && slices.Contains(a.ExpectedEventTypes, ty.(string)) {
					ok = true
				}
			}
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("event.type %q is expected for none of the categories %v", ty, cats))
		}
	}
	return problems
}

func checkType(typ string, v any) string {
	switch typ {
	case "keyword", "wildcard", "match_only_text", "constant_keyword", "ip":
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("%T where ECS wants a string (%s)", v, typ)
		}
	case "date":
		s, ok := v.(string)
		if _, err := time.Parse(time.RFC3339Nano, s); !ok || err != nil {
			return fmt.Sprintf("%v is not a date", v)
		}
	case "long":
		f, ok := v.(float64)
		if !ok || f != float64(int64(f)) {
			return fmt.Sprintf("%v is not an integer", v)
		}
	case "float", "scaled_float":
		if _, ok := v.(float64); !ok {
			return fmt.Sprintf("%v is not a number", v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("%v is not a boolean", v)
		}
	case "object", "flattened", "nested":
		if _, ok := v.(map[string]any); !ok {
			return fmt.Sprintf("%T where ECS wants an object", v)
		}
	default:
		return "type " + typ + " not checked by this test"
	}
	return ""
}

func lookup(doc map[string]any, name string) any {
	var v any = doc
	for part := range strings.SplitSeq(name, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if v, ok = m[part]; !ok {
			if x, ok := m[name]; ok { // a dotted key such as "@timestamp"
				return x
			}
			return nil
		}
	}
	return v
}

// TestECSDocumentsFollowTheSchema exports an entry of every kind and checks
// each document against ECS 9.4.0's published field definitions, and the
// categorisation of each kind of entry.
func TestECSDocumentsFollowTheSchema(t *testing.T) {
	fields := loadECS(t)
	for name := range fields {
		if strings.HasPrefix(name, "claimcheck.") {
			t.Fatalf("ECS defines %s: the custom field set would collide", name)
		}
	}
	fs, recs := records(t)
	var buf bytes.Buffer
	w, err := New(ECS, &buf, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("%d documents, want %d", len(lines), len(recs))
	}
	for i, l := range lines {
		f := fs[i]
		var doc map[string]any
		if err := json.Unmarshal([]byte(l), &doc); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if p := validateECS(fields, doc); len(p) > 0 {
			t.Errorf("%s: %v\n%s", f.name, p, l)
		}
		str := func(name string) string {
			switch v := lookup(doc, name).(type) {
			case string:
				return v
			case []any:
				if len(v) > 0 {
					s, _ := v[0].(string)
					return s
				}
			}
			return ""
		}
		if str("event.kind") != f.kind || str("event.category") != f.category || str("event.type") != f.etype ||
			str("event.outcome") != f.outcome {
			t.Errorf("%s: kind %q category %q type %q outcome %q, want %q %q %q %q", f.name, str("event.kind"),
				str("event.category"), str("event.type"), str("event.outcome"), f.kind, f.category, f.etype, f.outcome)
		}
		if str("event.original") != string(recs[i].Raw) || str("event.hash") == "" || str("claimcheck.pos") != recs[i].Pos.String() {
			t.Errorf("%s: event.original, event.hash or claimcheck.pos lost", f.name)
		}
		switch f.name {
		case "redacted":
			if str("related.hash") != "sha256:"+strings.Repeat("ab", 32) || !slices.Contains(lookup(doc, "tags").([]any), any("secret_redacted")) {
				t.Errorf("redactions not mapped: %s", l)
			}
		case "verdict pass":
			if str("claimcheck.attestation_id") != "01M80WE0KB0GHCCYC51DTJMBRY" {
				t.Errorf("attestation id not mapped: %s", l)
			}
		case "gate deny":
			if str("rule.name") != "stop.needs_attestation" || str("claimcheck.decision") != "deny" {
				t.Errorf("gate decision not mapped: %s", l)
			}
		case "pre bash":
			if str("process.command_line") != "go test ./..." {
				t.Errorf("command not mapped: %s", l)
			}
		}
	}
}

// The validator itself finds what is wrong (so the test above can fail).
func TestECSValidatorRejectsBadDocuments(t *testing.T) {
	fields := loadECS(t)
	good := func() map[string]any {
		return map[string]any{"@timestamp": "2026-11-28T05:00:00Z", "ecs": map[string]any{"version": "9.4.0"},
			"event": map[string]any{"kind": "event", "category": []any{"api"}, "type": []any{"start"}, "sequence": float64(3)}}
	}
	if p := validateECS(fields, good()); len(p) != 0 {
		t.Fatalf("good document: %v", p)
	}
	tests := []struct {
		name   string
		change func(map[string]any)
		want   string
	}{
		{"unknown field", func(d map[string]any) { d["event"].(map[string]any)["bogus"] = "x" }, "event.bogus: not an ECS field"},
		{"wrong type", func(d map[string]any) { d["event"].(map[string]any)["sequence"] = "3" }, "not an integer"},
		{"bad date", func(d map[string]any) { d["@timestamp"] = "yesterday" }, "not a date"},
		{"array not allowed", func(d map[string]any) { d["event"].(map[string]any)["kind"] = []any{"event"} }, "an array"},
		{"bad kind", func(d map[string]any) { d["event"].(map[string]any)["kind"] = "log" }, `"log" is not an allowed value`},
		{"bad category", func(d map[string]any) { d["event"].(map[string]any)["category"] = []any{"agents"} }, "not an allowed value"},
		{"type not for category", func(d map[string]any) { d["event"].(map[string]any)["type"] = []any{"connection"} }, "expected for none"},
		{"missing version", func(d map[string]any) { delete(d, "ecs") }, "ecs.version: required"},
	}
	for _, tt := range tests {
		d := good()
		tt.change(d)
		p := validateECS(fields, d)
		if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, tt.want) }) {
			t.Errorf("%s: %v, want %q", tt.name, p, tt.want)
		}
	}
}

// A corrupted entry is still exported, marked, never dropped.
func TestUnreadableEntryIsExportedAsSuch(t *testing.T) {
	r := &replay.Record{Pos: replay.Pos{Seq: 1, Index: 1}, Chain: "s1", Raw: []byte("{not json"), Check: replay.CheckFault,
		Reason: "entry is not valid JSON"}
	for _, f := range Formats {
		var buf bytes.Buffer
		w, err := New(f, &buf, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want := "not json"
		if f == CSV {
			want = "unreadable entry"
		}
		if !strings.Contains(buf.String(), want) {
			t.Errorf("%s: %q", f, buf.String())
		}
		if f != NDJSON && !strings.Contains(buf.String(), "fault") {
			t.Errorf("%s: the fault is not marked: %q", f, buf.String())
		}
	}
}
