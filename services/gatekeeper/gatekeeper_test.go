package gatekeeper_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	"golang.org/x/mod/sumdb/note"

	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/clientcontract"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/contract"
	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/policy"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/service/servicetest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/pkg/transparency"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
	"github.com/claimcheck/claimcheck/services/gatekeeper"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine"),
		goleak.IgnoreTopFunction("time.Sleep"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

func firstKey(t testing.TB, js jetstream.JetStream, dir string) *keyring.Registry {
	t.Helper()
	reg, err := keyring.OpenRegistry(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := keyring.EnsureFirst(t.Context(), reg, keyring.Dir{Path: dir}, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestLifecycle(t *testing.T) {
	keyDir := t.TempDir()
	servicetest.Lifecycle(t, func(set service.Settings) (servicetest.Service, error) {
		js, err := jetstream.New(set.Conn)
		if err != nil {
			return nil, err
		}
		if err := stream.Ensure(t.Context(), js, stream.DefaultOptions()); err != nil {
			return nil, err
		}
		firstKey(t, js, keyDir)
		cfg := gatekeeper.DefaultConfig()
		cfg.KeyDir = keyDir
		return gatekeeper.New(cfg, set)
	})
}

func TestRejectsBadSettings(t *testing.T) {
	good := gatekeeper.DefaultConfig()
	good.KeyDir = t.TempDir()
	if _, err := gatekeeper.New(good, service.Settings{}); !errors.Is(err, service.ErrNoConn) {
		t.Fatalf("no connection: %v", err)
	}
	for name, mutate := range map[string]func(*gatekeeper.Config){
		"no key dir":     func(c *gatekeeper.Config) { c.KeyDir = "" },
		"ttl":            func(c *gatekeeper.Config) { c.DecisionTTL = 0 },
		"negative cap":   func(c *gatekeeper.Config) { c.StopBlockCap = -1 },
		"stop wait":      func(c *gatekeeper.Config) { c.StopWait = time.Hour },
		"no concurrency": func(c *gatekeeper.Config) { c.MaxInFlight = 0 },
		"replicas":       func(c *gatekeeper.Config) { c.Streams.Replicas = 0 },
		"missing policy": func(c *gatekeeper.Config) { c.PretoolPolicyFile = filepath.Join(t.TempDir(), "none.json") },
		"open http":      func(c *gatekeeper.Config) { c.HTTPListen = "0.0.0.0:8790" },
		"override zero":  func(c *gatekeeper.Config) { c.OverrideThreshold = 0 },
		"crash window":   func(c *gatekeeper.Config) { c.CrashWindow = time.Second },
		"no envelopes":   func(c *gatekeeper.Config) { c.MaxEnvelopes = 0 },
	} {
		c := good
		mutate(&c)
		nc, _ := natstest.Connect(t, natstest.RunServer(t).ClientURL())
		if _, err := gatekeeper.New(c, service.Settings{Conn: nc}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := good
	c.MaxEnvelopes = -5
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "gatekeeper.max_attestation_envelopes -5") {
		t.Errorf("a negative envelope bound: %v, want an error naming the key and value", err)
	}
}

// flow: JetStream, the streams, a key, a gatekeeper, and sessions written as
// ingest and the verifier write them.
type flow struct {
	t      testing.TB
	nc     *nats.Conn
	js     jetstream.JetStream
	keyDir string
	url    string
	app    *ledger.Appender
	gen    *id.Generator
	keys   *decision.Keys
	signer *keyring.Signer
	pol    *policy.Policy
	svc    *gatekeeper.Service
	reg    *prometheus.Registry
	logs   *syncBuffer // the gatekeeper's log, at debug level
}

// syncBuffer is a bytes.Buffer safe for concurrent writes (the log).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newFlow(t testing.TB, mutate func(*gatekeeper.Config)) *flow {
	t.Helper()
	return newFlowAt(t, mutate, nil)
}

// newFlowAt is newFlow with the gatekeeper on clk (nil: the real clock).
func newFlowAt(t testing.TB, mutate func(*gatekeeper.Config), clk clock.Clock) *flow {
	t.Helper()
	srv := natstest.RunServer(t)
	nc, js := natstest.Connect(t, srv.ClientURL())
	natstest.Bootstrap(t, js, nil)
	f := &flow{t: t, nc: nc, js: js, url: srv.ClientURL(), keyDir: filepath.Join(t.TempDir(), "keys"), gen: id.NewGenerator(clock.Real{}, nil), app: ledger.NewAppender(js, ledger.AppenderConfig{})}
	reg := firstKey(t, js, f.keyDir)
	ks, err := reg.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(ks)
	if f.keys, err = decision.ParseKeys(raw); err != nil {
		t.Fatal(err)
	}
	if f.signer, err = keyring.NewSigner(ks, keyring.Dir{Path: f.keyDir}, time.Now()); err != nil {
		t.Fatal(err)
	}
	v, _ := validation.New()
	if f.pol, err = policy.Default(v); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), stream.BucketPolicies)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(t.Context(), "digest."+strings.TrimPrefix(f.pol.Digest, "sha256:"), f.pol.Canonical); err != nil {
		t.Fatal(err)
	}
	cfg := gatekeeper.DefaultConfig()
	cfg.KeyDir = f.keyDir
	cfg.StopWait = 500 * time.Millisecond
	if mutate != nil {
		mutate(&cfg)
	}
	gc, _ := natstest.Connect(t, srv.ClientURL())
	f.reg = prometheus.NewRegistry()
	f.logs = &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if f.svc, err = gatekeeper.New(cfg, service.Settings{Conn: gc, Metrics: f.reg, Clock: clk, Logger: logger}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.svc.Run(ctx) }()
	natstest.Eventually(t, 10*time.Second, f.svc.Ready)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gatekeeper Run: %v", err)
		}
	})
	return f
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

func (f *flow) append(session string, entries ...*schemas.Entry) ledger.Appended {
	f.t.Helper()
	a, err := f.app.Append(f.t.Context(), session, entries)
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

func (f *flow) prompt(session, text string) uint64 {
	f.t.Helper()
	p := f.entry(session, schemas.EntryEvent, "UserPromptSubmit", "", fmt.Sprintf(`{"session_id":%q,"hook_event_name":"UserPromptSubmit","prompt":%q}`, session, text))
	c, ok := contract.Derive(contract.Prompt{SessionID: session, EventID: p.EventID, Text: text})
	if !ok {
		f.t.Fatalf("prompt %q is not actionable", text)
	}
	ce := f.entry(session, schemas.EntryContract, "UserPromptSubmit", "", "")
	ce.Contract = &c
	f.append(session, p, ce)
	return f.head(session)
}

func (f *flow) head(session string) uint64 {
	last, err := ledger.NewReader(f.js, stream.Ledger).Last(f.t.Context(), session)
	if err != nil {
		f.t.Fatal(err)
	}
	var e schemas.Entry
	_ = json.Unmarshal(last.Raw, &e)
	return e.N
}

func (f *flow) tool(session, event, name, input, response string) {
	f.append(session, f.entry(session, schemas.EntryEvent, event, name,
		fmt.Sprintf(`{"session_id":%q,"hook_event_name":%q,"tool_name":%q,"tool_input":%s,"tool_response":%s}`, session, event, name, input, response)))
}

func (f *flow) edit(session, path string) {
	f.tool(session, "PostToolUse", "Edit", fmt.Sprintf(`{"file_path":%q}`, path), fmt.Sprintf(`{"filePath":%q,"oldString":"a","newString":"b","structuredPatch":[],"userModified":false}`, path))
}

func (f *flow) bash(session, cmd, stdout string, failed bool) {
	if failed {
		f.append(session, f.entry(session, schemas.EntryEvent, "PostToolUseFailure", "Bash",
			fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":%q},"error":%q}`, session, cmd, "Exit code 1\n"+stdout)))
		return
	}
	f.tool(session, "PostToolUse", "Bash", fmt.Sprintf(`{"command":%q}`, cmd), fmt.Sprintf(`{"stdout":%q,"stderr":""}`, stdout))
}

// attest records a PASS verdict for the session's current head and stores
// its attestation, as the verifier does; it returns the attestation id.
func (f *flow) attest(session string, contractN uint64, claimType, validator, args string) string {
	f.t.Helper()
	reqID, _ := f.gen.New()
	attID, err := attest.ID(reqID)
	if err != nil {
		f.t.Fatal(err)
	}
	last, _ := ledger.NewReader(f.js, stream.Ledger).Last(f.t.Context(), session)
	var head schemas.Entry
	_ = json.Unmarshal(last.Raw, &head)
	v := schemas.Verdict{V: 1, SessionID: session, RequestID: reqID, Claim: claimType, Validator: validator, Args: jsontext.Value(args),
		Verdict: schemas.Pass, Reasons: []string{}, AttestationID: attID, Verifier: "test",
		Policy:   schemas.PolicyRef{Version: f.pol.Version, Digest: f.pol.Digest},
		Contract: &schemas.Position{N: contractN, Hash: head.Hash},
		Range:    schemas.Range{From: 1, To: head.N, HeadHash: head.Hash}}
	ve := f.entry(session, schemas.EntryVerdict, "", "", "")
	ve.Verdict = &v
	f.append(session, ve)
	st := attest.Statement(v, &schemas.Position{N: head.N + 1}, time.Now())
	env, _, err := attest.Sign(f.t.Context(), f.signer, st)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.js.Publish(f.t.Context(), subject.Attestation(session, attID), env); err != nil {
		f.t.Fatal(err)
	}
	return attID
}

// stop records a Stop event and asks the gatekeeper, as claimcheck-hook does.
func (f *flow) stop(session, message string) schemas.GateDecision {
	f.t.Helper()
	payload := fmt.Sprintf(`{"session_id":%q,"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":%q}`, session, message)
	e := f.entry(session, schemas.EntryEvent, "Stop", "", payload)
	f.append(session, e)
	return f.ask(subject.GateStop, schemas.GateRequest{V: 1, Nonce: "nonce-" + e.EventID, EventID: e.EventID, SessionID: session, HookEvent: "Stop", Payload: jsontext.Value(payload)})
}

// ask sends a gate request of kind as claimcheck-hook on req.Host does
// (on that host's gate subject; "laptop" when the request names none).
func (f *flow) ask(kind string, req schemas.GateRequest) schemas.GateDecision {
	f.t.Helper()
	if req.Host == "" {
		req.Host = "laptop"
	}
	tok, err := id.HostToken(req.Host)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.askOn(subject.Gate(tok, kind), req)
}

// askOn sends a request on a subject of the test's choice.
func (f *flow) askOn(subj string, req schemas.GateRequest) schemas.GateDecision {
	f.t.Helper()
	raw, _ := json.Marshal(req)
	// Generous: under the race detector the hostile inputs' scans
	// (TestLongAndHostileResultsAreScannedWithinBounds) take ten times their
	// ~0.5 s of CPU.
	m, err := f.nc.Request(subj, raw, 30*time.Second)
	if err != nil {
		f.t.Fatal(err)
	}
	d, err := f.keys.Verify(m.Data, decision.Expect{SessionID: req.SessionID, HookEvent: req.HookEvent, Nonce: req.Nonce, Now: time.Now(), Skew: time.Second})
	if err != nil {
		f.t.Fatalf("the gatekeeper's answer does not verify: %v", err)
	}
	return d
}

func block(name, typ, attID string) string {
	return fmt.Sprintf("Summary.\n```%s\n{\"type\":%q,\"summary\":\"s\",\"claims\":[{\"claim_type\":\"done\",\"attestation_id\":%q}]}\n```", name, typ, attID)
}

func TestStopDecisionsFollowTheLedger(t *testing.T) {
	f := newFlow(t, nil)
	s := "sess-flow"
	cn := f.prompt(s, "Fix the failing test in `src/app.py` and run `pytest`")
	f.edit(s, "/repo/src/app.py")
	d := f.stop(s, "Fixed it; all tests pass.")
	if d.Decision != schemas.GateBlock || d.Rule != "stop.final_block_missing" || !strings.Contains(d.Reason, "Next step:") || d.LedgerHead.N == 0 {
		t.Fatalf("no evidence: %+v", d)
	}
	f.bash(s, "pytest", "===== 3 passed in 0.10s =====", false)
	att := f.attest(s, cn, "done", "test_pass", `{"command_substring":"pytest"}`)
	if d := f.stop(s, block("claimcheck", "done", att)); d.Decision != schemas.GateAllow {
		t.Fatalf("fresh pass: %+v", d)
	}
	f.edit(s, "/repo/src/app.py")
	if d := f.stop(s, block("claimcheck", "done", att)); d.Decision != schemas.GateBlock || d.Rule != "stop.attestation_stale" || !strings.Contains(d.Reason, "re-run `pytest`") {
		t.Fatalf("stale after edit: %+v", d)
	}
	f.bash(s, "pytest", "===== 3 passed in 0.10s =====", false)
	att2 := f.attest(s, cn, "done", "test_pass", `{"command_substring":"pytest"}`)
	f.bash(s, "pytest", "===== 1 failed, 2 passed in 0.10s =====", true)
	if d := f.stop(s, block("claimcheck", "done", att2)); d.Decision != schemas.GateBlock || !strings.Contains(d.Reason, "later run of `pytest` failed") {
		t.Fatalf("stale after a failing run: %+v", d)
	}
	// An attestation of another session.
	o := "sess-other"
	ocn := f.prompt(o, "Fix the failing test in `src/app.py` and run `pytest`")
	f.bash(o, "pytest", "===== 3 passed in 0.10s =====", false)
	foreign := f.attest(o, ocn, "done", "test_pass", `{"command_substring":"pytest"}`)
	if d := f.stop(s, block("claimcheck", "done", foreign)); d.Decision != schemas.GateBlock || !strings.Contains(d.Reason, "another session") {
		t.Fatalf("foreign: %+v", d)
	}
}

// A shell command that writes a contract path (sed -i, > file, git apply)
// makes an earlier pass stale like an Edit does; writing another file
// does not.
func TestShellWritesMakePassesStale(t *testing.T) {
	f := newFlow(t, nil)
	s := "sess-shell-edit"
	cn := f.prompt(s, "Fix the failing test in `src/app.py` and run `pytest`")
	f.edit(s, "/repo/src/app.py")
	f.bash(s, "pytest", "===== 3 passed in 0.10s =====", false)
	att := f.attest(s, cn, "done", "test_pass", `{"command_substring":"pytest"}`)
	f.bash(s, "echo checked > notes.txt", "", false)
	if d := f.stop(s, block("claimcheck", "done", att)); d.Decision != schemas.GateAllow {
		t.Fatalf("fresh pass after writing another file: %+v", d)
	}
	f.bash(s, "sed -i 's/== 2/== 3/' src/app.py", "", false)
	d := f.stop(s, block("claimcheck", "done", att))
	if d.Decision != schemas.GateBlock || d.Rule != "stop.attestation_stale" || !strings.Contains(d.Reason, "src/app.py (by `sed -i") {
		t.Fatalf("pass after sed -i of a contract path: %+v", d)
	}
}

// Only the newest attestation envelopes stay in memory; a Stop citing an
// older one reads it back from ATTEST and judges it the same way.
func TestEvictedAttestationsAreReadBack(t *testing.T) {
	f := newFlow(t, func(c *gatekeeper.Config) { c.MaxEnvelopes = 1 })
	s := "sess-evict"
	cn := f.prompt(s, "Fix the failing test in `src/app.py` and run `pytest`")
	f.edit(s, "/repo/src/app.py")
	f.bash(s, "pytest", "===== 3 passed in 0.10s =====", false)
	old := f.attest(s, cn, "done", "test_pass", `{"command_substring":"pytest"}`)
	o := "sess-evict-other"
	ocn := f.prompt(o, "Fix the failing test in `src/app.py` and run `pytest`")
	f.edit(o, "/repo/src/app.py")
	f.bash(o, "pytest", "===== 3 passed in 0.10s =====", false)
	newer := f.attest(o, ocn, "done", "test_pass", `{"command_substring":"pytest"}`)
	// Citing newer first: its look-up waits until the projection has read
	// ATTEST to the end, which evicted old's envelope.
	if d := f.stop(o, block("claimcheck", "done", newer)); d.Decision != schemas.GateAllow {
		t.Fatalf("a kept fresh pass: %+v", d)
	}
	if d := f.stop(s, block("claimcheck", "done", old)); d.Decision != schemas.GateAllow {
		t.Fatalf("an evicted fresh pass: %+v", d)
	}
	reads := map[string]float64{}
	mfs, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "claimcheck_gatekeeper_attestation_reads_total" {
			for _, m := range mf.GetMetric() {
				reads[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	if reads["stream"] < 1 || reads["memory"] < 1 || reads["failed"] != 0 {
		t.Fatalf("attestation reads by source %v: want the evicted one from the stream, the newest from memory", reads)
	}
	// Still stale after an edit, still foreign in another session.
	f.edit(s, "/repo/src/app.py")
	if d := f.stop(s, block("claimcheck", "done", old)); d.Decision != schemas.GateBlock || d.Rule != "stop.attestation_stale" {
		t.Fatalf("an evicted pass after an edit: %+v", d)
	}
	if d := f.stop(o, block("claimcheck", "done", old)); d.Decision != schemas.GateBlock || !strings.Contains(d.Reason, "another session") {
		t.Fatalf("an evicted foreign pass: %+v", d)
	}
}

// A session whose chain stops verifying is never judged on its evidence:
// its Stop is blocked naming the fault, whatever the final message cites.
func TestBrokenChainBlocksTheStop(t *testing.T) {
	const wait = 3 * time.Second
	f := newFlow(t, func(c *gatekeeper.Config) { c.StopWait = wait })
	s := "sess-broken"
	f.prompt(s, "Fix the failing test in `src/app.py` and run `pytest`")
	head := f.head(s)
	// A block appended behind the appender's back, claiming the next
	// position with a wrong previous hash.
	forged := fmt.Sprintf(`{"v":1,"kind":"event","chain":%q,"session_id":%q,"n":%d,"prev_hash":"sha256:%064d","hash":"sha256:%064d","event_id":"01KAB0N0000000000000000009","hook_event_name":"PostToolUse","ingested_at":"2026-11-23T00:00:00Z","bundle":"forged"}`, s, s, head+1, 0, 1)
	if _, err := f.js.Publish(f.t.Context(), subject.Ledger(s), []byte(forged)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	d := f.stop(s, "Done: all tests pass.")
	if d.Decision != schemas.GateBlock || d.Rule != "stop.ledger_broken" || !strings.Contains(d.Reason, "does not verify") || !strings.Contains(d.Reason, "claimcheck ledger verify") {
		t.Fatalf("stop on a broken chain: %+v", d)
	}
	if took := time.Since(start); took >= wait {
		t.Errorf("the stop waited %s for an event a broken chain can never show", took)
	}
}

func TestStopWaitsForItsEventAndFailsClosed(t *testing.T) {
	f := newFlow(t, func(c *gatekeeper.Config) { c.StopWait = 300 * time.Millisecond })
	s := "sess-wait"
	f.prompt(s, "Fix the failing test in `src/app.py` and run `pytest`")
	// A Stop whose event never reached the ledger: blocked, not guessed.
	req := schemas.GateRequest{V: 1, Nonce: "nonce-never-recorded-1", EventID: "01KAB0N0000000000000000001", SessionID: s, HookEvent: "Stop",
		Payload: jsontext.Value(`{"session_id":"sess-wait","hook_event_name":"Stop","last_assistant_message":"hello"}`)}
	start := time.Now()
	d := f.ask(subject.GateStop, req)
	if d.Decision != schemas.GateBlock || d.Rule != "stop.evidence_not_recorded" || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("%+v after %s", d, time.Since(start))
	}
	// A bad request is refused, signed, naming the problem.
	bad := req
	bad.Nonce = "short"
	if d := f.ask(subject.GateStop, bad); d.Decision != schemas.GateBlock || !strings.Contains(d.Reason, "nonce") {
		t.Fatalf("bad request: %+v", d)
	}
}

func TestConsecutiveBlocksAreCappedAndOverridesApplyOnce(t *testing.T) {
	f := newFlow(t, func(c *gatekeeper.Config) { c.StopBlockCap = 3 })
	s := "sess-cap"
	f.prompt(s, "Fix the failing test in `src/app.py` and run `pytest`")
	for i := range 2 {
		if d := f.stop(s, "All tests pass."); d.Decision != schemas.GateBlock || d.ConsecutiveBlocks != i+1 {
			t.Fatalf("stop %d: %+v", i, d)
		}
	}
	d := f.stop(s, "All tests pass.")
	if d.Decision != schemas.GateAllow || !d.Capped || !strings.Contains(d.SystemMessage, "NOT verified") ||
		!strings.Contains(d.SystemMessage, "2 consecutive stops were blocked") {
		t.Fatalf("at the cap (after 2 blocks): %+v", d)
	}
	// The count starts again.
	if d := f.stop(s, "All tests pass."); d.Decision != schemas.GateBlock || d.ConsecutiveBlocks != 1 {
		t.Fatalf("after the cap: %+v", d)
	}
	// An override (a GateOverride event in the chain) lets exactly one stop through.
	ov := f.entry(s, schemas.EntryEvent, schemas.GateOverrideEvent, "", fmt.Sprintf(`{"session_id":%q,"hook_event_name":"GateOverride","reason":"hotfix","operator":"jo@host"}`, s))
	f.append(s, ov)
	if d := f.stop(s, "All tests pass."); d.Decision != schemas.GateAllow || d.Override != ov.EventID {
		t.Fatalf("override: %+v", d)
	}
	if d := f.stop(s, "All tests pass."); d.Decision != schemas.GateBlock {
		t.Fatalf("override used twice: %+v", d)
	}
}

func TestPreToolDecisionsAreSignedWithThePolicy(t *testing.T) {
	f := newFlow(t, nil)
	for _, tc := range []struct {
		input, want string
	}{
		{`{"command":"rm -rf /"}`, schemas.GateDeny},
		{`{"command":"go test ./..."}`, schemas.GateAllow},
	} {
		payload := fmt.Sprintf(`{"session_id":"sess-p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":%s}`, tc.input)
		d := f.ask(subject.GatePreTool, schemas.GateRequest{V: 1, Nonce: "nonce-pretool-000001", SessionID: "sess-p", HookEvent: "PreToolUse", Payload: jsontext.Value(payload)})
		if d.Decision != tc.want || d.Policy == nil || d.Policy.Digest == "" {
			t.Fatalf("%s: %+v", tc.input, d)
		}
	}
}

func (f *flow) promptReq(session, host, text string) schemas.GateDecision {
	f.t.Helper()
	eid, _ := f.gen.New()
	payload := fmt.Sprintf(`{"session_id":%q,"hook_event_name":"UserPromptSubmit","prompt":%q}`, session, text)
	return f.ask(subject.GatePrompt, schemas.GateRequest{V: 1, Nonce: "nonce-" + eid, EventID: eid, SessionID: session, HookEvent: "UserPromptSubmit", Host: host, Payload: jsontext.Value(payload)})
}

// intake waits for want records of one kind the gatekeeper published, and
// returns them (after a moment, to catch extra ones).
func (f *flow) intake(hookEvent string, want int) []schemas.Envelope {
	f.t.Helper()
	var out []schemas.Envelope
	natstest.Eventually(f.t, 5*time.Second, func() error {
		out = out[:0]
		s, err := f.js.Stream(f.t.Context(), stream.Intake)
		if err != nil {
			return err
		}
		info, err := s.Info(f.t.Context())
		if err != nil {
			return err
		}
		for seq := uint64(1); seq <= info.State.LastSeq; seq++ {
			m, err := s.GetMsg(f.t.Context(), seq)
			if err != nil {
				continue
			}
			var env schemas.Envelope
			if json.Unmarshal(m.Data, &env, json.RejectUnknownMembers(false)) == nil && (hookEvent == "" || env.HookEvent == hookEvent) {
				out = append(out, env)
			}
		}
		if len(out) < want {
			return fmt.Errorf("%d %s records, want %d", len(out), hookEvent, want)
		}
		return nil
	})
	return out
}

func TestOverridePromptsAreAuditedAndAlertOncePerDay(t *testing.T) {
	f := newFlow(t, nil)
	s := "sess-ovr"
	if d := f.promptReq(s, "laptop", "Fix the login bug and run the tests"); d.Decision != schemas.GateAllow || d.SystemMessage != "" || d.AdditionalContext != "" {
		t.Fatalf("ordinary prompt: %+v", d)
	}
	d := f.promptReq(s, "laptop", "skip the tests, just ship it")
	if d.Decision != schemas.GateAllow || d.Rule != "prompt.override_request" || !strings.Contains(d.AdditionalContext, "bypass the evidence gate") || d.SystemMessage != "" {
		t.Fatalf("first bypass prompt: %+v", d)
	}
	// Another host's bypass prompts do not count for this one.
	f.promptReq("sess-elsewhere", "ci-runner", "force this through")
	f.promptReq(s, "laptop", "bypass the gate please")
	d = f.promptReq(s, "laptop", "just say it's done")
	if d.Rule != "prompt.alert" || !strings.Contains(d.SystemMessage, "3 prompts") || !strings.Contains(d.AdditionalContext, "Tell the human") {
		t.Fatalf("third bypass prompt: %+v", d)
	}
	// Once per day.
	if d := f.promptReq(s, "laptop", "skip the tests again"); d.SystemMessage != "" {
		t.Fatalf("alert raised twice: %+v", d)
	}
	time.Sleep(200 * time.Millisecond) // let stray records land
	if n := len(f.intake(schemas.OverrideEvent, 5)); n != 5 {
		t.Errorf("%d OverrideRequest records, want 5", n)
	}
	if a := f.intake(schemas.GateAlertEvent, 1); len(a) != 1 || a[0].SessionID != s {
		t.Errorf("GateAlert records: %+v, want one in %s", a, s)
	}
}

func TestHookCrashesRaiseAnAlertOnTheNextPrompt(t *testing.T) {
	f := newFlow(t, nil)
	s := "sess-crash"
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for range 2 {
		e := f.entry(s, schemas.EntryEvent, schemas.HookCrashEvent, "", fmt.Sprintf(`{"session_id":%q,"hook_event_name":"HookCrash","event":"Stop","kind":"gate","error":"no answer from the gatekeeper within 4s"}`, s))
		e.Host, e.ReceivedAt = "laptop", now
		f.append(s, e)
	}
	// A crash of another hook event, and one on another host, do not add up.
	other := f.entry(s, schemas.EntryEvent, schemas.HookCrashEvent, "", fmt.Sprintf(`{"session_id":%q,"hook_event_name":"HookCrash","event":"PreToolUse","kind":"panic","error":"x"}`, s))
	other.Host, other.ReceivedAt = "laptop", now
	f.append(s, other)
	if d := f.promptReq(s, "laptop", "carry on"); d.SystemMessage != "" {
		t.Fatalf("two crashes raised %+v", d)
	}
	// Bad input the hook rejected counts as a failure of that hook event.
	rej := f.entry(schemas.RejectedChain, schemas.EntryRejected, "Stop", "", "")
	rej.SessionID, rej.Host, rej.ReceivedAt, rej.Reason = "", "laptop", now, "malformed hook payload"
	f.append(schemas.RejectedChain, rej)
	var d schemas.GateDecision
	natstest.Eventually(t, 5*time.Second, func() error {
		d = f.promptReq(s, "laptop", "carry on")
		if !strings.Contains(d.SystemMessage, "failed 3 times for Stop") {
			return fmt.Errorf("no crash alert yet: %+v", d)
		}
		return nil
	})
	if !strings.Contains(d.AdditionalContext, "failed 3 times for Stop") {
		t.Fatalf("the agent is not told: %+v", d)
	}
	if d := f.promptReq(s, "laptop", "carry on"); d.SystemMessage != "" {
		t.Fatalf("crash alert raised twice: %+v", d)
	}
}

// The decision record the gatekeeper puts into INTAKE carries the
// envelope's signatures, not its base64 payload, and verifies on its own.
func TestDecisionRecordsVerifyWithoutTheEnvelope(t *testing.T) {
	f := newFlow(t, nil)
	d := f.stop("sess-rec", "Done.")
	recs := f.intake(schemas.GateDecisionEvent, 1)
	var rec schemas.GateRecord
	if err := json.Unmarshal(recs[0].Payload, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Decision.DecisionID != d.DecisionID || rec.Signed == nil || len(rec.Signed.Signatures) == 0 {
		t.Fatalf("record %s", recs[0].Payload)
	}
	if bytes.Contains(recs[0].Payload, []byte(`"payload"`)) {
		t.Fatalf("the record repeats the envelope's payload: %s", recs[0].Payload)
	}
	if err := f.keys.VerifyRecord(rec); err != nil {
		t.Fatalf("record does not verify: %v", err)
	}
	rec.Decision.Reason += "!"
	if err := f.keys.VerifyRecord(rec); err == nil {
		t.Fatal("an edited record verified")
	}
}

// TestGateRequestsAreTheirHostsOwn: a request must name the host whose
// credentials sent it (the subject), and a host may not ask about another
// host's session; both are blocked (or denied) with the reason.
func TestGateRequestsAreTheirHostsOwn(t *testing.T) {
	f := newFlow(t, nil)
	s := "sess-own"
	f.prompt(s, "Fix the failing test in `src/app.py` and run `pytest`")
	payload := fmt.Sprintf(`{"session_id":%q,"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done."}`, s)
	e := f.entry(s, schemas.EntryEvent, "Stop", "", payload)
	f.append(s, e)
	req := schemas.GateRequest{V: 1, Nonce: "nonce-" + e.EventID, EventID: e.EventID, SessionID: s, HookEvent: "Stop", Host: "laptop", Payload: jsontext.Value(payload)}

	d := f.askOn(subject.Gate("desk", subject.GateStop), req)
	if d.Decision != schemas.GateBlock || !strings.Contains(d.Reason, `names host "laptop" but came with the credentials of host desk`) {
		t.Fatalf("a request naming another host: %s %q", d.Decision, d.Reason)
	}
	other := req
	other.Host, other.Nonce = "desk", "nonce-desk-"+e.EventID
	d = f.ask(subject.GateStop, other)
	if d.Decision != schemas.GateBlock || !strings.Contains(d.Reason, "session sess-own is host laptop's; host desk may not ask about it") {
		t.Fatalf("another host's session: %s %q", d.Decision, d.Reason)
	}
	pre := `{"session_id":"sess-own","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`
	d = f.ask(subject.GatePreTool, schemas.GateRequest{V: 1, Nonce: "nonce-pretool-desk-0001", SessionID: s, HookEvent: "PreToolUse", Host: "desk", Payload: jsontext.Value(pre)})
	if d.Decision != schemas.GateDeny || !strings.Contains(d.Reason, "may not ask about it") {
		t.Fatalf("another host's tool call: %s %q", d.Decision, d.Reason)
	}
	// The session's own host is answered as usual.
	d = f.ask(subject.GateStop, req)
	if d.Rule == "request.invalid" {
		t.Fatalf("the session's own host was refused: %q", d.Reason)
	}
}

// `claimcheck gate replay` decides a recorded session's Stop and PreToolUse
// events again from the ledger as it stood at each, beside the decisions
// recorded for them; an attestation of another session is foreign there.
func TestReplayDecidesRecordedEventsAgain(t *testing.T) {
	f := newFlow(t, nil)
	s := "sess-replay"
	cn := f.prompt(s, "Fix the failing test in `src/app.py` and run `pytest`")
	first := f.stop(s, "Fixed it; all tests pass.")
	rec := f.entry(s, schemas.EntryEvent, schemas.GateDecisionEvent, "", "")
	raw, err := gatekeeper.RecordPayload(first, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	payload := string(raw)
	rec.Payload = &payload
	f.append(s, rec)
	pre := f.entry(s, schemas.EntryEvent, "PreToolUse", "Bash", fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}`, s))
	f.append(s, pre)
	f.edit(s, "/repo/src/app.py")
	f.bash(s, "pytest", "===== 3 passed in 0.10s =====", false)
	att := f.attest(s, cn, "done", "test_pass", `{"command_substring":"pytest"}`)
	if d := f.stop(s, block("claimcheck", "done", att)); d.Decision != schemas.GateAllow {
		t.Fatalf("live: %+v", d)
	}
	o := "sess-replay-other"
	ocn := f.prompt(o, "Fix the failing test in `src/app.py` and run `pytest`")
	foreign := f.attest(o, ocn, "done", "test_pass", `{"command_substring":"pytest"}`)
	f.stop(s, block("claimcheck", "done", foreign))

	var steps []gatekeeper.ReplayStep
	if err := gatekeeper.Replay(t.Context(), f.js, gatekeeper.DefaultConfig(), s, func(st gatekeeper.ReplayStep) { steps = append(steps, st) }); err != nil {
		t.Fatal(err)
	}
	type got struct{ event, decision, rule string }
	want := []got{
		{"Stop", schemas.GateBlock, "stop.final_block_missing"},
		{"PreToolUse", schemas.GateDeny, ""}, // whichever pre-tool rule denies it
		{"Stop", schemas.GateAllow, "stop.allowed"},
		{"Stop", schemas.GateBlock, "stop.attestation_unusable"},
	}
	if len(steps) != len(want) {
		t.Fatalf("%d steps, want %d: %+v", len(steps), len(want), steps)
	}
	for i, st := range steps {
		g := got{st.HookEvent, st.Decision.Decision, st.Decision.Rule}
		if want[i].rule == "" {
			g.rule = ""
		}
		if g != want[i] || st.Decision.Source != "replay" {
			t.Errorf("step %d: %+v from %s, want %+v from replay", i, g, st.Decision.Source, want[i])
		}
	}
	if r := steps[0].Recorded; len(r) != 1 || r[0].DecisionID != first.DecisionID {
		t.Errorf("the first stop's recorded decisions: %+v, want the live one", r)
	}
	if !strings.Contains(steps[1].Summary, "rm -rf /") || !strings.Contains(steps[3].Decision.Reason, "no such attestation") {
		t.Errorf("summary %q, foreign citation %q", steps[1].Summary, steps[3].Decision.Reason)
	}
}

// A block for an unbacked "tests pass" names the ledger's newest failing
// run; a later passing run of the same command clears it.
func TestBlockReasonsNameTheFailingRun(t *testing.T) {
	f := newFlow(t, nil)
	s := "sess-failing-run"
	f.prompt(s, "Fix the failing test in `src/app.py` and run `pytest`")
	f.bash(s, "pytest -q", "FAILED tests/test_app.py::test_add - assert 3 == 4", true)
	f.bash(s, "ls", "src tests", false)
	d := f.stop(s, "Done! All tests pass.")
	want := "the ledger's newest run of `pytest -q` failed"
	if d.Decision != schemas.GateBlock || !strings.Contains(d.Reason, want) || !strings.Contains(d.Reason, "assert 3 == 4") ||
		!strings.Contains(d.NextStep, "fix what made `pytest -q` fail") {
		t.Fatalf("unbacked claim after a failing run: %+v", d)
	}
	f.bash(s, "pytest -q", "3 passed in 0.10s", false)
	if d := f.stop(s, "Done! All tests pass."); d.Decision != schemas.GateBlock || strings.Contains(d.Reason, "newest run") {
		t.Fatalf("after a passing run the failure is not news: %+v", d)
	}
}

// A done for a task that names a file to fix needs a change to that file
// in the ledger: a passing run alone (the tests changed, or nothing did)
// is refused, and the same run after the edit is accepted.
func TestDoneNeedsTheNamedFileChanged(t *testing.T) {
	f := newFlow(t, nil)
	s := "sess-change"
	cn := f.prompt(s, "Fix the failing test in `src/app.py` and run `pytest`")
	f.edit(s, "/repo/tests/test_app.py")
	f.bash(s, "pytest", "===== 3 passed in 0.10s =====", false)
	att := f.attest(s, cn, "done", "test_pass", `{"command_substring":"pytest"}`)
	d := f.stop(s, block("claimcheck", "done", att))
	if d.Decision != schemas.GateBlock || d.Rule != "stop.done_without_change" || !strings.Contains(d.Reason, "names src/app.py to change") {
		t.Fatalf("a pass without the change: %+v", d)
	}
	f.edit(s, "/repo/src/app.py")
	f.bash(s, "pytest", "===== 3 passed in 0.10s =====", false)
	att = f.attest(s, cn, "done", "test_pass", `{"command_substring":"pytest"}`)
	if d := f.stop(s, block("claimcheck", "done", att)); d.Decision != schemas.GateAllow {
		t.Fatalf("a pass after the change: %+v", d)
	}
}

// With gatekeeper.require_checkpoint, a cited attestation counts only once
// a checkpoint of the ledger's Merkle tree covers its verdict.
func TestRequireCheckpoint(t *testing.T) {
	f := newFlow(t, func(c *gatekeeper.Config) { c.RequireCheckpoint = true })
	s := "sess-checkpoint"
	cn := f.prompt(s, "Fix the failing test in `src/app.py` and run `pytest`")
	f.edit(s, "/repo/src/app.py")
	f.bash(s, "pytest", "===== 3 passed in 0.10s =====", false)
	att := f.attest(s, cn, "done", "test_pass", `{"command_substring":"pytest"}`)
	if d := f.stop(s, block("claimcheck", "done", att)); d.Decision != schemas.GateBlock ||
		!strings.Contains(d.Reason, "checkpoint of the ledger's Merkle tree") {
		t.Fatalf("no checkpoint yet: %+v", d)
	}
	kv, err := transparency.OpenBucket(t.Context(), f.js)
	if err != nil {
		t.Fatal(err)
	}
	skey, _, err := note.GenerateKey(rand.Reader, "claimcheck.test/log")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	l := &transparency.Log{JS: f.js, KV: kv, Every: 1000, Interval: time.Second, Logger: slog.New(slog.DiscardHandler),
		Signers: func(context.Context, string) ([]note.Signer, error) { return []note.Signer{signer}, nil }}
	if _, err := l.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := f.stop(s, block("claimcheck", "done", att)); d.Decision != schemas.GateAllow {
		t.Fatalf("covered by a checkpoint: %+v", d)
	}
}
