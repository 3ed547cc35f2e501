package hook

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"

	"github.com/claimcheck/claimcheck/pkg/clientcontract"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/keyring/keyringtest"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// gatekeeperStub answers gate requests the way a test tells it to, signing
// with a real key (keyring, i.e. sigstore) unless told otherwise.
type gatekeeperStub struct {
	t      *testing.T
	signer *keyring.Signer
	rogue  *keyring.Signer // a key the hook does not trust
	// rogueKeys are rogue's public keys.
	rogueKeys []schemas.Key
	nc        *nats.Conn
	ids       *id.Generator

	mu       sync.Mutex
	requests []schemas.GateRequest
	answer   func(req schemas.GateRequest, d *schemas.GateDecision) []byte // nil result: sign d with signer
	last     []byte
}

func newKeys(t *testing.T, dir string) (*keyring.Signer, []schemas.Key) {
	t.Helper()
	k := keyringtest.New(t, dir, keyring.ECDSA, time.Now())
	return k.Signer, k.Keys()
}

// keysPath is the key set the hook trusts for the fixture's server.
func (f *fixture) keysPath() string {
	return decision.KeySetPath(filepath.Join(f.dir, "state"), f.env["CLAIMCHECK_NATS_URL"])
}

// gateSetup starts NATS, a stub gatekeeper and writes the trusted key set.
func gateSetup(t *testing.T) (*fixture, *gatekeeperStub) {
	t.Helper()
	f := setup(t, true)
	delete(f.env, "CLAIMCHECK_HOOK_GATE")
	f.env["CLAIMCHECK_HOOK_GATE_DEADLINE"] = "1500ms"
	g := &gatekeeperStub{t: t, ids: id.NewGenerator(clock.Real{}, id.FastEntropy{})}
	var keys []schemas.Key
	g.signer, keys = newKeys(t, filepath.Join(f.dir, "keys"))
	g.rogue, g.rogueKeys = newKeys(t, filepath.Join(f.dir, "rogue"))
	raw, _ := json.Marshal(keys)
	if err := os.MkdirAll(filepath.Dir(f.keysPath()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.keysPath(), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	g.nc, _ = natstest.Connect(t, f.env["CLAIMCHECK_NATS_URL"])
	for _, kind := range []string{subject.GateStop, subject.GatePreTool, subject.GatePrompt, subject.GatePostTool} {
		if _, err := g.nc.Subscribe(subject.GateAll(kind), g.serve); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.nc.Subscribe(subject.GateAll(subject.GatePing), func(m *nats.Msg) { _ = m.Respond([]byte("ok stub")) }); err != nil {
		t.Fatal(err)
	}
	_ = g.nc.Flush()
	return f, g
}

func (g *gatekeeperStub) serve(m *nats.Msg) {
	var req schemas.GateRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		g.t.Errorf("gate request: %v", err)
		return
	}
	now := time.Now()
	did, _ := g.ids.New()
	d := schemas.GateDecision{V: 1, DecisionID: did, SessionID: req.SessionID, HookEvent: req.HookEvent,
		EventID: req.EventID, Nonce: req.Nonce, Decision: schemas.GateAllow, Source: schemas.SourceGatekeeper,
		IssuedAt: now.UTC().Format(time.RFC3339Nano), ExpiresAt: now.Add(30 * time.Second).UTC().Format(time.RFC3339Nano)}
	g.mu.Lock()
	g.requests = append(g.requests, req)
	answer := g.answer
	g.mu.Unlock()
	var out []byte
	if answer != nil {
		out = answer(req, &d)
	}
	if out == nil {
		out = g.sign(g.signer, d)
	}
	g.mu.Lock()
	g.last = out
	g.mu.Unlock()
	_ = m.Respond(out)
}

func (g *gatekeeperStub) sign(s *keyring.Signer, d schemas.GateDecision) []byte {
	p, _ := json.Marshal(d)
	env, err := s.Sign(g.t.Context(), schemas.GateDecisionType, p)
	if err != nil {
		g.t.Fatal(err)
	}
	return env
}

func (g *gatekeeperStub) set(fn func(req schemas.GateRequest, d *schemas.GateDecision) []byte) {
	g.mu.Lock()
	g.answer = fn
	g.mu.Unlock()
}

// decisions returns the GateDecision records in INTAKE.
func (f *fixture) decisions(t *testing.T) []schemas.GateRecord {
	t.Helper()
	var out []schemas.GateRecord
	for _, e := range f.intake(t) {
		if e.HookEvent != schemas.GateDecisionEvent {
			continue
		}
		var r schemas.GateRecord
		if err := json.Unmarshal(e.Payload, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

const stopPayload = `,"stop_hook_active":false,"last_assistant_message":"Done: all tests pass."`
const preToolPayload = `,"tool_name":"Bash","tool_input":{"command":"rm -rf /"},"tool_use_id":"toolu_1"`

// TestGateFixturesAreClientShaped: the payloads of these tests use only
// fields the real Claude Code sends, in its types (pkg/clientcontract).
func TestGateFixturesAreClientShaped(t *testing.T) {
	for _, p := range []string{
		hookJSON("s", "Stop", stopPayload), hookJSON("s", "PreToolUse", preToolPayload),
		hookJSON("s", "UserPromptSubmit", `,"prompt":"go on"`),
	} {
		clientcontract.Fields(t, []byte(p))
	}
}

func TestGateAnswersAsClaudeCodeReadsThem(t *testing.T) {
	f, g := gateSetup(t)
	tests := []struct {
		name, event, extra, decision, reason string
		wantStdout                           string
	}{
		{"stop allowed by silence", "Stop", stopPayload, schemas.GateAllow, "", ""},
		{"stop blocked", "Stop", stopPayload, schemas.GateBlock, "run `go test ./...`", `{"decision":"block","reason":"run ` + "`go test ./...`" + `"}` + "\n"},
		{"tool allowed by silence", "PreToolUse", preToolPayload, schemas.GateAllow, "", ""},
		{"tool denied", "PreToolUse", preToolPayload, schemas.GateDeny, "recursive rm of /", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"recursive rm of /"}}` + "\n"},
		{"tool asks the human", "PreToolUse", preToolPayload, schemas.GateAsk, "reads .env", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"reads .env"}}` + "\n"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g.set(func(_ schemas.GateRequest, d *schemas.GateDecision) []byte {
				d.Decision, d.Reason = tc.decision, tc.reason
				return nil
			})
			r := runHook(t, f.env, hookJSON("sess-g", tc.event, tc.extra))
			if r.code != 0 || r.stdout != tc.wantStdout {
				t.Fatalf("code=%d stdout=%q stderr=%q, want stdout %q", r.code, r.stdout, r.stderr, tc.wantStdout)
			}
			g.mu.Lock()
			req := g.requests[len(g.requests)-1]
			g.mu.Unlock()
			if len(req.Nonce) != 32 || req.EventID == "" || req.SessionID != "sess-g" || req.HookEvent != tc.event || !strings.Contains(string(req.Payload), tc.event) {
				t.Fatalf("request %+v", req)
			}
			// The hook recorded the decision it acted on.
			recs := f.decisions(t)
			if len(recs) != i+1 || recs[i].Decision.Decision != tc.decision || recs[i].Decision.Source != schemas.SourceGatekeeper || recs[i].Signed == nil {
				t.Fatalf("decision records: %+v", recs)
			}
			// The record alone verifies: its decision is what was signed.
			trusted, err := decision.LoadKeys(f.keysPath())
			if err != nil {
				t.Fatal(err)
			}
			if err := trusted.VerifyRecord(recs[i]); err != nil {
				t.Fatalf("recorded decision does not verify: %v", err)
			}
		})
	}
	// Nonces are fresh.
	seen := map[string]bool{}
	for _, r := range g.requests {
		if seen[r.Nonce] {
			t.Fatalf("nonce %s reused", r.Nonce)
		}
		seen[r.Nonce] = true
	}
}

func TestSpoofedRepliesAreBlocked(t *testing.T) {
	f, g := gateSetup(t)
	// Capture a genuine signed allow to replay later.
	g.set(nil)
	if r := runHook(t, f.env, hookJSON("sess-s", "Stop", stopPayload)); r.code != 0 || r.stdout != "" {
		t.Fatalf("genuine allow: %+v", r)
	}
	g.mu.Lock()
	replay := g.last
	g.mu.Unlock()
	tests := []struct {
		name   string
		answer func(req schemas.GateRequest, d *schemas.GateDecision) []byte
		want   string
	}{
		{"unsigned", func(_ schemas.GateRequest, d *schemas.GateDecision) []byte {
			p, _ := json.Marshal(d)
			return p
		}, "payload type"},
		{"signed by an unknown key", func(_ schemas.GateRequest, d *schemas.GateDecision) []byte {
			return g.sign(g.rogue, *d)
		}, "does not verify"},
		{"replayed old signed allow", func(schemas.GateRequest, *schemas.GateDecision) []byte { return replay }, "nonce mismatch"},
		{"expired", func(_ schemas.GateRequest, d *schemas.GateDecision) []byte {
			d.ExpiresAt = time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
			return nil
		}, "expired"},
		{"for another session", func(_ schemas.GateRequest, d *schemas.GateDecision) []byte {
			d.SessionID = "other"
			return nil
		}, "session"},
		{"malformed", func(schemas.GateRequest, *schemas.GateDecision) []byte { return []byte("allow") }, "not a signed decision"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g.set(tc.answer)
			before := len(f.decisions(t))
			r := runHook(t, f.env, hookJSON("sess-s", "Stop", stopPayload))
			if r.code != 0 || !strings.HasPrefix(r.stdout, `{"decision":"block"`) || !strings.Contains(r.stdout, "fail closed") || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("code=%d stdout=%q stderr=%q, want a block naming %q", r.code, r.stdout, r.stderr, tc.want)
			}
			recs := f.decisions(t)
			if len(recs) != before+1 || recs[len(recs)-1].Decision.Source != schemas.SourceHook || !strings.Contains(recs[len(recs)-1].Error, tc.want) {
				t.Fatalf("fallback not recorded: %+v", recs[before:])
			}
		})
	}
}

func TestGateOutagesFailClosedWithinTheDeadline(t *testing.T) {
	f, g := gateSetup(t)
	deadline := 1500 * time.Millisecond
	check := func(t *testing.T, event, extra, want string) {
		t.Helper()
		start := time.Now()
		r := runHook(t, f.env, hookJSON("sess-o", event, extra))
		took := time.Since(start)
		if took > deadline+time.Second {
			t.Fatalf("answered after %s (deadline %s)", took, deadline)
		}
		wantOut := `{"decision":"block"`
		if event == "PreToolUse" {
			wantOut = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"`
		}
		if r.code != 0 || !strings.HasPrefix(r.stdout, wantOut) || !strings.Contains(r.stderr, want) {
			t.Fatalf("code=%d stdout=%q stderr=%q, want %s naming %q", r.code, r.stdout, r.stderr, wantOut, want)
		}
	}
	t.Run("gatekeeper slower than the deadline", func(t *testing.T) {
		g.set(func(_ schemas.GateRequest, d *schemas.GateDecision) []byte {
			time.Sleep(deadline + 500*time.Millisecond)
			return nil
		})
		check(t, "Stop", stopPayload, "no answer from the gatekeeper")
		check(t, "PreToolUse", preToolPayload, "no answer from the gatekeeper")
	})
	t.Run("no gatekeeper", func(t *testing.T) {
		g.nc.Close()
		waitNoResponders(t, f.env["CLAIMCHECK_NATS_URL"])
		check(t, "Stop", stopPayload, "no gatekeeper is running")
		check(t, "PreToolUse", preToolPayload, "no gatekeeper is running")
	})
	t.Run("missing trusted key set", func(t *testing.T) {
		env := maps(f.env, "CLAIMCHECK_HOOK_GATE_KEYS", filepath.Join(f.dir, "nope.json"))
		r := runHook(t, env, hookJSON("sess-o", "Stop", stopPayload))
		if !strings.HasPrefix(r.stdout, `{"decision":"block"`) || !strings.Contains(r.stderr, "no trusted key set") {
			t.Fatalf("%+v", r)
		}
	})
	recs := f.decisions(t)
	if len(recs) < 5 {
		t.Fatalf("%d fallback decisions recorded, want 5", len(recs))
	}
	for _, r := range recs {
		if r.Decision.Source != schemas.SourceHook || r.Decision.Decision == schemas.GateAllow {
			t.Fatalf("record %+v", r.Decision)
		}
	}
}

// waitNoResponders returns once the server has dropped a closed
// gatekeeper's subscriptions: it notices the closed connection on its
// own schedule, and a request that arrives before then is delivered to
// the dead subscriber and times out instead of getting "no responders".
func waitNoResponders(t *testing.T, url string) {
	t.Helper()
	nc, _ := natstest.Connect(t, url)
	defer nc.Close()
	for _, kind := range []string{subject.GateStop, subject.GatePreTool} {
		give := time.Now().Add(10 * time.Second)
		for {
			_, err := nc.Request(subject.Gate("probe", kind), nil, 200*time.Millisecond)
			if errors.Is(err, nats.ErrNoResponders) {
				break
			}
			if time.Now().After(give) {
				t.Fatalf("the server still routes %s requests to the closed gatekeeper: %v", kind, err)
			}
		}
	}
}

// The gate request goes out right behind the event, before the event's
// acknowledgement: an allow that arrives for an event JetStream then
// refuses is not honoured.
func TestAllowForAnUnrecordedEventIsNotHonoured(t *testing.T) {
	f, g := gateSetup(t)
	st, err := f.js.Stream(t.Context(), stream.Intake)
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.MaxMsgSize = 3000 // the event below is larger; the hook's decision record is not
	if _, err := f.js.UpdateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	big := `,"tool_name":"Bash","tool_input":{"command":"go test ./... # ` + strings.Repeat("x", 4000) + `"},"tool_use_id":"toolu_2"`
	r := runHook(t, f.env, hookJSON("sess-r", "PreToolUse", big))
	if r.code != 0 || !strings.Contains(r.stdout, `"permissionDecision":"deny"`) || !strings.Contains(r.stderr, "refused the event") {
		t.Fatalf("code=%d stdout=%q stderr=%q, want a fail-closed deny naming the refusal", r.code, r.stdout, r.stderr)
	}
	// The request was sent before the refusal came back (it may reach the
	// stub's goroutine a moment after the hook exits).
	natstest.Eventually(t, 2*time.Second, func() error {
		g.mu.Lock()
		defer g.mu.Unlock()
		if len(g.requests) != 1 {
			return fmt.Errorf("the gatekeeper was asked %d times, want once (the request rides behind the event)", len(g.requests))
		}
		return nil
	})
	var denied bool
	for _, rec := range f.decisions(t) {
		if rec.Decision.Decision == schemas.GateAllow {
			t.Fatalf("an allow was recorded by the hook: %+v", rec.Decision)
		}
		denied = denied || rec.Decision.Source == schemas.SourceHook && rec.Decision.Decision == schemas.GateDeny
	}
	if !denied {
		t.Fatal("the hook's fail-closed deny was not recorded")
	}
}

func TestNATSDownBlocksAndSpoolsTheDecision(t *testing.T) {
	f := setup(t, false)
	delete(f.env, "CLAIMCHECK_HOOK_GATE")
	r := runHook(t, f.env, hookJSON("sess-d", "Stop", stopPayload))
	if r.code != 0 || !strings.HasPrefix(r.stdout, `{"decision":"block"`) || !strings.Contains(r.stderr, "NATS is unreachable") {
		t.Fatalf("%+v", r)
	}
	entries, _ := (&spool{dir: filepath.Join(f.dir, "state", "spool")}).list()
	if len(entries) != 3 { // the Stop event, the hook's decision and the crash record
		t.Fatalf("%d spooled, want 3", len(entries))
	}
	// Fail-open for Stop: allowed, the user is told, and it is recorded too.
	env := maps(f.env, "CLAIMCHECK_HOOK_FAIL_OPEN", "Stop")
	r = runHook(t, env, hookJSON("sess-d", "Stop", stopPayload))
	if r.code != 0 || !strings.HasPrefix(r.stdout, `{"systemMessage":`) || !strings.Contains(r.stdout, "fail-open") {
		t.Fatalf("fail-open: %+v", r)
	}
	if entries, _ := (&spool{dir: filepath.Join(f.dir, "state", "spool")}).list(); len(entries) != 6 {
		t.Fatalf("%d spooled, want 6", len(entries))
	}
	// PreToolUse is still denied.
	r = runHook(t, env, hookJSON("sess-d", "PreToolUse", preToolPayload))
	if !strings.Contains(r.stdout, `"permissionDecision":"deny"`) {
		t.Fatalf("pretool: %+v", r)
	}
}

func TestBadGateInputFailsClosed(t *testing.T) {
	f := setup(t, true)
	delete(f.env, "CLAIMCHECK_HOOK_GATE")
	// A Stop payload with invalid UTF-8 is recorded as rejected and blocked.
	r := runHook(t, f.env, `{"session_id":"sess-b","hook_event_name":"Stop","last_assistant_message":"`+"\xff"+`"}`)
	if r.code != 0 || !strings.HasPrefix(r.stdout, `{"decision":"block"`) || !strings.Contains(r.stdout, "rejected") {
		t.Fatalf("%+v", r)
	}
	var c Config
	if err := c.setFailOpen("Stop,Notification"); err == nil || !strings.Contains(err.Error(), "Notification") {
		t.Fatalf("fail-open for a non-gated event accepted: %v", err)
	}
}

func maps(m map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// cutProxy forwards TCP connections to target; on the first connection it
// drops both sides as soon as the client sends bytes containing cut,
// without forwarding them. Later connections pass untouched.
type cutProxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns int
	cuts  int
}

func startCutProxy(t *testing.T, target, cut string) *cutProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{l: l}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns++
			first := p.conns == 1
			p.mu.Unlock()
			go p.serve(c, target, cut, first)
		}
	}()
	return p
}

func (p *cutProxy) serve(c net.Conn, target, cut string, first bool) {
	defer func() { _ = c.Close() }()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer func() { _ = s.Close() }()
	go func() { _, _ = io.Copy(c, s) }()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if first && bytes.Contains(buf[:n], []byte(cut)) {
				p.mu.Lock()
				p.cuts++
				p.mu.Unlock()
				return // both sides closed, the chunk never forwarded
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// The decision record goes out on the connection kept from the event and
// the gate request; when that connection dies under the record's publish,
// the hook publishes it again on a new connection instead of spooling it.
func TestKeptConnectionLostUnderTheRecordIsReplaced(t *testing.T) {
	f, g := gateSetup(t)
	target := strings.TrimPrefix(f.env["CLAIMCHECK_NATS_URL"], "nats://")
	p := startCutProxy(t, target, `"`+schemas.GateDecisionEvent+`"`)
	f.env["CLAIMCHECK_HOOK_GATE_KEYS"] = f.keysPath() // the server's keys, reached through the proxy
	f.env["CLAIMCHECK_NATS_URL"] = "nats://" + p.l.Addr().String()
	g.set(func(_ schemas.GateRequest, d *schemas.GateDecision) []byte {
		d.Decision, d.Reason = schemas.GateDeny, "recursive rm of /"
		return nil
	})
	r := runHook(t, f.env, hookJSON("sess-cut", "PreToolUse", preToolPayload))
	if r.code != 0 || !strings.Contains(r.stdout, `"permissionDecisionReason":"recursive rm of /"`) {
		t.Fatalf("%+v", r)
	}
	p.mu.Lock()
	conns, cuts := p.conns, p.cuts
	p.mu.Unlock()
	if cuts != 1 || conns != 2 {
		t.Fatalf("proxy saw %d connections and cut %d, want the first cut under the record and one more", conns, cuts)
	}
	if len(g.requests) != 1 {
		t.Fatalf("%d gate requests, want 1", len(g.requests))
	}
	if recs := f.decisions(t); len(recs) != 1 || recs[0].Decision.Decision != schemas.GateDeny || recs[0].Signed == nil {
		t.Fatalf("decision records in INTAKE: %+v, want the gatekeeper's deny", recs)
	}
	if entries, _ := (&spool{dir: filepath.Join(f.dir, "state", "spool")}).list(); len(entries) != 0 {
		t.Fatalf("%d spooled, want none", len(entries))
	}
}

// Stops the hook must fail closed on count towards the cap like the
// gatekeeper's blocks: at the cap the stop is let through marked NOT
// verified (and recorded so), and a prompt starts the count again.
func TestFailClosedStopsCountTowardsTheCap(t *testing.T) {
	f, g := gateSetup(t)
	f.env["CLAIMCHECK_HOOK_STOP_BLOCK_CAP"] = "3"
	stop := func() result { return runHook(t, f.env, hookJSON("sess-cap", "Stop", stopPayload)) }
	isBlock := func(r result) bool { return strings.HasPrefix(r.stdout, `{"decision":"block"`) }
	// The gatekeeper blocks once and says so.
	g.set(func(_ schemas.GateRequest, d *schemas.GateDecision) []byte {
		d.Decision, d.Reason, d.ConsecutiveBlocks = schemas.GateBlock, "no evidence", 1
		return nil
	})
	if r := stop(); !isBlock(r) || !strings.Contains(r.stdout, "no evidence") {
		t.Fatalf("the gatekeeper's block: %+v", r)
	}
	// Then it is gone: the hook fails closed, counting on.
	g.nc.Close()
	if r := stop(); !isBlock(r) || !strings.Contains(r.stdout, "fail closed") {
		t.Fatalf("second stop, gate gone: %+v", r)
	}
	r := stop()
	if isBlock(r) || !strings.Contains(r.stdout, `"systemMessage":"claimcheck: 2 consecutive stops were blocked and its gate cannot be reached`) ||
		!strings.Contains(r.stdout, "NOT verified") {
		t.Fatalf("third stop, at the cap of 3: %+v", r)
	}
	if r := stop(); !isBlock(r) {
		t.Fatalf("after the cap the count starts again: %+v", r)
	}
	// A prompt starts the turn again: two more blocks before the cap.
	if r := runHook(t, f.env, hookJSON("sess-cap", "UserPromptSubmit", `,"prompt":"go on"`)); r.code != 0 {
		t.Fatalf("prompt: %+v", r)
	}
	for i := range 2 {
		if r := stop(); !isBlock(r) {
			t.Fatalf("stop %d after the prompt: %+v", i+1, r)
		}
	}
	if r := stop(); isBlock(r) {
		t.Fatalf("third stop after the prompt is at the cap: %+v", r)
	}
	// The capped stop is recorded (spooled: NATS is up, the gatekeeper is not).
	capped := 0
	for _, rec := range f.decisions(t) {
		if rec.Decision.Rule == "hook.block_cap" && rec.Decision.Capped && rec.Decision.Decision == schemas.GateAllow {
			capped++
		}
	}
	if capped != 2 {
		t.Fatalf("%d capped stops recorded, want 2", capped)
	}
}

// Two claimcheck servers on one host keep separate trusted key sets: the
// other server's key set neither replaces this server's nor is trusted for
// this server's decisions.
func TestKeySetsPerServer(t *testing.T) {
	f, g := gateSetup(t)
	other := "nats://127.0.0.1:1"
	otherPath := decision.KeySetPath(filepath.Join(f.dir, "state"), other)
	if otherPath == f.keysPath() {
		t.Fatalf("two servers share %s", otherPath)
	}
	_, otherKeys := newKeys(t, filepath.Join(f.dir, "other"))
	raw, _ := json.Marshal(otherKeys)
	if err := os.WriteFile(otherPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	g.set(nil)
	if r := runHook(t, f.env, hookJSON("sess-k", "Stop", stopPayload)); r.code != 0 || r.stdout != "" {
		t.Fatalf("this server's signed allow after the other server wrote its keys: %+v", r)
	}
	// A decision signed with a key only the other server's set holds is
	// not trusted here.
	g.set(func(_ schemas.GateRequest, d *schemas.GateDecision) []byte { return g.sign(g.rogue, *d) })
	raw, _ = json.Marshal(append(otherKeys, g.rogueKeys...))
	if err := os.WriteFile(otherPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	r := runHook(t, f.env, hookJSON("sess-k", "Stop", stopPayload))
	if !strings.HasPrefix(r.stdout, `{"decision":"block"`) || !strings.Contains(r.stderr, "does not verify") {
		t.Fatalf("a key trusted only for another server was accepted: %+v", r)
	}
}
