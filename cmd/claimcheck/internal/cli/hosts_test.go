package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/schemas"
)

// TestHosts: hosts lists each host's last SessionStart verdict and the
// findings about its sessions; --drifted only the hosts whose last session
// did not start gated; a finding a host published itself does not count.
func TestHosts(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	app := ledger.NewAppender(js, ledger.AppenderConfig{})
	n := 0
	entry := func(session, host, origin, event, at string, payload string, cfg *schemas.HookConfig) *schemas.Entry {
		n++
		return &schemas.Entry{V: 1, Kind: schemas.EntryEvent, Chain: session, SessionID: session, EventID: fmt.Sprintf("01JD%022d", n),
			HookEvent: event, Host: host, Origin: origin, IngestedAt: at, ReceivedAt: at, Payload: &payload, HookConfig: cfg,
			PayloadDigest: "sha256:" + strings.Repeat("0", 64), PayloadSize: len(payload), Bundle: "test"}
	}
	start := func(session, host, at string, verdict string) *schemas.Entry {
		var cfg *schemas.HookConfig
		if verdict != "" {
			cfg = &schemas.HookConfig{V: 1, Verdict: verdict, Layers: []schemas.HookLayer{}}
			if verdict != schemas.HooksGated {
				cfg.Missing = []string{"Stop"}
			}
		}
		return entry(session, host, "hook:"+host, schemas.HookSessionStart, at,
			fmt.Sprintf(`{"session_id":%q,"hook_event_name":"SessionStart"}`, session), cfg)
	}
	finding := func(session, host, kind, origin string) *schemas.Entry {
		raw, _ := json.Marshal(schemas.FindingRecord{SessionID: session, HookEvent: schemas.GateFindingEvent,
			Finding: schemas.GateFinding{V: 1, Kind: kind, SessionID: session, Host: host}})
		return entry(session, "gk-host", origin, schemas.GateFindingEvent, "2026-11-25T10:00:00Z", string(raw), nil)
	}
	appendTo := func(session string, es ...*schemas.Entry) {
		t.Helper()
		if _, err := app.Append(t.Context(), session, es); err != nil {
			t.Fatal(err)
		}
	}
	appendTo("s1", start("s1", "laptop", "2026-11-25T09:00:00Z", schemas.HooksGated))
	appendTo("s2", start("s2", "laptop", "2026-11-25T09:30:00Z", schemas.HooksNone),
		finding("s2", "laptop", schemas.FindingHookConfigDrift, "gatekeeper:gk1"))
	appendTo("s1", finding("s1", "laptop", schemas.FindingUngated, "gatekeeper:gk1"),
		finding("s1", "laptop", schemas.FindingUngated, "hook:laptop")) // forged: not counted
	appendTo("s3", start("s3", "ci", "2026-11-25T08:00:00Z", schemas.HooksMissing))
	appendTo("s4", start("s4", "ci", "2026-11-25T09:00:00Z", schemas.HooksGated))
	appendTo("s5", start("s5", "old", "2026-11-25T09:00:00Z", ""))
	// Ingest cuts the fraction's trailing zeros: s7 is the later start.
	appendTo("s6", start("s6", "trim", "2026-11-25T09:00:00.5Z", schemas.HooksGated))
	appendTo("s7", start("s7", "trim", "2026-11-25T09:00:00.512Z", schemas.HooksNone))
	env := map[string]string{"CLAIMCHECK_NATS_URL": s.ClientURL(), "HOME": t.TempDir()}

	r := runCLI(t, env, "hosts", "--json")
	if r.code != 0 {
		t.Fatalf("hosts: %+v", r)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var h hostRow
		if err := json.Unmarshal([]byte(l), &h); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %d %s %s %d %d", h.Host, h.Sessions, h.LastSession, h.Verdict, h.Drift, h.Ungated))
	}
	want := []string{"ci 2 s4 gated 0 0", "laptop 2 s2 none 1 1", "old 1 s5 unknown 0 0", "trim 2 s7 none 0 0"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("hosts:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r = runCLI(t, env, "hosts", "--drifted")
	if r.code != 0 || !strings.Contains(r.stdout, "laptop") || strings.Contains(r.stdout, "ci ") || strings.Contains(r.stdout, "old") || !strings.Contains(r.stdout, "trim") ||
		!strings.Contains(r.stdout, "none (1 unhandled)") {
		t.Fatalf("hosts --drifted: %+v", r)
	}
}
