package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/clientcontract"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/ingest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine"),
		goleak.IgnoreAnyFunction("github.com/nats-io/nats-server/v2/server.(*fileStore).syncBlocks"),
		goleak.IgnoreTopFunction("time.Sleep"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

var src = envelope.Source{Host: "laptop", AgentType: "claude-code", AgentID: "dev@laptop"}

type harness struct {
	t    *testing.T
	nc   *nats.Conn
	js   jetstream.JetStream
	gen  *id.Generator
	seq  uint64
	stop func()
}

func start(t *testing.T, mutate func(*ingest.Config)) *harness {
	t.Helper()
	return startAfter(t, mutate, nil)
}

// startAfter is start, with before run on the harness once the streams
// exist and before ingest starts (to queue events it then takes in bulk).
func startAfter(t *testing.T, mutate func(*ingest.Config), before func(*harness)) *harness {
	t.Helper()
	s := natstest.RunServer(t)
	nc, js := natstest.Connect(t, s.ClientURL())
	cfg := ingest.DefaultConfig()
	cfg.Streams.Partitions = 2
	if mutate != nil {
		mutate(&cfg)
	}
	natstest.Bootstrap(t, js, &cfg.Streams)
	h := &harness{t: t, nc: nc, js: js, gen: id.NewGenerator(clock.Real{}, nil)}
	if before != nil {
		before(h)
	}
	svc, err := ingest.New(cfg, service.Settings{Conn: nc})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	h.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ingest Run: %v", err)
		}
	}
	t.Cleanup(func() {
		if h.stop != nil {
			h.stop()
		}
	})
	natstest.Eventually(t, 10*time.Second, svc.Ready)
	return h
}

// publish sends one hook payload as claimcheck-hook would; it returns the event id.
func (h *harness) publish(payload string) string {
	h.t.Helper()
	var p struct {
		SessionID string `json:"session_id"`
		HookEvent string `json:"hook_event_name"`
	}
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		h.t.Fatal(err)
	}
	clientcontract.Fields(h.t, []byte(payload)) // shaped as the real client sends it
	eid, _ := h.gen.New()
	h.seq++
	env, err := envelope.Event(eid, p.SessionID, p.HookEvent, h.seq, time.Now(), src, []byte(payload))
	if err != nil {
		h.t.Fatal(err)
	}
	h.raw(subject.Intake(subject.OriginHook, "laptop", p.SessionID, id.EventToken(p.HookEvent)), eid, env)
	return eid
}

func (h *harness) raw(subject, msgID string, data []byte) {
	h.t.Helper()
	m := nats.NewMsg(subject)
	m.Data = data
	if msgID != "" {
		m.Header.Set(jetstream.MsgIDHeader, msgID)
	}
	if _, err := h.js.PublishMsg(h.t.Context(), m); err != nil {
		h.t.Fatalf("publish %s: %v", subject, err)
	}
}

// chainOf waits until chain c holds want entries and returns them decoded.
func (h *harness) chainOf(c string, want int) []schemas.Entry {
	h.t.Helper()
	var raws [][]byte
	natstest.Eventually(h.t, 15*time.Second, func() error {
		raws = nil
		err := ledger.NewReader(h.js, "").Walk(h.t.Context(), c, 0, func(s ledger.Stored) error {
			raws = append(raws, s.Raw)
			return nil
		})
		if err != nil {
			return err
		}
		if len(raws) < want {
			return fmt.Errorf("chain %s has %d entries, want %d", c, len(raws), want)
		}
		return nil
	})
	if len(raws) != want {
		h.t.Fatalf("chain %s has %d entries, want exactly %d", c, len(raws), want)
	}
	if err := chain.Verify(c, raws); err != nil {
		h.t.Fatalf("verify %s: %v", c, err)
	}
	out := make([]schemas.Entry, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			h.t.Fatal(err)
		}
	}
	return out
}

func TestIngestChainsSessionsInOrder(t *testing.T) {
	h := start(t, nil)
	var want = map[string][]string{}
	for i := range 30 {
		sess := fmt.Sprintf("sess-%d", i%3)
		eid := h.publish(fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_%d","tool_input":{"command":"echo %d"},"tool_response":{"stdout":"%d\n"}}`, sess, i, i, i))
		want[sess] = append(want[sess], eid)
	}
	for sess, ids := range want {
		entries := h.chainOf(sess, len(ids))
		for i, e := range entries {
			if e.EventID != ids[i] {
				t.Fatalf("%s position %d holds %s, want %s (order)", sess, i+1, e.EventID, ids[i])
			}
			if e.Kind != schemas.EntryEvent || e.ToolName != "Bash" || e.Host != "laptop" || e.AgentType != "claude-code" || e.ClientSeq == 0 || e.IntakeSeq == 0 {
				t.Fatalf("entry fields: %+v", e)
			}
		}
	}
}

func TestIngestScrubsSecretsAndKeepsDigest(t *testing.T) {
	h := start(t, nil)
	const aws, gh = "AKIAQYLPMN5HHHFPZAM2", "ghp_x1V9rK3sQ7bT2mN8pL4wZ6cY0dF5gH1jK9aB"
	raw := `{"session_id":"sec","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cat .env"},"tool_response":{"stdout":"AWS_ACCESS_KEY_ID=` + aws + `\nGITHUB_TOKEN=` + gh + `\n"}}`
	h.publish(raw)
	e := h.chainOf("sec", 1)[0]
	stored, _ := json.Marshal(e)
	for _, s := range []string{aws, gh} {
		if bytes.Contains(stored, []byte(s)) {
			t.Fatalf("secret %s stored in the ledger", s)
		}
	}
	if e.PayloadDigest != digestOf(raw) {
		t.Fatalf("payload_digest %s, want digest of the raw payload %s", e.PayloadDigest, digestOf(raw))
	}
	if len(e.Redactions) != 2 {
		t.Fatalf("redactions %+v", e.Redactions)
	}
	if !strings.Contains(*e.Payload, "[REDACTED:aws-access-token]") {
		t.Fatalf("payload %s", *e.Payload)
	}
}

func digestOf(s string) string {
	env, _ := envelope.Event("01JD0000000000000000000000", "x", "y", 1, time.Now(), src, []byte(s))
	var e schemas.Envelope
	_ = json.Unmarshal(env, &e)
	return e.PayloadDigest
}

func TestIngestStoresLargeOutputsAsArtifacts(t *testing.T) {
	h := start(t, func(c *ingest.Config) { c.InlineMaxBytes = 4096 })
	// Secrets beside escapes too: a key on a line of its own (after \n in
	// the JSON text), one in quotes (\" in the JSON text).
	const gh, aws, stripe = "ghp_x1V9rK3sQ7bT2mN8pL4wZ6cY0dF5gH1jK9aB", "AKIAQYLPMN5HHHFPZAM2", "sk_live_x1V9rK3sQ7bT2mN8pL4wZ6cY0"
	big := strings.Repeat("line of build output\n", 3000) + "token " + gh + "\n" + aws + "\nSTRIPE=\"" + stripe + "\"\nPASS\n"
	quoted, _ := json.Marshal(big)
	h.publish(`{"session_id":"big","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":` + string(quoted) + `}}`)
	e := h.chainOf("big", 1)[0]
	if !e.PayloadElided || e.Artifact == nil || len(*e.Payload) > 4096 {
		t.Fatalf("payload not elided: elided=%v artifact=%v inline=%d", e.PayloadElided, e.Artifact, len(*e.Payload))
	}
	obj, err := h.js.ObjectStore(t.Context(), stream.ObjectArtifacts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := obj.Get(t.Context(), e.Artifact.Object)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(r)
	if len(data) != e.Artifact.Size || !strings.Contains(string(data), "PASS") {
		t.Fatalf("artifact %d bytes, want %d", len(data), e.Artifact.Size)
	}
	for _, secret := range []string{gh, aws, stripe} {
		if strings.Contains(string(data), secret) || strings.Contains(*e.Payload, secret) {
			t.Fatalf("secret %.12s… stored in the artifact or the entry", secret)
		}
	}
	if len(e.Redactions) != 3 {
		t.Fatalf("redactions %+v, want 3", e.Redactions)
	}
	if !strings.HasSuffix(*e.Payload, `PASS\n"}}`) {
		t.Fatalf("inline payload lost its tail: …%s", (*e.Payload)[len(*e.Payload)-40:])
	}
}

func TestIngestDedupesByEventID(t *testing.T) {
	h := start(t, nil)
	raw := `{"session_id":"dup","hook_event_name":"Stop","last_assistant_message":"done"}`
	eid, _ := h.gen.New()
	env, _ := envelope.Event(eid, "dup", "Stop", 1, time.Now(), src, []byte(raw))
	// The same event three times under different message ids (as a spool
	// flush after the dedupe window would send it).
	for i := range 3 {
		h.raw(subject.Intake(subject.OriginHook, "laptop", "dup", "Stop"), fmt.Sprintf("m%d", i), env)
	}
	h.publish(`{"session_id":"dup","hook_event_name":"SessionEnd","reason":"other"}`)
	entries := h.chainOf("dup", 2)
	if entries[0].EventID != eid || entries[1].HookEvent != "SessionEnd" {
		t.Fatalf("entries %+v", entries)
	}
}

func TestIngestRecordsBadInputWithoutBlockingOthers(t *testing.T) {
	h := start(t, nil)
	good := `{"session_id":"ok","hook_event_name":"Stop"}`
	// Malformed envelope on a session subject.
	h.raw(subject.Intake(subject.OriginHook, "laptop", "ok", "Stop"), "", []byte(`{not json`))
	// Envelope whose payload does not match its digest (tampered in flight).
	eid, _ := h.gen.New()
	env, _ := envelope.Event(eid, "ok", "Stop", 1, time.Now(), src, []byte(good))
	tampered := bytes.Replace(env, []byte(`"hook_event_name":"Stop"}`), []byte(`"hook_event_name":"Stop","x":1}`), 1)
	h.raw(subject.Intake(subject.OriginHook, "laptop", "ok", "Stop"), eid, tampered)
	// Envelope for another session published on this session's subject.
	eid2, _ := h.gen.New()
	foreign, _ := envelope.Event(eid2, "other", "Stop", 1, time.Now(), src, []byte(`{"session_id":"other","hook_event_name":"Stop"}`))
	h.raw(subject.Intake(subject.OriginHook, "laptop", "ok", "Stop"), eid2, foreign)
	// Duplicate keys inside the payload.
	eid3, _ := h.gen.New()
	dupKeys := []byte(`{"session_id":"ok","hook_event_name":"Stop","x":1,"x":2}`)
	dupEnv, _ := envelope.Event(eid3, "ok", "Stop", 2, time.Now(), src, dupKeys)
	h.raw(subject.Intake(subject.OriginHook, "laptop", "ok", "Stop"), eid3, dupEnv)
	// A hostile session id reported by the hook as rejected.
	eid4, _ := h.gen.New()
	rej, _ := envelope.Rejected(eid4, "../../etc/passwd", "Stop", 3, time.Now(), src, digestOf(`{"session_id":"../../etc/passwd"}`), 34, []byte(`{"session_id":"../../etc/passwd"}`), "invalid session id")
	h.raw(subject.Intake(subject.OriginHook, "laptop", schemas.RejectedChain, "Stop"), eid4, rej)
	// And a good event after all that.
	h.publish(good)

	okEntries := h.chainOf("ok", 3)
	if okEntries[0].Kind != schemas.EntryInvalid || !strings.Contains(okEntries[0].Reason, "does not match its envelope") {
		t.Errorf("tampered payload: %+v", okEntries[0])
	}
	if okEntries[1].Kind != schemas.EntryInvalid || !strings.Contains(okEntries[1].Reason, "duplicate") {
		t.Errorf("duplicate keys: %+v", okEntries[1])
	}
	if okEntries[2].Kind != schemas.EntryEvent {
		t.Errorf("good event after bad ones: %+v", okEntries[2])
	}
	rejected := h.chainOf(schemas.RejectedChain, 3)
	reasons := ""
	for _, e := range rejected {
		reasons += e.Reason + "\n"
	}
	for _, want := range []string{"not a valid event.v1", "names session \"other\"", "invalid session id"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("rejected chain lacks %q:\n%s", want, reasons)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	c := ingest.DefaultConfig()
	c.PinnedTTL = c.AckWait
	c.BatchSize = 0
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "pinned_ttl") || !strings.Contains(err.Error(), "batch_size") {
		t.Fatalf("Validate() = %v", err)
	}
	for _, n := range []int{1, -1, 1001} {
		c := ingest.DefaultConfig()
		c.AtomicBatch = n
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "ingest.atomic_batch") {
			t.Errorf("atomic_batch %d: Validate() = %v, want it named", n, err)
		}
	}
	for _, n := range []int{0, 2, 1000} {
		c := ingest.DefaultConfig()
		c.AtomicBatch = n
		if err := c.Validate(); err != nil {
			t.Errorf("atomic_batch %d: %v", n, err)
		}
	}
	if err := ingest.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.New(ingest.DefaultConfig(), service.Settings{}); !errors.Is(err, service.ErrNoConn) {
		t.Fatalf("New without conn: %v", err)
	}
}

func TestIngestDerivesContractsAndForwardsClaims(t *testing.T) {
	h := start(t, nil)
	h.publish(`{"session_id":"c1","hook_event_name":"UserPromptSubmit","prompt":"Fix the failing test in ` + "`src/app.test.ts`" + ` and run npm test","prompt_id":"p-1"}`)
	h.publish(`{"session_id":"c1","hook_event_name":"UserPromptSubmit","prompt":"what does this do?"}`)
	claimEvent := h.publish(`{"session_id":"c1","hook_event_name":"ClaimRequest","request_id":"01JDB3H5KX0000000000000001","claim":"done","validator":"test_pass","args":{"min_runs":1,"command_substring":"npm test"},"reply_to":"_INBOX.hook.laptop.abc"}`)
	refusals, err := h.nc.SubscribeSync("_INBOX.hook.laptop.refused")
	if err != nil {
		t.Fatal(err)
	}
	h.publish(`{"session_id":"c1","hook_event_name":"ClaimRequest","request_id":"not-a-ulid","claim":"done","validator":"test_pass","args":{},"reply_to":"_INBOX.hook.laptop.refused"}`)
	entries := h.chainOf("c1", 5)
	// The requester of the malformed claim hears why at once.
	msg, err := refusals.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no refusal reply: %v", err)
	}
	var ce schemas.ClaimError
	if err := json.Unmarshal(msg.Data, &ce); err != nil || !strings.Contains(ce.Error, "request_id") {
		t.Fatalf("refusal %s (%v)", msg.Data, err)
	}
	kinds := []string{entries[0].Kind, entries[1].Kind, entries[2].Kind, entries[3].Kind, entries[4].Kind}
	if fmt.Sprint(kinds) != "[event contract event claim invalid]" {
		t.Fatalf("kinds %v", kinds)
	}
	c := entries[1].Contract
	if c == nil || c.PromptEventID != entries[0].EventID || c.TargetFields.CommandHints[0] != "npm test" || c.PromptID != "p-1" {
		t.Fatalf("contract %+v", c)
	}
	if cl := entries[3].Claim; cl == nil || cl.Validator != "test_pass" || string(cl.Args) != `{"command_substring":"npm test","min_runs":1}` {
		t.Fatalf("claim %+v (args canonical)", entries[3].Claim)
	}
	if !strings.Contains(entries[4].Reason, "request_id") {
		t.Fatalf("invalid claim reason %q", entries[4].Reason)
	}
	kv, _ := h.js.KeyValue(t.Context(), stream.BucketContracts)
	e, err := kv.Get(t.Context(), "c1."+entries[0].EventID)
	if err != nil || !strings.Contains(string(e.Value()), "npm test") {
		t.Fatalf("contract not in KV: %v", err)
	}
	claims, _ := h.js.Stream(t.Context(), stream.Claims)
	m, err := claims.GetLastMsgForSubject(t.Context(), "cc.claims.c1")
	if err != nil {
		t.Fatal(err)
	}
	var w schemas.ClaimWork
	if err := json.Unmarshal(m.Data, &w); err != nil || w.ClaimEventID != claimEvent || w.SessionID != "c1" {
		t.Fatalf("claim work %+v %v (want event %s)", w, err, claimEvent)
	}
	info, _ := claims.Info(t.Context())
	if info.State.Msgs != 1 {
		t.Fatalf("%d claims queued, want 1 (the invalid one is not forwarded)", info.State.Msgs)
	}
}

// Events of many sessions queued together are chained with atomic batches
// (one ledger message per session, several sessions per commit), while
// another writer appends to some of the same sessions (as verifiers and the
// gatekeeper do): every session's chain verifies and holds each event once,
// in order, with the other writer's entries interleaved, never forked.
func TestIngestCommitsManySessionsInAtomicBatches(t *testing.T) {
	// Enough sessions that each of the two partitions' batches can be
	// halved around the racing writer's sessions (the first names) and
	// still leave halves of at least stream.MinAtomicBatch.
	const sessions, per = 160, 4
	want := map[string][]string{}
	name := func(i int) string { return fmt.Sprintf("many-%03d", i) }
	h := startAfter(t, nil, func(h *harness) {
		for k := range per {
			for i := range sessions {
				sess := name(i)
				want[sess] = append(want[sess], h.publish(fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_%d_%d","tool_input":{"command":"echo %d"},"tool_response":{"stdout":"ok\n"}}`, sess, i, k, k)))
			}
		}
	})
	// The other writer: one entry on each of ten sessions, racing ingest.
	other := ledger.NewAppender(h.js, ledger.AppenderConfig{MaxConflicts: 1000})
	for i := 0; i < 30; i += 3 {
		e := &schemas.Entry{V: 1, Kind: schemas.EntryVerdict, Chain: name(i), SessionID: name(i), EventID: fmt.Sprintf("other-%d", i), IngestedAt: "2026-11-23T00:00:00.000Z", Bundle: "test"}
		if _, err := other.Append(t.Context(), name(i), []*schemas.Entry{e}); err != nil {
			t.Fatal(err)
		}
	}
	batched := map[string]bool{}
	for i := range sessions {
		sess := name(i)
		n := per
		if i < 30 && i%3 == 0 {
			n++
		}
		var got []string
		for _, e := range h.chainOf(sess, n) {
			if e.EventID != "" && e.Kind == schemas.EntryEvent {
				got = append(got, e.EventID)
			}
		}
		if strings.Join(got, ",") != strings.Join(want[sess], ",") {
			t.Fatalf("%s holds events %v, want %v (each once, in order)", sess, got, want[sess])
		}
	}
	l, err := h.js.Stream(t.Context(), stream.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	info, err := l.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := l.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatal(err)
		}
		if id := m.Header.Get("Nats-Batch-Id"); id != "" {
			batched[id] = true
		}
	}
	if len(batched) == 0 {
		t.Fatal("no ledger message was written by an atomic batch")
	}
	if uint64(len(batched)) >= info.State.Msgs/2 {
		t.Fatalf("%d batches for %d messages: sessions were not committed together", len(batched), info.State.Msgs)
	}
}
