// Package compliance maps what a running claimcheck did over a window to
// the NIST SP 800-53 controls the first prototype's security document
// (seed 003) claims — AU-2, AU-3, AU-8, AU-9, AU-10, AU-11, AU-12, AC-3,
// AC-6, CM-6, SC-8, SC-28, SI-3 and SI-10 — with the evidence for each:
// counts from the replayed ledger, the evidence streams' configuration,
// the archive's reach and last verification, and the tests that back
// each claim. It decides nothing about the system it reports on: every
// status is computed from the facts the caller gathered.
package compliance

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/export"
	"github.com/claimcheck/claimcheck/pkg/replay"
	"github.com/claimcheck/claimcheck/schemas"
)

// Tally counts what the replayed entries show.
type Tally struct {
	Entries     int            `json:"entries"`
	Sessions    int            `json:"sessions"`
	Hosts       int            `json:"hosts"`
	ByEvent     map[string]int `json:"by_event"`
	ByKind      map[string]int `json:"by_kind"`
	Attributed  int            `json:"attributed"` // events with host, session, agent, event id and received_at
	Events      int            `json:"events"`     // entries of kind event
	UTCStamps   int            `json:"utc_stamps"` // ingested_at (and received_at when present) RFC 3339 in UTC
	MaxDelay    time.Duration  `json:"max_receive_to_ingest_ns"`
	Redactions  int            `json:"redactions"`
	Redacted    int            `json:"redacted_entries"`
	Decisions   map[string]int `json:"gate_decisions"` // by decision
	Signed      int            `json:"signed_decisions"`
	ShellDenies int            `json:"shell_denies"` // PreToolUse denies and asks by a shell rule
	PathDenies  int            `json:"path_denies"`  // by a path, URL or configuration rule
	Findings    map[string]int `json:"findings"`
	Overrides   int            `json:"overrides"`
	Crashes     int            `json:"hook_crashes"`
	Passes      int            `json:"passes"`
	Attested    []string       `json:"-"` // attestation ids of PASS verdicts
	First, Last time.Time      `json:"-"`

	sessions, hosts map[string]bool
}

// NewTally starts counting.
func NewTally() *Tally {
	return &Tally{ByEvent: map[string]int{}, ByKind: map[string]int{}, Decisions: map[string]int{}, Findings: map[string]int{},
		sessions: map[string]bool{}, hosts: map[string]bool{}}
}

// Add counts one replayed record.
func (t *Tally) Add(r *replay.Record) {
	d := export.Decode(r)
	e := &d.Entry
	t.Entries++
	t.ByKind[e.Kind]++
	if e.HookEvent != "" {
		t.ByEvent[e.HookEvent]++
	}
	if e.SessionID != "" && !t.sessions[e.SessionID] {
		t.sessions[e.SessionID] = true
		t.Sessions++
	}
	if e.Host != "" && !t.hosts[e.Host] {
		t.hosts[e.Host] = true
		t.Hosts++
	}
	ing, ierr := time.Parse(time.RFC3339Nano, e.IngestedAt)
	rec, rerr := time.Parse(time.RFC3339Nano, e.ReceivedAt)
	utcReceived := e.ReceivedAt == "" || (rerr == nil && strings.HasSuffix(e.ReceivedAt, "Z"))
	if ierr == nil && strings.HasSuffix(e.IngestedAt, "Z") && utcReceived {
		t.UTCStamps++
	}
	if ierr == nil && rerr == nil && ing.Sub(rec) > t.MaxDelay {
		t.MaxDelay = ing.Sub(rec)
	}
	if ierr == nil {
		if t.First.IsZero() || ing.Before(t.First) {
			t.First = ing
		}
		if ing.After(t.Last) {
			t.Last = ing
		}
	}
	if e.Kind == schemas.EntryEvent {
		t.Events++
		if e.Host != "" && e.SessionID != "" && e.AgentID != "" && e.EventID != "" && e.ReceivedAt != "" {
			t.Attributed++
		}
	}
	if len(e.Redactions) > 0 {
		t.Redacted++
		t.Redactions += len(e.Redactions)
	}
	t.addGate(&d)
}

func (t *Tally) addGate(d *export.Decoded) {
	e := &d.Entry
	switch {
	case e.HookEvent == schemas.GateDecisionEvent:
		t.Decisions[d.Decision]++
		if d.Signed {
			t.Signed++
		}
		if d.Decision == schemas.GateDeny || d.Decision == schemas.GateAsk {
			switch {
			case strings.HasPrefix(d.Rule, "shell.") || strings.HasPrefix(d.Rule, "git."):
				t.ShellDenies++
			case d.Rule != "" && !strings.HasPrefix(d.Rule, "hook.") && !strings.HasPrefix(d.Rule, "http."):
				t.PathDenies++
			}
		}
	case e.HookEvent == schemas.GateFindingEvent:
		t.Findings[d.Finding]++
	case e.HookEvent == schemas.GateOverrideEvent || e.HookEvent == schemas.OverrideEvent:
		t.Overrides++
	case e.HookEvent == schemas.HookCrashEvent:
		t.Crashes++
	case e.Kind == schemas.EntryVerdict && d.Verdict == schemas.Pass:
		t.Passes++
		if d.AttestationID != "" {
			t.Attested = append(t.Attested, d.AttestationID)
		}
	}
}

// Facts is everything a report is computed from.
type Facts struct {
	Generated   time.Time
	Window      replay.Window
	Tally       *Tally
	Replay      *replay.Summary
	LedgerSafe  error // stream.CheckLedger of LEDGER's configuration (nil: safe)
	AttestSafe  error // stream.CheckAppendOnly of ATTEST's
	Attestation struct {
		Checked, Verified int
		Failures          []string
	}
	Keys struct {
		Total, Active, Revoked int
	}
	Archive *ArchiveFacts // nil: no archive found
	// Retention is the archive retention in force (rotator.archive_retention).
	Retention time.Duration
	HotWindow time.Duration
	// Policies in force (version and digest), from the policies bucket.
	Policies []string
	TLS      bool   // the report's own connection to NATS used TLS
	Identity string // the role the report ran as
	// Tree is the ledger's Merkle tree checked as ledger verify checks it:
	// what was checked, or the mismatch (or why it could not be checked).
	Tree struct {
		Summary string
		Err     error
	}
}

// ArchiveFacts is what the archive holds and how its verification went.
type ArchiveFacts struct {
	URL        string
	Segments   int
	Tombstones int
	Oldest     time.Time // the oldest entry time the archive (or a tombstone) covers
	Entries    int
	VerifiedAt time.Time
	Problems   []string
}

// Control is one control's line in the report.
type Control struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Status   string   `json:"status"` // evidence, attention, no-events, not-observable
	Does     string   `json:"what_claimcheck_does"`
	Evidence []string `json:"evidence"`
	Tests    []string `json:"tests"`
}

// Statuses.
const (
	StatusEvidence      = "evidence"       // the window holds evidence that the control operated
	StatusAttention     = "attention"      // the facts show a failure to look at
	StatusNoEvents      = "no-events"      // the control is in place but nothing in the window exercised it
	StatusNotObservable = "not-observable" // the report cannot see it from where it runs
)

// Report is the whole report.
type Report struct {
	Generated string    `json:"generated"`
	Since     string    `json:"since"`
	Until     string    `json:"until"`
	Entries   int       `json:"entries"`
	Sessions  int       `json:"sessions"`
	Hosts     int       `json:"hosts"`
	Faults    int       `json:"chain_faults"`
	Controls  []Control `json:"controls"`
}

// Build computes the report.
func Build(f Facts) Report {
	t := f.Tally
	r := Report{Generated: f.Generated.UTC().Format(time.RFC3339), Since: stamp(f.Window.Since), Until: stamp(f.Window.Until),
		Entries: t.Entries, Sessions: t.Sessions, Hosts: t.Hosts}
	if f.Window.Until.IsZero() {
		r.Until = r.Generated
	}
	if f.Replay != nil {
		r.Faults = len(f.Replay.Faults)
	}
	r.Controls = append(r.Controls, audit(f)...)
	r.Controls = append(r.Controls, retention(f), generation(f))
	r.Controls = append(r.Controls, access(f)...)
	r.Controls = append(r.Controls, protection(f)...)
	return r
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func audit(f Facts) []Control {
	t := f.Tally
	au2 := Control{ID: "AU-2", Title: "Event logging",
		Does: "every hook event of every agent session (prompts, tool calls and results, stops, session starts and ends), " +
			"every claim, verdict, gate decision, override, alert, hook crash and rotator action is an entry in a hash chain",
		Evidence: []string{fmt.Sprintf("%d entries of %d sessions on %d host(s) in the window", t.Entries, t.Sessions, t.Hosts),
			"by event: " + counts(t.ByEvent), "by kind: " + counts(t.ByKind)},
		Tests: []string{"e2e TestClaudeCodeSessionEndToEnd", "services/ingest TestIngestRecordsBadInputWithoutBlockingOthers"}}
	au2.Status = withEvents(t.Entries > 0, StatusEvidence)
	au3 := Control{ID: "AU-3", Title: "Content of audit records",
		Does: "each event entry carries host, session, agent, event id, tool, tool_use_id, received and ingested times, " +
			"the scrubbed payload and the digest of the bytes received",
		Evidence: []string{fmt.Sprintf("%d of %d event entries carry host, session, agent, event id and received_at",
			t.Attributed, t.Events)},
		Tests: []string{"schemas/validation TestEventSchema", "e2e TestClaudeCodeSessionEndToEnd"}}
	au3.Status = withEvents(t.Events > 0, ok(t.Attributed == t.Events))
	au8 := Control{ID: "AU-8", Title: "Time stamps",
		Does: "received_at (the hook, UTC RFC 3339 with ms) and ingested_at (ingest, UTC RFC 3339) on every entry",
		Evidence: []string{fmt.Sprintf("%d of %d entries stamped in UTC RFC 3339; longest receive-to-ingest delay %s", t.UTCStamps,
			t.Entries, t.MaxDelay.Round(time.Millisecond))},
		Tests: []string{"services/ingest/internal/record FuzzBuild"}}
	au8.Status = withEvents(t.Entries > 0, ok(t.UTCStamps == t.Entries))
	au9 := Control{ID: "AU-9", Title: "Protection of audit information",
		Does: "per-session SHA-256 hash chains verified on every read; LEDGER refuses deletes and header tricks, ATTEST is " +
			"append-only; no role but the rotator may purge LEDGER (behind a verified archive); the agent's tools cannot " +
			"write claimcheck's data or configuration",
		Tests: []string{"pkg/chain TestAnySingleMutationIsDetected", "pkg/stream TestLedgerRefusesDeletesAndHeaderFeatures",
			"pkg/identity TestAttemptsPerRole", "pkg/replay TestRunReportsBrokenChains"}}
	faults := 0
	if f.Replay != nil {
		faults = len(f.Replay.Faults)
	}
	tree := f.Tree.Summary
	if f.Tree.Err != nil {
		tree = "Merkle tree: " + f.Tree.Err.Error()
	}
	au9.Evidence = []string{fmt.Sprintf("%d entries checked against their chains: %d faults, %d chains unanchored", t.Entries, faults,
		unanchored(f)), "LEDGER configuration: " + safe(f.LedgerSafe), "ATTEST configuration: " + safe(f.AttestSafe), tree}
	au9.Does += "; one Merkle tree over LEDGER with signed checkpoints that witnesses cosign only as it grows consistently"
	au9.Tests = append(au9.Tests, "pkg/transparency TestAuditFindsWhatTheCheckpointDoesNotCover", "e2e TestTransparencyEndToEnd")
	au9.Status = ok(faults == 0 && f.LedgerSafe == nil && f.AttestSafe == nil && f.Tree.Err == nil)
	au10 := Control{ID: "AU-10", Title: "Non-repudiation",
		Does: "each PASS verdict is a DSSE/in-toto attestation signed with a versioned key; each gate decision and finding is " +
			"signed by the gatekeeper; archive checkpoints are signed",
		Evidence: []string{fmt.Sprintf("%d PASS verdicts, %d attestations checked, %d verified", t.Passes, f.Attestation.Checked,
			f.Attestation.Verified),
			fmt.Sprintf("%d gate decisions, %d carry signatures", sum(t.Decisions), t.Signed),
			fmt.Sprintf("keys: %d in the registry, %d active, %d revoked", f.Keys.Total, f.Keys.Active, f.Keys.Revoked)},
		Tests: []string{"pkg/attest TestIndependentDSSEVerifierAccepts", "pkg/keyring TestForgeriesAreRejected",
			"e2e TestKeysRotateRevokeAndVerifyEndToEnd"}}
	au10.Evidence = append(au10.Evidence, first(f.Attestation.Failures, 5)...)
	au10.Status = withEvents(t.Passes+sum(t.Decisions) > 0, ok(len(f.Attestation.Failures) == 0 &&
		f.Attestation.Verified == len(t.Attested)))
	return []Control{au2, au3, au8, au9, au10}
}

func retention(f Facts) Control {
	c := Control{ID: "AU-11", Title: "Audit record retention",
		Does: fmt.Sprintf("the rotator archives LEDGER and ATTEST in signed, verified segments, keeps %s hot and deletes "+
			"archived segments after %s, each deletion a ledger record", days(f.HotWindow), days(f.Retention)),
		Tests: []string{"services/rotator TestFourHundredSimulatedDays", "e2e TestRotatorLiveCycleEndToEnd",
			"pkg/archive TestIntactArchiveVerifies", "TestTombstones"}}
	a := f.Archive
	if a == nil {
		c.Status = StatusNotObservable
		c.Evidence = []string{"no archive found where the report looked (rotator.archive_url): retention cannot be shown"}
		return c
	}
	oldest := a.Oldest
	if !f.Tally.First.IsZero() && (oldest.IsZero() || f.Tally.First.Before(oldest)) {
		oldest = f.Tally.First
	}
	held := f.Generated.Sub(oldest)
	reached := "not yet reached"
	if !oldest.IsZero() && held >= f.Retention {
		reached = "reached"
	}
	c.Evidence = []string{
		fmt.Sprintf("archive %s: %d segments, %d deleted by retention (tombstones), %d entries", a.URL, a.Segments, a.Tombstones,
			a.Entries),
		fmt.Sprintf("oldest record held: %s (%s); required retention %s: %s", stamp(oldest), days(held), days(f.Retention), reached),
		fmt.Sprintf("archive verified at %s: %d problems", stamp(a.VerifiedAt), len(a.Problems)),
	}
	c.Evidence = append(c.Evidence, first(a.Problems, 5)...)
	c.Status = ok(len(a.Problems) == 0)
	return c
}

func generation(f Facts) Control {
	t := f.Tally
	c := Control{ID: "AU-12", Title: "Audit record generation",
		Does: "claimcheck-hook records every event before it answers (fail closed, spooled when NATS is down); a session " +
			"whose events stop while its host goes on, or that starts without claimcheck's hooks, is a signed finding",
		Evidence: []string{fmt.Sprintf("%d hook crashes recorded; findings: %s", t.Crashes, counts(t.Findings))},
		Tests: []string{"cmd/claimcheck-hook TestSpoolsWhileNATSIsDownAndFlushesInOrder",
			"services/gatekeeper TestUngatedSessionIsAFinding",
			"e2e TestHookConfigDriftIsRecorded"}}
	c.Status = withEvents(t.Entries > 0, ok(t.Findings[schemas.FindingUngated]+t.Findings[schemas.FindingHookConfigDrift] == 0))
	return c
}

func access(f Facts) []Control {
	t := f.Tally
	ac3 := Control{ID: "AC-3", Title: "Access enforcement",
		Does: "the PreToolUse gate denies or asks for protected paths, claimcheck's own configuration and data, private " +
			"addresses and disallowed URL schemes; NATS permissions bind each identity to its own subjects",
		Evidence: []string{fmt.Sprintf("gate decisions: %s; %d denied or asked by a path, URL or configuration rule", counts(t.Decisions),
			t.PathDenies)},
		Tests: []string{"services/gatekeeper/internal/pretool TestAgentConfiguration", "pkg/identity TestAttemptsPerRole"}}
	ac3.Status = withEvents(sum(t.Decisions) > 0, StatusEvidence)
	ac6 := Control{ID: "AC-6", Title: "Least privilege",
		Does: "every client has a NATS identity with only its role's subjects (hook, ingest, verifier, gatekeeper, rotator, " +
			"operator, auditor, admin); a hook publishes only its own host's events",
		Evidence: []string{fmt.Sprintf("this report ran as %q and read only what that role may", f.Identity)},
		Tests:    []string{"pkg/identity TestAttemptsPerRole", "e2e TestAttackTableEndToEnd", "pkg/replay TestRunWithTheReadingRoles"},
		Status:   StatusEvidence}
	cm6 := Control{ID: "CM-6", Title: "Configuration settings",
		Does: "claim and PreToolUse policies are versioned, schema-checked, write-once data whose digest every verdict and " +
			"decision carries; every SessionStart records the hook configuration it runs under",
		Evidence: []string{"policies in force: " + list(f.Policies),
			fmt.Sprintf("%d sessions started with claimcheck's hooks missing or changed (hook_config_drift findings)",
				t.Findings[schemas.FindingHookConfigDrift])},
		Tests: []string{"services/verifier TestPolicyVersionsAreWriteOnce", "pkg/hookconfig TestReadJudgesEachLayer"}}
	cm6.Status = ok(t.Findings[schemas.FindingHookConfigDrift] == 0)
	return []Control{ac3, ac6, cm6}
}

func protection(f Facts) []Control {
	t := f.Tally
	sc8 := Control{ID: "SC-8", Title: "Transmission confidentiality and integrity",
		Does: "the embedded NATS listens on loopback only unless told otherwise; fleets connect over TLS " +
			"(claimcheck-hook-tls); signed gate decisions carry the request's nonce",
		Evidence: []string{fmt.Sprintf("this report's connection to NATS used TLS: %v", f.TLS)},
		Tests:    []string{"pkg/embedded TestConfigValidate", "pkg/oneshot TestNoTLSBuildRefusesTLS"},
		Status:   StatusNotObservable}
	if f.TLS {
		sc8.Status = StatusEvidence
	}
	sc28 := Control{ID: "SC-28", Title: "Protection of information at rest",
		Does: "secrets are scrubbed (gitleaks rules) before anything is stored, their digests kept; the embedded store is " +
			"encrypted",
		Evidence: []string{fmt.Sprintf("%d secrets redacted from %d entries in the window", t.Redactions, t.Redacted),
			"store encryption is configured on the server and cannot be observed from a client"},
		Tests: []string{"services/ingest TestIngestScrubsSecretsAndKeepsDigest", "e2e TestClaudeCodeSessionEndToEnd"}}
	sc28.Status = withEvents(t.Redactions > 0, StatusEvidence)
	si3 := Control{ID: "SI-3", Title: "Malicious code protection",
		Does: "shell commands are parsed into a syntax tree and judged by rule (destructive commands, inline interpreter " +
			"code, work the user cannot get back): deny or ask",
		Evidence: []string{fmt.Sprintf("%d PreToolUse denials or asks by a shell rule", t.ShellDenies)},
		Tests:    []string{"services/gatekeeper/internal/pretool TestShellCorpus", "FuzzDecideShell"}}
	si3.Status = withEvents(t.ShellDenies > 0, StatusEvidence)
	si10 := Control{ID: "SI-10", Title: "Information input validation",
		Does: "hook payloads are decoded strictly (duplicate keys, invalid UTF-8, size caps) and validated against JSON " +
			"Schemas; what fails is recorded, never dropped",
		Evidence: []string{fmt.Sprintf("%d invalid and %d rejected inputs recorded", t.ByKind[schemas.EntryInvalid],
			t.ByKind[schemas.EntryRejected])},
		Tests: []string{"pkg/payload TestInspectRejects", "e2e TestBadInputEndToEnd"}}
	si10.Status = withEvents(t.Entries > 0, StatusEvidence)
	return []Control{sc8, sc28, si3, si10}
}

func ok(good bool) string {
	if good {
		return StatusEvidence
	}
	return StatusAttention
}

func withEvents(any bool, status string) string {
	if !any {
		return StatusNoEvents
	}
	return status
}

func safe(err error) string {
	if err == nil {
		return "append-only, as required"
	}
	return "NOT SAFE: " + err.Error()
}

func unanchored(f Facts) int {
	if f.Replay == nil {
		return 0
	}
	return len(f.Replay.Unanchored)
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := k
		if name == "" {
			name = "(none)"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, m[k]))
	}
	return strings.Join(parts, ", ")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func list(s []string) string {
	if len(s) == 0 {
		return "none found"
	}
	return strings.Join(s, ", ")
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string(nil), s[:n]...), fmt.Sprintf("… %d more", len(s)-n))
	}
	return s
}

func days(d time.Duration) string {
	if d <= 0 {
		return "0 days"
	}
	if d < 48*time.Hour {
		return d.Round(time.Second).String()
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

// Markdown writes the report for people.
func Markdown(w io.Writer, r Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# claimcheck compliance report\n\nGenerated %s. Window: %s to %s.\n\n", r.Generated, orAll(r.Since), r.Until)
	fmt.Fprintf(&b, "%d ledger entries of %d sessions on %d host(s); %d chain faults.\n\n", r.Entries, r.Sessions, r.Hosts, r.Faults)
	b.WriteString("| control | status | evidence |\n|---|---|---|\n")
	for _, c := range r.Controls {
		fmt.Fprintf(&b, "| %s %s | %s | %s |\n", c.ID, c.Title, c.Status, cell(c.Evidence[0]))
	}
	for _, c := range r.Controls {
		fmt.Fprintf(&b, "\n## %s — %s\n\n**Status:** %s\n\n**What claimcheck does:** %s\n\n**Evidence:**\n\n",
			c.ID, c.Title, c.Status, c.Does)
		for _, e := range c.Evidence {
			fmt.Fprintf(&b, "- %s\n", e)
		}
		fmt.Fprintf(&b, "\n**Backed by:** %s\n", strings.Join(c.Tests, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orAll(s string) string {
	if s == "" {
		return "the beginning of the ledger"
	}
	return s
}

func cell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }

// JSON writes the report as one JSON document.
func JSON(w io.Writer, r Report) error {
	b, err := json.Marshal(r, json.Deterministic(true))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}
