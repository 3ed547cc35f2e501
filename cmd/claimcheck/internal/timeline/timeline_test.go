package timeline

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/schemas"
)

type step struct {
	hook, tool, toolUse, payload, kind string
	verdict                            *schemas.Verdict
	redact                             bool
}

// records seals steps into session s1, one second apart.
func records(t testing.TB, steps []step) []*replay.Record {
	t.Helper()
	at := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	prev := digest.Zero
	var out []*replay.Record
	for i, s := range steps {
		kind := s.kind
		if kind == "" {
			kind = schemas.EntryEvent
		}
		e := schemas.Entry{V: 1, Kind: kind, N: uint64(i + 1), PrevHash: prev, Chain: "s1", SessionID: "s1", Host: "dev1.example.com",
			EventID: fmt.Sprintf("01JD%022d", i+1), HookEvent: s.hook, ToolName: s.tool, ToolUseID: s.toolUse, Verdict: s.verdict,
			Bundle: "test", IngestedAt: at.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)}
		e.ReceivedAt = e.IngestedAt
		if s.payload != "" {
			p := s.payload
			e.Payload = &p
		}
		if s.redact {
			e.Redactions = []schemas.Redaction{{Digest: "sha256:" + strings.Repeat("cd", 32), Rule: "github-pat"}}
		}
		raw, err := chain.Seal(&e)
		if err != nil {
			t.Fatal(err)
		}
		prev = e.Hash
		out = append(out, &replay.Record{Pos: replay.Pos{Seq: uint64(i + 1), Index: 1}, Chain: "s1", Raw: raw, Check: replay.CheckOK})
	}
	return out
}

func render(t testing.TB, recs []*replay.Record, atts map[string]Attestation, sum *replay.Summary) string {
	t.Helper()
	tl := New("s1")
	for _, r := range recs {
		tl.Add(r)
	}
	var buf bytes.Buffer
	if err := tl.Render(&buf, atts, sum, time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestTimelineShowsWhatHappened(t *testing.T) {
	gate := `{"session_id":"s1","hook_event_name":"GateDecision","decision":{"event_id":"01JD0000000000000000000007","decision":"deny","rule":"shell.rm_root","reason":"removes the file system root","source":"gatekeeper"}}`
	steps := []step{
		{hook: schemas.HookSessionStart, payload: `{"source":"startup"}`},
		{hook: schemas.HookUserPromptSubmit, payload: `{"prompt":"fix the login test <script>alert(1)</script>"}`},
		{hook: schemas.HookPreToolUse, tool: "Bash", toolUse: "t1", payload: `{"tool_input":{"command":"go test ./..."}}`},
		{hook: schemas.HookPostToolUse, tool: "Bash", toolUse: "t1", payload: `{"tool_input":{"command":"go test ./..."}}`, redact: true},
		{hook: schemas.HookPreToolUse, tool: "Edit", toolUse: "t2", payload: `{"tool_input":{"file_path":"/src/login.go"}}`},
		{hook: schemas.HookPostToolUseFailure, tool: "Edit", toolUse: "t2", payload: `{"error":"file changed on disk"}`},
		{hook: schemas.HookPreToolUse, tool: "Bash", toolUse: "t3", payload: `{"tool_input":{"command":"rm -rf /"}}`},
		{hook: schemas.GateDecisionEvent, payload: gate},
		{hook: schemas.GateOverrideEvent, payload: `{"reason":"hotfix"}`},
		{hook: schemas.GateAlertEvent, payload: `{"reason":"3 override prompts in 1h"}`},
		{hook: schemas.HookCrashEvent, payload: `{"error":"panic: nil map"}`},
		{kind: schemas.EntryVerdict, verdict: &schemas.Verdict{Args: jsontext.Value(`{}`), AttestationID: "ATT1", Claim: "done",
			Reasons: []string{}, Validator: "test_pass", Verdict: "PASS"}},
		{kind: schemas.EntryVerdict, verdict: &schemas.Verdict{Args: jsontext.Value(`{}`), AttestationID: "ATT2", Claim: "fixed",
			Reasons: []string{}, Validator: "file_diff_present", Verdict: "PASS"}},
		{hook: schemas.HookStop, payload: `{"last_assistant_message":"Done."}`},
	}
	recs := records(t, steps)
	html := render(t, recs, map[string]Attestation{"ATT1": {OK: true, Status: "verified, signed by v1"},
		"ATT2": {Status: "does not verify: signature by unknown key"}}, &replay.Summary{Emitted: len(recs)})
	for _, want := range []string{
		`content="default-src 'none'; style-src 'unsafe-inline'"`,
		"Session s1", "host <b>dev1.example.com</b>", "chain verified",
		"fix the login test &lt;script&gt;alert(1)&lt;/script&gt;",
		"Bash (test run)", "go test ./...", "1s", "1 secrets redacted (github-pat)",
		"failed: file changed on disk", "denied by the gate", "gate: deny (shell.rm_root): removes the file system root",
		"Gate override", "GateAlert", "Hook crash",
		"attestation ATT1: verified, signed by v1", "attestation ATT2: does not verify: signature by unknown key",
		"(attestation not verified)", "Done.",
		"test runs 1", "edits 1", "failed calls 1", "gate decisions 1 (1 denied or blocked)", "attestations 2 (1 verified)",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(html, "<script") || strings.Contains(html, "http://") || strings.Contains(html, "https://") || strings.Contains(html, "src=") {
		t.Errorf("the page runs script or loads something")
	}
	// Pre and post of a call are one row; the gate decision joins its call.
	if n := strings.Count(html, "<tr class="); n != len(steps)-3 {
		t.Errorf("%d rows, want %d", n, len(steps)-3)
	}
}

func TestTimelineMarksABrokenChain(t *testing.T) {
	recs := records(t, []step{{hook: schemas.HookUserPromptSubmit, payload: `{"prompt":"hi"}`}})
	recs[0].Check, recs[0].Reason = replay.CheckFault, "hash mismatch"
	html := render(t, recs, nil, &replay.Summary{Emitted: 1, Faults: []replay.Fault{{Chain: "s1", N: 1, Reason: "hash mismatch"}}})
	for _, want := range []string{"chain BROKEN: 1 faults (first at position 1: hash mismatch)", `class="k-fault"`, "fault: hash mismatch"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// A 2,000-event session renders in well under a second into a page of
// reasonable size, a row per tool call.
func TestTimelineOfTwoThousandEvents(t *testing.T) {
	var steps []step
	for i := range 1000 {
		id := fmt.Sprintf("t%d", i)
		in := fmt.Sprintf(`{"tool_input":{"command":"go test ./pkg%d"}}`, i)
		steps = append(steps, step{hook: schemas.HookPreToolUse, tool: "Bash", toolUse: id, payload: in},
			step{hook: schemas.HookPostToolUse, tool: "Bash", toolUse: id, payload: in})
	}
	recs := records(t, steps)
	start := time.Now()
	html := render(t, recs, nil, &replay.Summary{Emitted: len(recs)})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("rendering took %s", d)
	}
	if n := strings.Count(html, "<tr class="); n != 1000 {
		t.Errorf("%d rows, want 1000", n)
	}
	if len(html) > 2<<20 {
		t.Errorf("%d bytes for 2,000 events", len(html))
	}
}

func TestIsTestRun(t *testing.T) {
	for line, want := range map[string]bool{
		"go test ./...": true, "cd api && go test -run X ./...": true, "python3 -m pytest -q": true, "npx jest": false,
		"pytest tests/": true, "make test": true, "go build ./...": false, "echo 'go test'": false, "ls": false, "cargo test --release": true,
	} {
		if got := isTestRun(line); got != want {
			t.Errorf("isTestRun(%q) = %v", line, got)
		}
	}
}
