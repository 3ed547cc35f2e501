package verifier_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/clientcontract"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/contract"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	payloadpkg "github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/verifier"
)

// flow is a JetStream server with the streams, a first signing key and
// verifier services running in-process. Sessions are written the way
// ingest writes them (same entry kinds, same chain), so the verifier sees
// exactly what it sees in production.
type flow struct {
	t        testing.TB
	url      string
	nc       *nats.Conn
	js       jetstream.JetStream
	keyDir   string
	registry *keyring.Registry
	app      *ledger.Appender
	gen      *id.Generator
	// metrics, when set, receives the next verifier's metrics.
	metrics *prometheus.Registry
	calls   int // tool calls made, for their tool_use_ids
}

func newFlow(t testing.TB) *flow {
	t.Helper()
	srv := natstest.RunServer(t)
	nc, js := natstest.Connect(t, srv.ClientURL())
	natstest.Bootstrap(t, js, nil)
	f := &flow{t: t, url: srv.ClientURL(), nc: nc, js: js, keyDir: filepath.Join(t.TempDir(), "keys"), gen: id.NewGenerator(clock.Real{}, nil)}
	var err error
	if f.registry, err = keyring.OpenRegistry(t.Context(), js); err != nil {
		t.Fatal(err)
	}
	if _, _, err := keyring.EnsureFirst(t.Context(), f.registry, keyring.Dir{Path: f.keyDir}, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	f.app = ledger.NewAppender(js, ledger.AppenderConfig{})
	return f
}

// verifier starts one verifier on its own connection; stop ends it.
func (f *flow) verifier(mutate func(*verifier.Config)) (stop func()) {
	f.t.Helper()
	nc, _ := natstest.Connect(f.t, f.url)
	cfg := verifier.DefaultConfig()
	cfg.KeyDir = f.keyDir
	if mutate != nil {
		mutate(&cfg)
	}
	set := service.Settings{Conn: nc}
	if f.metrics != nil {
		set.Metrics = f.metrics
	}
	svc, err := verifier.New(cfg, set)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	natstest.Eventually(f.t, 10*time.Second, svc.Ready)
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			f.t.Errorf("verifier Run: %v", err)
		}
	}
	f.t.Cleanup(stop)
	return stop
}

func (f *flow) entry(session, kind, hookEvent, tool, payload string) *schemas.Entry {
	eid, _ := f.gen.New()
	e := &schemas.Entry{V: 1, Kind: kind, Chain: session, SessionID: session, EventID: eid, HookEvent: hookEvent, ToolName: tool,
		IngestedAt: time.Now().UTC().Format(time.RFC3339Nano), Bundle: "test", Host: "laptop", Origin: "hook:laptop"}
	if payload != "" {
		if kind == schemas.EntryEvent {
			clientcontract.Fields(f.t, []byte(payload)) // shaped as the real client sends it
		}
		e.Payload = &payload
	}
	return e
}

func (f *flow) append(session string, entries ...*schemas.Entry) {
	f.t.Helper()
	if _, err := f.app.Append(f.t.Context(), session, entries); err != nil {
		f.t.Fatal(err)
	}
}

func (f *flow) prompt(session, text string) {
	p := f.entry(session, schemas.EntryEvent, "UserPromptSubmit", "", fmt.Sprintf(`{"session_id":%q,"hook_event_name":"UserPromptSubmit","prompt":%q}`, session, text))
	entries := []*schemas.Entry{p}
	if c, ok := contract.Derive(contract.Prompt{SessionID: session, EventID: p.EventID, Text: text}); ok {
		ce := f.entry(session, schemas.EntryContract, "UserPromptSubmit", "", "")
		ce.Contract = &c
		entries = append(entries, ce)
	}
	f.append(session, entries...)
}

// bash records a Bash tool call as ingest chains Claude Code's hooks: its
// PreToolUse, then its PostToolUse with the same tool_use_id and input.
func (f *flow) bash(session, cmd, stdout string) {
	f.calls++
	useID := fmt.Sprintf("toolu_%04d", f.calls)
	pre := f.tool(session, "PreToolUse", fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":%q}`, session, cmd, useID))
	f.append(session, pre, f.result(session, cmd, stdout, useID))
}

// result is the PostToolUse of a Bash call alone.
func (f *flow) result(session, cmd, stdout, useID string) *schemas.Entry {
	return f.tool(session, "PostToolUse", fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":%q},"tool_response":{"stdout":%q,"stderr":"","interrupted":false},"tool_use_id":%q}`, session, cmd, stdout, useID))
}

func (f *flow) tool(session, event, payload string) *schemas.Entry {
	e := f.entry(session, schemas.EntryEvent, event, "Bash", payload)
	var p struct {
		ToolUseID string `json:"tool_use_id"`
	}
	_ = json.Unmarshal([]byte(payload), &p, json.RejectUnknownMembers(false))
	e.ToolUseID, e.ToolInput = p.ToolUseID, payloadpkg.ToolInputDigest([]byte(payload))
	return e
}

// request chains a claim and queues it for the verifiers, as ingest does;
// it returns the claim's request id and the inbox the answer comes to.
func (f *flow) request(session, claimType, validator, args string) (string, *nats.Subscription) {
	f.t.Helper()
	reqID, _ := f.gen.New()
	inbox := nats.NewInbox()
	sub, err := f.nc.SubscribeSync(inbox)
	if err != nil {
		f.t.Fatal(err)
	}
	e := f.entry(session, schemas.EntryClaim, schemas.ClaimRequestEvent, "", "")
	e.Claim = &schemas.Claim{RequestID: reqID, Claim: claimType, Validator: validator, Args: []byte(args), ReplyTo: inbox}
	f.append(session, e)
	f.queue(session, e.EventID, reqID, e.EventID, inbox)
	return reqID, sub
}

func (f *flow) queue(session, claimEventID, reqID, msgID, replyTo string) {
	f.t.Helper()
	b, _ := json.Marshal(schemas.ClaimWork{V: 1, SessionID: session, ClaimEventID: claimEventID, RequestID: reqID, ReplyTo: replyTo})
	m := nats.NewMsg(subject.Claims(session))
	m.Data = b
	m.Header.Set(jetstream.MsgIDHeader, msgID)
	if _, err := f.js.PublishMsg(f.t.Context(), m); err != nil {
		f.t.Fatal(err)
	}
}

func (f *flow) answer(sub *nats.Subscription) schemas.Verdict {
	f.t.Helper()
	m, err := sub.NextMsg(15 * time.Second)
	if err != nil {
		f.t.Fatalf("no verdict: %v", err)
	}
	var v schemas.Verdict
	if err := json.Unmarshal(m.Data, &v); err != nil {
		f.t.Fatalf("verdict %s: %v", m.Data, err)
	}
	return v
}

// chain reads and verifies a session's chain.
func (f *flow) chain(session string) []schemas.Entry {
	f.t.Helper()
	r := ledger.NewReader(f.js, stream.Ledger)
	var out []schemas.Entry
	v := chain.NewVerifier(session)
	if err := r.Walk(f.t.Context(), session, 0, func(s ledger.Stored) error {
		if err := v.Next(s.Raw); err != nil {
			return err
		}
		var e schemas.Entry
		if err := json.Unmarshal(s.Raw, &e); err != nil {
			return err
		}
		out = append(out, e)
		return nil
	}); err != nil {
		f.t.Fatalf("chain %s: %v", session, err)
	}
	return out
}

func (f *flow) attestations(session string) [][]byte {
	f.t.Helper()
	st, err := f.js.Stream(f.t.Context(), stream.Attest)
	if err != nil {
		f.t.Fatal(err)
	}
	info, _ := st.Info(f.t.Context())
	var out [][]byte
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(f.t.Context(), seq)
		if err != nil {
			continue
		}
		if strings.HasPrefix(m.Subject, "cc.attest."+session+".") {
			out = append(out, m.Data)
		}
	}
	return out
}

func (f *flow) keySet() *keyring.Set {
	f.t.Helper()
	set, err := f.registry.Set(f.t.Context())
	if err != nil {
		f.t.Fatal(err)
	}
	return set
}

const goTestOut = "ok  \tgithub.com/acme/app/store\t0.412s\nok  \tgithub.com/acme/app/api\t0.120s\n"

func TestVerdictsAreRecordedAndPassesAttested(t *testing.T) {
	f := newFlow(t)
	f.verifier(nil)
	const s = "sess-flow"
	f.prompt(s, "Fix the flaky store tests and run `go test ./...` until they pass")
	f.bash(s, "go test ./...", goTestOut)

	reqID, sub := f.request(s, "done", "test_pass", `{"command_substring":"go test ./..."}`)
	v := f.answer(sub)
	if v.Verdict != schemas.Pass || v.RequestID != reqID || v.AttestationID == "" || v.Range.To != 4 {
		t.Fatalf("verdict %+v", v)
	}
	// prompt n=1, contract n=2, the test run's PreToolUse n=3 and
	// PostToolUse n=4, the claim n=5: the verdict covers 1..4.
	if len(v.Matched) != 1 || v.Matched[0].N != 4 {
		t.Fatalf("matched %+v, want the go test run at n=4", v.Matched)
	}
	_, failSub := f.request(s, "done", "command_zero_exit", `{"command_substring":"make deploy"}`)
	if fv := f.answer(failSub); fv.Verdict != schemas.Refused {
		t.Fatalf("unbound command: %+v", fv)
	}
	_, refSub := f.request(s, "done", "fetch_attempt_proof", `{"keyword":"store"}`)
	if rv := f.answer(refSub); rv.Verdict != schemas.Refused || !strings.Contains(strings.Join(rv.Reasons, " "), "may not back a done claim") {
		t.Fatalf("wrong validator for the claim: %+v", rv)
	}

	// Every verdict is in the chain, after its claim, and the chain verifies.
	entries := f.chain(s)
	var verdicts []string
	for i, e := range entries {
		if e.Kind == schemas.EntryVerdict {
			if entries[i-1].Kind != schemas.EntryClaim && entries[i-2].Kind != schemas.EntryClaim {
				t.Fatalf("verdict at n=%d is not next to a claim", e.N)
			}
			verdicts = append(verdicts, e.Verdict.Verdict)
		}
	}
	if strings.Join(verdicts, ",") != "PASS,REFUSED,REFUSED" {
		t.Fatalf("recorded verdicts %v", verdicts)
	}

	// One attestation, for the PASS, verifying under the registry's keys.
	atts := f.attestations(s)
	if len(atts) != 1 {
		t.Fatalf("%d attestations, want 1", len(atts))
	}
	c, err := attest.Verify(f.keySet(), atts[0], time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	st := c.Statement
	if st.Predicate.AttestationID != v.AttestationID || st.Subject[0].Name != attest.SubjectName(s, 1, 4) || "sha256:"+st.Subject[0].Digest["sha256"] != entries[3].Hash {
		t.Fatalf("statement %+v does not match the ledger", st)
	}
	if st.Predicate.VerdictEntry == nil || st.Predicate.VerdictEntry.Hash != entries[5].Hash {
		t.Fatalf("statement names verdict entry %+v, ledger has %s", st.Predicate.VerdictEntry, entries[5].Hash)
	}
	if !strings.HasPrefix(st.Predicate.Verdict.Policy.Digest, "sha256:") || st.Predicate.Verdict.Verifier == "" {
		t.Fatalf("policy digest / verifier id missing: %+v", st.Predicate.Verdict)
	}
}

// Answered requests leave CLAIMS (a limits-retention queue, purged behind
// the shared consumer's ack floor); an unanswered one stays.
func TestAnsweredRequestsArePurgedFromClaims(t *testing.T) {
	f := newFlow(t)
	stop := f.verifier(func(c *verifier.Config) { c.PurgeInterval = 20 * time.Millisecond })
	const s = "sess-purge"
	f.prompt(s, "Fix the flaky store tests and run `go test ./...` until they pass")
	f.bash(s, "go test ./...", goTestOut)
	for range 3 {
		_, sub := f.request(s, "done", "test_pass", `{"command_substring":"go test ./..."}`)
		if v := f.answer(sub); v.Verdict != schemas.Pass {
			t.Fatalf("verdict %+v", v)
		}
	}
	claims, err := f.js.Stream(t.Context(), stream.Claims)
	if err != nil {
		t.Fatal(err)
	}
	msgs := func() uint64 {
		info, err := claims.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	natstest.Eventually(t, 5*time.Second, func() error {
		if n := msgs(); n != 0 {
			return fmt.Errorf("%d answered requests still in CLAIMS", n)
		}
		return nil
	})
	// With no verifier running, a queued request is neither answered nor
	// purged.
	stop()
	f.request(s, "done", "test_pass", `{"command_substring":"go test ./..."}`)
	time.Sleep(100 * time.Millisecond)
	if n := msgs(); n != 1 {
		t.Fatalf("%d requests in CLAIMS, want the unanswered one", n)
	}
}

func TestRedeliveredRequestIsAnsweredWithTheRecordedVerdict(t *testing.T) {
	f := newFlow(t)
	f.verifier(nil)
	const s = "sess-redeliver"
	f.prompt(s, "Fix the build and run `go test ./...`")
	f.bash(s, "go test ./...", goTestOut)
	reqID, sub := f.request(s, "done", "test_pass", `{"command_substring":"go test ./..."}`)
	first := f.answer(sub)
	// The same work item again (as after a verifier died before acking).
	claimEntry := f.chain(s)[4]
	if claimEntry.Kind != schemas.EntryClaim {
		t.Fatalf("entry 5 is %s", claimEntry.Kind)
	}
	f.queue(s, claimEntry.EventID, reqID, "again-"+claimEntry.EventID, "")
	second := f.answer(sub)
	if first.AttestationID != second.AttestationID || first.Verdict != second.Verdict || first.Verifier != second.Verifier {
		t.Fatalf("a redelivery answered differently:\n%+v\n%+v", first, second)
	}
	n := 0
	for _, e := range f.chain(s) {
		if e.Kind == schemas.EntryVerdict {
			n++
		}
	}
	if n != 1 || len(f.attestations(s)) != 1 {
		t.Fatalf("%d verdicts and %d attestations recorded, want 1 and 1", n, len(f.attestations(s)))
	}
}

func TestRotationWhileRunningKeepsEarlierAttestationsValid(t *testing.T) {
	f := newFlow(t)
	f.verifier(nil)
	const s = "sess-rotate"
	f.prompt(s, "Fix the build and run `go test ./...`")
	f.bash(s, "go test ./...", goTestOut)
	_, sub := f.request(s, "done", "test_pass", `{"command_substring":"go test ./..."}`)
	if v := f.answer(sub); v.Verdict != schemas.Pass {
		t.Fatalf("%+v", v)
	}
	if _, err := keyring.Rotate(t.Context(), f.registry, keyring.Dir{Path: f.keyDir}, keyring.NewKey{Algorithm: keyring.Ed25519}, time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The verifier picks the new key up from the registry watch: during the
	// overlap its envelopes carry both signatures.
	var att []byte
	natstest.Eventually(t, 10*time.Second, func() error {
		f.bash(s, "go test ./...", goTestOut)
		_, sub := f.request(s, "done", "test_pass", `{"command_substring":"go test ./..."}`)
		if v := f.answer(sub); v.Verdict != schemas.Pass {
			return fmt.Errorf("verdict %s", v.Verdict)
		}
		atts := f.attestations(s)
		att = atts[len(atts)-1]
		if !strings.Contains(string(att), `"keyid":"v2"`) {
			return fmt.Errorf("not yet signed by v2")
		}
		return nil
	})
	set := f.keySet()
	for i, a := range f.attestations(s) {
		c, err := attest.Verify(set, a, time.Time{})
		if err != nil {
			t.Fatalf("attestation %d no longer verifies after the rotation: %v", i, err)
		}
		if i == 0 && strings.Join(c.KeyIDs, ",") != "v1" {
			t.Fatalf("first attestation verified by %v", c.KeyIDs)
		}
	}
	if c, _ := attest.Verify(set, att, time.Time{}); strings.Join(c.KeyIDs, ",") != "v1,v2" {
		t.Fatalf("overlap attestation verified by %v, want v1,v2", c.KeyIDs)
	}
}

func TestMalformedWorkIsDroppedWithoutRecording(t *testing.T) {
	f := newFlow(t)
	f.verifier(nil)
	const s = "sess-bad"
	f.prompt(s, "Fix the build and run `go test ./...`")
	before := len(f.chain(s))
	// Not JSON; and a work item naming an entry that is not a claim.
	m := nats.NewMsg(subject.Claims(s))
	m.Data = []byte("{not json")
	if _, err := f.js.PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	f.queue(s, f.chain(s)[0].EventID, f.chain(s)[0].EventID, "x1", "")
	// A good request after them is still answered.
	f.bash(s, "go test ./...", goTestOut)
	_, sub := f.request(s, "done", "test_pass", `{"command_substring":"go test ./..."}`)
	if v := f.answer(sub); v.Verdict != schemas.Pass {
		t.Fatalf("%+v", v)
	}
	var kinds []string
	for _, e := range f.chain(s)[before:] {
		kinds = append(kinds, e.Kind)
	}
	if strings.Join(kinds, ",") != "event,event,claim,verdict" {
		t.Fatalf("appended %v; the malformed work items must not be recorded", kinds)
	}
}

func TestPolicyVersionsAreWriteOnce(t *testing.T) {
	f := newFlow(t)
	f.verifier(nil)
	dir := t.TempDir()
	orig, err := schemas.Policies.ReadFile(schemas.DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	// Same version, different content: refused at start.
	var doc map[string]any
	if err := json.Unmarshal(orig, &doc); err != nil {
		t.Fatal(err)
	}
	doc["description"] = "edited in place"
	b, _ := json.Marshal(doc)
	path := filepath.Join(dir, "policy.json")
	writeFile(t, path, b)
	nc, _ := natstest.Connect(t, f.url)
	cfg := verifier.DefaultConfig()
	cfg.KeyDir, cfg.PolicyFile = f.keyDir, path
	set := service.Settings{Conn: nc}
	if f.metrics != nil {
		set.Metrics = f.metrics
	}
	svc, err := verifier.New(cfg, set)
	if err != nil {
		t.Fatal(err)
	}
	err = svc.Run(t.Context())
	_ = nc
	if err == nil || !strings.Contains(err.Error(), "needs a new version") {
		t.Fatalf("an in-place policy edit was accepted: %v", err)
	}
	// With a new version it runs.
	doc["version"] = "2026-11-22.edited"
	b, _ = json.Marshal(doc)
	writeFile(t, path, b)
	f.verifier(func(c *verifier.Config) { c.PolicyFile = path })
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestBrokenChainGetsAnErrorNotAVerdict(t *testing.T) {
	f := newFlow(t)
	f.verifier(nil)
	const s = "sess-broken"
	f.prompt(s, "Fix the build and run `go test ./...`")
	f.bash(s, "go test ./...", goTestOut)
	// A writer with publish rights on the ledger appends a forged entry
	// (it does not continue the chain).
	forged := `{"bundle":"evil","chain":"sess-broken","event_id":"01JDB3H5KX0000000000000099","hash":"sha256:` + strings.Repeat("0", 64) + `","hook_event":"PostToolUse","ingested_at":"2026-11-22T00:00:00Z","kind":"event","n":5,"prev_hash":"sha256:` + strings.Repeat("1", 64) + `","session_id":"sess-broken","v":1}`
	if _, err := f.js.Publish(t.Context(), subject.Ledger(s), []byte(forged)); err != nil {
		t.Fatal(err)
	}
	_, sub := f.request(s, "done", "test_pass", `{"command_substring":"go test ./..."}`)
	m, err := sub.NextMsg(15 * time.Second)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	var ce schemas.ClaimError
	if err := json.Unmarshal(m.Data, &ce); err != nil || !strings.Contains(ce.Error, "chain is broken") || !strings.Contains(ce.Error, "position 5") {
		t.Fatalf("answer %s (%v), want an error naming the broken position", m.Data, err)
	}
	for _, e := range f.rawKinds(s) {
		if e == schemas.EntryVerdict {
			t.Fatal("a verdict was recorded on a broken chain")
		}
	}
}

// rawKinds lists the kinds of a chain's entries without verifying it.
func (f *flow) rawKinds(session string) []string {
	var kinds []string
	_ = ledger.NewReader(f.js, stream.Ledger).Walk(f.t.Context(), session, 0, func(s ledger.Stored) error {
		var e struct {
			Kind string `json:"kind"`
		}
		_ = json.Unmarshal(s.Raw, &e, json.RejectUnknownMembers(false))
		kinds = append(kinds, e.Kind)
		return nil
	})
	return kinds
}

// TestResultsOutsideTheToolLoopAreRefused: a PostToolUse with no
// PreToolUse of its tool call (a payload piped into the hook by hand), with
// another input than its PreToolUse, or from another host than the
// session's never backs a claim: the verdict is REFUSED and names it.
func TestResultsOutsideTheToolLoopAreRefused(t *testing.T) {
	f := newFlow(t)
	f.verifier(nil)
	claim := func(s string) schemas.Verdict {
		t.Helper()
		_, sub := f.request(s, "done", "test_pass", `{"command_substring":"go test ./..."}`)
		return f.answer(sub)
	}
	refused := func(s, want string) {
		t.Helper()
		v := claim(s)
		if v.Verdict != schemas.Refused || !strings.Contains(strings.Join(v.Reasons, " "), want) {
			t.Fatalf("%s: %s %v, want REFUSED naming %q", s, v.Verdict, v.Reasons, want)
		}
	}
	f.prompt("sess-forged", "Fix the build and run `go test ./...`")
	f.append("sess-forged", f.result("sess-forged", "go test ./...", goTestOut, "toolu_never_issued"))
	refused("sess-forged", "the tool result at n=3 did not come from the agent's tool loop: no PreToolUse of tool_use_id toolu_never_issued was recorded before it")

	f.prompt("sess-swapped", "Fix the build and run `go test ./...`")
	pre := f.tool("sess-swapped", "PreToolUse", `{"session_id":"sess-swapped","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_x1"}`)
	f.append("sess-swapped", pre, f.result("sess-swapped", "go test ./...", goTestOut, "toolu_x1"))
	refused("sess-swapped", "its tool_input differs from that of the PreToolUse of tool_use_id toolu_x1")

	f.prompt("sess-foreign", "Fix the build and run `go test ./...`")
	f.calls++
	pre = f.tool("sess-foreign", "PreToolUse", `{"session_id":"sess-foreign","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":"toolu_f1"}`)
	post := f.result("sess-foreign", "go test ./...", goTestOut, "toolu_f1")
	post.Host, post.Origin = "desk", "hook:desk"
	f.append("sess-foreign", pre, post)
	refused("sess-foreign", "published by hook:desk, while the session's events come from hook:laptop")

	// The same session with a real tool call of its own passes.
	f.bash("sess-forged", "go test ./...", goTestOut)
	if v := claim("sess-forged"); v.Verdict != schemas.Pass {
		t.Fatalf("a paired run: %s %v", v.Verdict, v.Reasons)
	}
}
