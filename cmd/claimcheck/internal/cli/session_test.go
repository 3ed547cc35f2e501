package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// appendTurn chains a prompt, then for each decision a Stop event and its
// decision record, into session.
func appendTurn(t *testing.T, js jetstream.JetStream, session string, decisions ...schemas.GateDecision) {
	t.Helper()
	a := ledger.NewAppender(js, ledger.AppenderConfig{})
	n := 0
	entry := func(event string, payload any) *schemas.Entry {
		n++
		raw, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		p := string(raw)
		return &schemas.Entry{V: 1, Kind: schemas.EntryEvent, Chain: session, SessionID: session,
			EventID: fmt.Sprintf("01JD%s%018d", strings.ToUpper(session[:4]), n), HookEvent: event,
			IngestedAt: "2026-11-25T03:04:05.123Z", ReceivedAt: "2026-11-25T03:04:05.100Z",
			Payload: &p, PayloadDigest: "sha256:" + strings.Repeat("0", 64), PayloadSize: len(p), Bundle: "test"}
	}
	entries := []*schemas.Entry{entry(schemas.HookUserPromptSubmit, map[string]string{"session_id": session, "prompt": "fix it"})}
	for _, d := range decisions {
		stop := entry(schemas.HookStop, map[string]any{"session_id": session, "hook_event_name": "Stop"})
		d.HookEvent, d.EventID, d.SessionID = schemas.HookStop, stop.EventID, session
		rec := entry(schemas.GateDecisionEvent, schemas.GateRecord{SessionID: session, HookEvent: schemas.GateDecisionEvent, Decision: d})
		entries = append(entries, stop, rec)
	}
	if _, err := a.Append(t.Context(), session, entries); err != nil {
		t.Fatal(err)
	}
}

func TestSessionStatusExitsZeroOnlyWhenVerified(t *testing.T) {
	s := natstest.RunServer(t)
	nc, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	block := schemas.GateDecision{Decision: schemas.GateBlock, Rule: "stop.final_block_missing", Reason: "claimcheck blocked this stop: no block"}
	appendTurn(t, js, "good-session", block, schemas.GateDecision{Decision: schemas.GateAllow, Rule: "stop.allowed"})
	appendTurn(t, js, "capped-session", block, schemas.GateDecision{Decision: schemas.GateAllow, Rule: "stop.block_cap", Capped: true,
		SystemMessage: "claimcheck: 1 consecutive stops were blocked; … NOT verified"})
	appendTurn(t, js, "down-session", schemas.GateDecision{Decision: schemas.GateBlock, Rule: schemas.RuleHookFailClosed,
		Reason: "claimcheck blocked this stop because it could not check it (fail closed)"})
	env := map[string]string{"CLAIMCHECK_NATS_URL": s.ClientURL(), "HOME": t.TempDir()}

	r := runCLI(t, env, "session", "status", "--session", "good-session")
	if r.code != ExitOK || !strings.Contains(r.stdout, "session good-session: verified (last stop at n=4, rule stop.allowed)") {
		t.Fatalf("verified: %+v", r)
	}
	r = runCLI(t, env, "session", "status", "--session", "capped-session")
	if r.code != ExitFault || !strings.Contains(r.stdout, "not verified (capped)") || !strings.Contains(r.stdout, "NOT verified") {
		t.Fatalf("capped: %+v", r)
	}
	r = runCLI(t, env, "session", "status", "--session", "down-session", "--json")
	var o struct {
		Session  string `json:"session"`
		Outcome  string `json:"outcome"`
		Verified bool   `json:"verified"`
		Rule     string `json:"rule"`
	}
	if r.code != ExitFault || json.Unmarshal([]byte(r.stdout), &o) != nil || o.Outcome != "gate unreachable" || o.Verified ||
		o.Rule != schemas.RuleHookFailClosed || o.Session != "down-session" {
		t.Fatalf("gate unreachable, --json: %+v (%+v)", r, o)
	}
	// ledger sessions shows the same outcomes.
	r = runCLI(t, env, "ledger", "sessions")
	for _, want := range []string{"good-session", "verified", "capped-session", "not verified (capped)", "down-session", "gate unreachable"} {
		if r.code != ExitOK || !strings.Contains(r.stdout, want) {
			t.Fatalf("ledger sessions lacks %q: %+v", want, r)
		}
	}
	if r := runCLI(t, env, "session", "status", "--session", "no-such-session"); r.code != ExitError || !strings.Contains(r.stderr, "unknown session") {
		t.Fatalf("unknown session: %+v", r)
	}
	if r := runCLI(t, env, "session", "status", "--session", "../x"); r.code != ExitError {
		t.Fatalf("hostile session id: %+v", r)
	}
	// A foreign entry on the chain's subject (written with the server's
	// unrestricted access, as an admin could): the chain does not verify,
	// and status says so rather than reading an outcome from it.
	forged := `{"v":1,"kind":"event","chain":"good-session","n":5,"hook_event":"Stop","prev_hash":"sha256:00","hash":"sha256:00"}`
	if _, err := js.Publish(t.Context(), subject.Ledger("good-session"), []byte(forged)); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	r = runCLI(t, env, "session", "status", "--session", "good-session")
	if r.code != ExitFault || !strings.Contains(r.stderr, "does not verify at n=6") {
		t.Fatalf("forged entry: %+v", r)
	}
}
