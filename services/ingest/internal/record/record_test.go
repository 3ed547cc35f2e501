package record

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/pkg/scrub"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

var (
	src = envelope.Source{Host: "laptop", AgentType: "claude-code", AgentID: "dev@laptop"}
	at  = time.Date(2026, 11, 22, 3, 4, 5, 123e6, time.UTC)
)

const eid = "01JDB3H5KX0000000000000000"

func builder(t testing.TB) *Builder {
	t.Helper()
	sc, err := scrub.New()
	if err != nil {
		t.Fatal(err)
	}
	v, err := validation.New()
	if err != nil {
		t.Fatal(err)
	}
	return &Builder{Scrub: sc, Schemas: v, InlineMax: 4096, MaxDepth: 64, Bundle: "test"}
}

func event(t testing.TB, raw string) []byte {
	t.Helper()
	var p struct {
		S string `json:"session_id"`
		E string `json:"hook_event_name"`
	}
	_ = json.Unmarshal([]byte(raw), &p)
	b, err := envelope.Event(eid, p.S, p.E, 7, at, src, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func intakeSubject(chainName string) string { return "cc.intake.1.hook.laptop." + chainName + ".Stop" }

// sealAndValidate checks the invariant every record must meet: it seals and
// the sealed entry is valid against entry.v1.
func sealAndValidate(t testing.TB, b *Builder, r Record) {
	t.Helper()
	e := *r.Entry
	e.N, e.PrevHash = 1, digest.Zero
	sealed, err := chain.Seal(&e)
	if err != nil {
		t.Fatalf("seal: %v", err)
	}
	if err := b.Schemas.Validate(schemas.EntryV1, sealed); err != nil {
		t.Fatalf("record is not a valid entry: %v\n%s", err, sealed)
	}
}

func TestBuild(t *testing.T) {
	b := builder(t)
	good := `{"session_id":"s1","hook_event_name":"Stop","last_assistant_message":"All tests pass."}`
	tests := []struct {
		name      string
		subject   string
		data      []byte
		outcome   string
		chain     string
		reasonHas string
		wantEvent string
	}{
		{"event", intakeSubject("s1"), event(t, good), schemas.EntryEvent, "s1", "", eid},
		{"not json", intakeSubject("s1"), []byte(`{{`), schemas.EntryRejected, schemas.RejectedChain, "not a valid event.v1", ""},
		{"unknown envelope member", intakeSubject("s1"), bytes.Replace(event(t, good), []byte(`"v":1,`), []byte(`"v":1,"extra":true,`), 1), schemas.EntryInvalid, "s1", "unknown", eid},
		{"wrong subject", intakeSubject("s2"), event(t, good), schemas.EntryRejected, schemas.RejectedChain, `names chain "s2"`, eid},
		{"bad subject", "cc.intake.s1", event(t, good), schemas.EntryRejected, schemas.RejectedChain, "unexpected intake subject", ""},
		{"digest mismatch", intakeSubject("s1"), bytes.Replace(event(t, good), []byte(`pass.`), []byte(`fail.`), 1), schemas.EntryInvalid, "s1", "does not match its envelope", eid},
		{"payload names other session", intakeSubject("s1"), mustEnv(t, "s1", "Stop", `{"session_id":"s9","hook_event_name":"Stop"}`), schemas.EntryInvalid, "s1", `payload names session "s9"`, eid},
		{"payload duplicate keys", intakeSubject("s1"), mustEnv(t, "s1", "Stop", `{"session_id":"s1","session_id":"s1","hook_event_name":"Stop"}`), schemas.EntryInvalid, "s1", "duplicate", eid},
		{"bad event id", intakeSubject("s1"), bytes.Replace(event(t, good), []byte(eid), []byte("not-a-ulid"), 1), schemas.EntryRejected, schemas.RejectedChain, "event_id", ""},
		{"hostile session", intakeSubject("s1"), mustEnv(t, "../x", "Stop", `{"session_id":"../x","hook_event_name":"Stop"}`), schemas.EntryRejected, schemas.RejectedChain, "", eid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.Build(Input{Subject: tt.subject, Seq: 9, Time: at, Data: tt.data, Now: at})
			if r.Outcome != tt.outcome || r.Entry.Kind != tt.outcome || r.Entry.Chain != tt.chain {
				t.Fatalf("outcome %s/%s chain %s, want %s chain %s (reason %q)", r.Outcome, r.Entry.Kind, r.Entry.Chain, tt.outcome, tt.chain, r.Entry.Reason)
			}
			if !strings.Contains(r.Entry.Reason, tt.reasonHas) {
				t.Errorf("reason %q does not contain %q", r.Entry.Reason, tt.reasonHas)
			}
			if tt.wantEvent != "" && r.Entry.EventID != tt.wantEvent {
				t.Errorf("event id %s, want %s", r.Entry.EventID, tt.wantEvent)
			}
			if r.Entry.EventID == "" {
				t.Error("record without an event id (it could be chained twice)")
			}
			sealAndValidate(t, b, r)
			again := b.Build(Input{Subject: tt.subject, Seq: 9, Time: at, Data: tt.data, Now: at})
			if again.Entry.EventID != r.Entry.EventID {
				t.Error("event id differs between deliveries of the same message")
			}
		})
	}
}

func mustEnv(t testing.TB, sess, ev, raw string) []byte {
	t.Helper()
	b, err := envelope.Event(eid, sess, ev, 1, at, src, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestElide(t *testing.T) {
	long := strings.Repeat("é", 50000)
	raw, _ := json.Marshal(map[string]any{"a": long, "b": []int{1, 2, 3}, "c": "short"})
	out := Elide(raw, 12000)
	if len(out) > 12000 || !jsontext.Value(out).IsValid() {
		t.Fatalf("Elide: %d bytes, valid=%v", len(out), jsontext.Value(out).IsValid())
	}
	if !bytes.Contains(out, []byte(`"c":"short"`)) || !bytes.Contains(out, []byte("elided")) {
		t.Fatalf("Elide lost structure: %.200s", out)
	}
	if got := Elide(bytes.Repeat([]byte("[1,"), 1), 10); string(got) != "{}" {
		// invalid input falls back to the empty object
		t.Fatalf("Elide(invalid) = %s", got)
	}
}

// envelopes the fast path must accept (what claimcheck-hook produces).
func hookEnvelopes(t testing.TB) [][]byte {
	rej, err := envelope.Rejected(eid, "../../x", "Stop", 3, at, src, digest.SHA256([]byte(`{"session_id":"../../x"}`)), 24, []byte(`{"session_id":"../../x"}`), "invalid session id")
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{
		event(t, `{"session_id":"s1","hook_event_name":"Stop"}`),
		event(t, `{"session_id":"00893aaf-19fa-41d2-8238-13269b9b3ca0","hook_event_name":"PostToolUse","tool_name":"Bash"}`),
		rej,
	}
}

// TestFastPathAgreesWithSchema: the fast path never accepts what the schema
// refuses, and accepts every envelope the hook makes.
func TestFastPathAgreesWithSchema(t *testing.T) {
	b := builder(t)
	for _, env := range hookEnvelopes(t) {
		if ok, schemaErr := compare(t, b, env); !ok || schemaErr != nil {
			t.Fatalf("hook envelope: fast=%v schema=%v\n%s", ok, schemaErr, env)
		}
	}
	base := string(event(t, `{"session_id":"s1","hook_event_name":"Stop"}`))
	mutations := []struct{ from, to string }{
		{`"v":1`, `"v":2`}, {`"kind":"event"`, `"kind":"other"`}, {`"kind":"event"`, `"kind":"rejected"`},
		{eid, "01JDB3H5KX000000000000000"}, {eid, "81JDB3H5KX0000000000000000"}, {eid, "01JDB3H5KX000000000000000U"},
		{`"session_id":"s1"`, `"session_id":"s.1"`}, {`"session_id":"s1"`, `"session_id":""`},
		{`"hook_event":"Stop"`, `"hook_event":""`}, {`"host":"laptop"`, `"host":""`},
		{`"agent_type":"claude-code"`, `"agent_type":"Claude"`}, {`"agent_id":"dev@laptop"`, `"agent_id":""`},
		{`"received_at":"2026-11-22T03:04:05.123Z"`, `"received_at":"2026-11-22 03:04:05Z"`},
		{`"received_at":"2026-11-22T03:04:05.123Z"`, `"received_at":"2026-11-22T03:04:05,123Z"`},
		{`"received_at":"2026-11-22T03:04:05.123Z"`, `"received_at":"2026-13-22T03:04:05Z"`},
		{`"received_at":"2026-11-22T03:04:05.123Z"`, `"received_at":"2026-11-22T03:04:05+01:00"`},
		{`"payload_digest":"sha256:`, `"payload_digest":"sha512:`}, {`"payload_size":`, `"payload_size":-`},
	}
	for _, m := range mutations {
		env := []byte(strings.Replace(base, m.from, m.to, 1))
		_, _ = compare(t, b, env) // compare fails the test on disagreement
	}
}

// compare decodes env and checks fast ⇒ schema. It returns both results.
func compare(t testing.TB, b *Builder, raw []byte) (bool, error) {
	t.Helper()
	var env schemas.Envelope
	if err := json.Unmarshal(raw, &env, json.RejectUnknownMembers(true)); err != nil {
		return false, err
	}
	var info payload.Info
	var perr error
	if len(env.Payload) > 0 {
		info, perr = payload.Inspect(env.Payload, 64)
	}
	fast := checkEnvelope(&env, perr == nil)
	schemaErr := b.schemaCheck(&env, info, perr == nil)
	if fast && schemaErr != nil {
		t.Fatalf("fast path accepted an envelope the schema refuses (%v):\n%s", schemaErr, raw)
	}
	return fast, schemaErr
}

func FuzzFastPathAgreesWithSchema(f *testing.F) {
	for _, e := range hookEnvelopes(f) {
		f.Add(e)
	}
	b := builder(f)
	f.Fuzz(func(t *testing.T, raw []byte) { _, _ = compare(t, b, raw) })
}

// FuzzBuild: Build never panics, and every record it returns seals into a
// valid entry.
func FuzzBuild(f *testing.F) {
	for _, e := range hookEnvelopes(f) {
		f.Add("s1", e)
	}
	f.Add("s1", []byte(`{"v":1}`))
	f.Add("_rejected", []byte("\xff"))
	b := builder(f)
	f.Fuzz(func(t *testing.T, chainTok string, data []byte) {
		r := b.Build(Input{Subject: "cc.intake.0." + chainTok + ".Stop", Seq: 1, Time: at, Data: data, Now: at})
		sealAndValidate(t, b, r)
	})
}

// FuzzBuildFromAnyPublisher: whatever subject an input arrives on, Build
// never panics and every record seals into a valid entry.
func FuzzBuildFromAnyPublisher(f *testing.F) {
	for _, e := range hookEnvelopes(f) {
		f.Add("cc.intake.0.hook.laptop.s1.Stop", e)
		f.Add("cc.intake.0.gatekeeper.gk.s1.GateDecision", e)
		f.Add("cc.intake.0.evil.x.s1.Stop", e)
	}
	b := builder(f)
	f.Fuzz(func(t *testing.T, subj string, data []byte) {
		r := b.Build(Input{Subject: subj, Seq: 1, Time: at, Data: data, Now: at})
		sealAndValidate(t, b, r)
	})
}

// A SessionStart's hook configuration reaches its entry as sent, beside
// the untouched payload; a hook_config on another event, or a malformed
// one, makes the record invalid.
func TestHookConfigReachesTheEntry(t *testing.T) {
	b := builder(t)
	raw := `{"session_id":"s1","hook_event_name":"SessionStart","source":"startup","cwd":"/p"}`
	cfg := &schemas.HookConfig{V: 1, Verdict: schemas.HooksNone, Missing: []string{"Stop"}, Reasons: []string{"disableAllHooks in /p/.claude/settings.local.json"},
		Layers: []schemas.HookLayer{{Layer: schemas.LayerLocal, Path: "/p/.claude/settings.local.json", Present: true, Parsed: true,
			DisableAllHooks: true, Digest: digest.SHA256([]byte(`{"disableAllHooks":true}`)), Size: 24}}}
	env, err := envelope.SessionStart(eid, "s1", 1, at, src, []byte(raw), cfg)
	if err != nil {
		t.Fatal(err)
	}
	subj := "cc.intake.1.hook.laptop.s1.SessionStart"
	r := b.Build(Input{Subject: subj, Seq: 1, Time: at, Data: env, Now: at})
	if r.Outcome != schemas.EntryEvent || r.Entry.HookConfig == nil || r.Entry.HookConfig.Verdict != schemas.HooksNone ||
		!r.Entry.HookConfig.Layers[0].DisableAllHooks || *r.Entry.Payload != raw {
		t.Fatalf("entry %+v (reason %q)", r.Entry, r.Entry.Reason)
	}
	sealAndValidate(t, b, r)

	bad := []struct{ name, from, to, reason string }{
		{"not on a Stop", `"hook_event":"SessionStart"`, `"hook_event":"Stop"`, ""},
		{"unknown verdict", `"verdict":"none"`, `"verdict":"fine"`, "/hook_config/verdict"},
		{"command line in the clear", `"layer":"local"`, `"layer":"local","command":"claimcheck-hook --x"`, "not a valid event.v1"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			data := bytes.Replace(env, []byte(tt.from), []byte(tt.to), 1)
			if bytes.Equal(data, env) {
				t.Fatal("mutation did not apply")
			}
			r := b.Build(Input{Subject: subj, Seq: 2, Time: at, Data: data, Now: at})
			if r.Outcome == schemas.EntryEvent || r.Entry.HookConfig != nil || !strings.Contains(r.Entry.Reason, tt.reason) {
				t.Fatalf("outcome %s, reason %q", r.Outcome, r.Entry.Reason)
			}
			sealAndValidate(t, b, r)
		})
	}
}
