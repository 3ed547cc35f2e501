package compliance

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/schemas"
)

var now = time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)

// entry seals one entry of session s into a record.
func entry(t *testing.T, n int, e schemas.Entry, payload string) *replay.Record {
	t.Helper()
	e.V, e.N, e.PrevHash, e.Chain, e.SessionID, e.Bundle = 1, uint64(n), digest.Zero, "s", "s", "test"
	if e.Kind == "" {
		e.Kind = schemas.EntryEvent
	}
	if e.IngestedAt == "" {
		e.IngestedAt = now.Add(-time.Hour).Format(time.RFC3339Nano)
	}
	if payload != "" {
		e.Payload = &payload
	}
	raw, err := chain.Seal(&e)
	if err != nil {
		t.Fatal(err)
	}
	return &replay.Record{Pos: replay.Pos{Seq: uint64(n), Index: 1}, Chain: "s", Raw: raw, Check: replay.CheckOK}
}

func tally(t *testing.T) *Tally {
	t.Helper()
	full := schemas.Entry{Host: "h1", AgentID: "a@h1", EventID: "01JD0000000000000000000001", ReceivedAt: now.Add(-time.Hour - time.Second).Format(time.RFC3339Nano)}
	signed := `{"decision":{"decision":"deny","rule":"shell.rm_root","reason":"no"},"signed":{"payload_type":"x","payload_sha256":"y","signatures":[]}}`
	unsigned := `{"decision":{"decision":"deny","rule":"path.protected","reason":"no"}}`
	tl := NewTally()
	for i, r := range []*replay.Record{
		entry(t, 1, func() schemas.Entry { e := full; e.HookEvent = schemas.HookPreToolUse; return e }(), ""),
		entry(t, 2, schemas.Entry{HookEvent: schemas.HookPostToolUse, Host: "h1",
			Redactions: []schemas.Redaction{{Digest: "sha256:aa", Rule: "aws"}, {Digest: "sha256:bb", Rule: "gh"}}}, ""),
		entry(t, 3, schemas.Entry{HookEvent: schemas.GateDecisionEvent, Host: "h1"}, signed),
		entry(t, 4, schemas.Entry{HookEvent: schemas.GateDecisionEvent, Host: "h2"}, unsigned),
		entry(t, 5, schemas.Entry{Kind: schemas.EntryInvalid, Reason: "not JSON"}, ""),
		entry(t, 6, schemas.Entry{Kind: schemas.EntryVerdict, Verdict: &schemas.Verdict{Args: []byte(`{}`), Claim: "done",
			Reasons: []string{}, Validator: "test_pass", Verdict: "PASS", AttestationID: "ATT1"}}, ""),
		entry(t, 7, schemas.Entry{HookEvent: schemas.GateFindingEvent}, `{"finding":{"kind":"hook_config_drift"}}`),
		entry(t, 8, schemas.Entry{HookEvent: schemas.HookCrashEvent, IngestedAt: "2026-11-28T05:00:00+01:00"}, `{"error":"panic"}`),
	} {
		_ = i
		tl.Add(r)
	}
	return tl
}

func TestTallyCounts(t *testing.T) {
	tl := tally(t)
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"entries", tl.Entries, 8}, {"hosts", tl.Hosts, 2}, {"sessions", tl.Sessions, 1}, {"events", tl.Events, 6},
		{"attributed", tl.Attributed, 1}, {"utc", tl.UTCStamps, 7}, {"redactions", tl.Redactions, 2}, {"redacted", tl.Redacted, 1},
		{"denies", tl.Decisions["deny"], 2}, {"signed", tl.Signed, 1}, {"shell", tl.ShellDenies, 1}, {"path", tl.PathDenies, 1},
		{"drift", tl.Findings["hook_config_drift"], 1}, {"crashes", tl.Crashes, 1}, {"passes", tl.Passes, 1},
		{"invalid", tl.ByKind["invalid"], 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	if tl.MaxDelay != time.Second || len(tl.Attested) != 1 {
		t.Errorf("delay %s, attested %v", tl.MaxDelay, tl.Attested)
	}
}

func status(r Report, id string) string {
	for _, c := range r.Controls {
		if c.ID == id {
			return c.Status
		}
	}
	return "missing"
}

func TestBuildStatusesFollowTheFacts(t *testing.T) {
	good := func() Facts {
		f := Facts{Generated: now, Window: replay.Window{Since: now.Add(-24 * time.Hour)}, Tally: NewTally(), Replay: &replay.Summary{},
			Retention: 365 * 24 * time.Hour, HotWindow: 30 * 24 * time.Hour, Identity: "operator", Policies: []string{"2026-11-25.1"},
			Archive: &ArchiveFacts{URL: "file:///a", Segments: 3, Oldest: now.Add(-400 * 24 * time.Hour), VerifiedAt: now}}
		f.Keys.Total, f.Keys.Active = 2, 1
		return f
	}
	tests := []struct {
		name   string
		change func(*Facts)
		want   map[string]string
	}{
		{"quiet window", func(*Facts) {}, map[string]string{"AU-2": StatusNoEvents, "AU-9": StatusEvidence, "AU-11": StatusEvidence,
			"AC-6": StatusEvidence, "SC-8": StatusNotObservable, "SI-3": StatusNoEvents}},
		{"busy window", func(f *Facts) { f.Tally = tally(t) }, map[string]string{"AU-2": StatusEvidence,
			"AU-3": StatusAttention, "AU-8": StatusAttention, "SC-28": StatusEvidence, "SI-3": StatusEvidence, "AC-3": StatusEvidence,
			"CM-6": StatusAttention, "AU-12": StatusAttention, "AU-10": StatusAttention}},
		{"attestations verified", func(f *Facts) {
			f.Tally = tally(t)
			f.Attestation.Checked, f.Attestation.Verified = 1, 1
		}, map[string]string{"AU-10": StatusEvidence}},
		{"chain fault", func(f *Facts) { f.Replay.Faults = []replay.Fault{{Chain: "s", N: 3, Reason: "hash mismatch"}} },
			map[string]string{"AU-9": StatusAttention}},
		{"unsafe ledger", func(f *Facts) { f.LedgerSafe = errors.New("deny_delete is off") }, map[string]string{"AU-9": StatusAttention}},
		{"ledger not its Merkle tree", func(f *Facts) { f.Tree.Err = errors.New("LEDGER message 3 differs from leaf 2") },
			map[string]string{"AU-9": StatusAttention}},
		{"archive problem", func(f *Facts) { f.Archive.Problems = []string{"segment X: digest"} }, map[string]string{"AU-11": StatusAttention}},
		{"no archive", func(f *Facts) { f.Archive = nil }, map[string]string{"AU-11": StatusNotObservable}},
		{"tls", func(f *Facts) { f.TLS = true }, map[string]string{"SC-8": StatusEvidence}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := good()
			tt.change(&f)
			r := Build(f)
			if len(r.Controls) != 14 {
				t.Fatalf("%d controls", len(r.Controls))
			}
			for id, want := range tt.want {
				if got := status(r, id); got != want {
					t.Errorf("%s: %s, want %s", id, got, want)
				}
			}
		})
	}
	// Retention reached or not, as the evidence says.
	f := good()
	if ev := strings.Join(Build(f).Controls[5].Evidence, "\n"); !strings.Contains(ev, "required retention 365 days: reached") {
		t.Errorf("AU-11: %s", ev)
	}
	f.Archive.Oldest = now.Add(-12 * 24 * time.Hour)
	if ev := strings.Join(Build(f).Controls[5].Evidence, "\n"); !strings.Contains(ev, "oldest record held") ||
		!strings.Contains(ev, "(12 days); required retention 365 days: not yet reached") {
		t.Errorf("AU-11: %s", ev)
	}
}

func TestRenderings(t *testing.T) {
	f := Facts{Generated: now, Tally: tally(t), Replay: &replay.Summary{}, Retention: 365 * 24 * time.Hour}
	r := Build(f)
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"AU-2", "AU-3", "AU-8", "AU-9", "AU-10", "AU-11", "AU-12", "AC-3", "AC-6", "CM-6", "SC-8", "SC-28", "SI-3", "SI-10"} {
		if !strings.Contains(md.String(), fmt.Sprintf("\n## %s — ", id)) || !strings.Contains(md.String(), "| "+id+" ") {
			t.Errorf("markdown lacks %s", id)
		}
	}
	if !strings.Contains(md.String(), "Window: the beginning of the ledger to") || !strings.Contains(md.String(), "**Backed by:**") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var js bytes.Buffer
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Controls) != 14 || back.Entries != 8 {
		t.Fatalf("json: %v %+v", err, back)
	}
}
