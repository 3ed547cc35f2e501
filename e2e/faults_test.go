package e2e

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

	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/envelope"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// chainEvents reads a chain and returns its event ids in order; it fails the
// test if the chain does not verify.
func chainEvents(t *testing.T, js jetstream.JetStream, c string) []string {
	t.Helper()
	var raws [][]byte
	var ids []string
	if err := ledger.NewReader(js, "").Walk(context.Background(), c, 0, func(s ledger.Stored) error {
		raws = append(raws, s.Raw)
		var e schemas.Entry
		if err := json.Unmarshal(s.Raw, &e); err != nil {
			return err
		}
		ids = append(ids, e.EventID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := chain.Verify(c, raws); err != nil {
		t.Fatalf("chain %s: %v", c, err)
	}
	return ids
}

// checkChained checks that each session's chain verifies and holds exactly
// the event ids of want, in order.
func checkChained(t *testing.T, js jetstream.JetStream, want map[string][]string) {
	t.Helper()
	for sess, ids := range want {
		got := chainEvents(t, js, sess)
		if len(got) != len(ids) {
			t.Fatalf("%s: %d entries, want %d (each acknowledged event exactly once)", sess, len(got), len(ids))
		}
		for i := range ids {
			if got[i] != ids[i] {
				t.Fatalf("%s position %d: %s, want %s (order)", sess, i+1, got[i], ids[i])
			}
		}
	}
}

// bashEvent is the intake message of a PostToolUse event of session sess
// (its seq-th), as claimcheck-hook on host publishes it; it returns the
// event id.
func bashEvent(gen *id.Generator, host, sess string, seq, i int) (*nats.Msg, string, error) {
	eid, err := gen.New()
	if err != nil {
		return nil, "", err
	}
	raw := fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo %d"}}`, sess, i)
	env, err := envelope.Event(eid, sess, "PostToolUse", uint64(seq), time.Now(), envelope.Source{Host: host, AgentType: "claude-code", AgentID: "a"}, []byte(raw))
	if err != nil {
		return nil, "", err
	}
	tok, err := id.HostToken(host)
	if err != nil {
		return nil, "", err
	}
	m := nats.NewMsg(subject.Intake(subject.OriginHook, tok, sess, "PostToolUse"))
	m.Data = env
	m.Header.Set(jetstream.MsgIDHeader, eid)
	return m, eid, nil
}

// TestIngestKilledMidStream keeps publishing acknowledged events while the
// ingest process is killed with SIGKILL again and again mid-stream, then
// checks that every acknowledged event is chained exactly once, in order.
func TestIngestKilledMidStream(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	opts := stream.DefaultOptions()
	natstest.Bootstrap(t, js, &opts)
	const sessions, total = 25, 6000
	ctx := context.Background()
	want := map[string][]string{}
	produced := make(chan error, 1)
	go func() {
		gen := id.NewGenerator(clock.Real{}, nil)
		for i := range total {
			sess := fmt.Sprintf("kill-%02d", i%sessions)
			m, eid, err := bashEvent(gen, "h", sess, len(want[sess])+1, i)
			if err != nil {
				produced <- err
				return
			}
			if _, err := js.PublishMsg(ctx, m); err != nil { // acknowledged: must be chained
				produced <- err
				return
			}
			want[sess] = append(want[sess], eid)
		}
		produced <- nil
	}()
	chained := func() int {
		n := 0
		for i := range sessions {
			if last, err := ledger.NewReader(js, "").Last(ctx, fmt.Sprintf("kill-%02d", i)); err == nil {
				var e schemas.Entry
				_ = json.Unmarshal(last.Raw, &e)
				n += int(e.N)
			}
		}
		return n
	}
	env := []string{"CLAIMCHECK_NATS_URL=" + s.ClientURL(), "CLAIMCHECK_HTTP_LISTEN=127.0.0.1:0", "CLAIMCHECK_INGEST_BATCH_SIZE=40"}
	kills := 0
	for progress := 0; kills < 5; kills++ {
		p := start(t, env, "ingest")
		natstest.Eventually(t, 60*time.Second, func() error {
			if n := chained(); n <= progress {
				return fmt.Errorf("no progress beyond %d chained", progress)
			}
			return nil
		})
		progress = chained()
		if err := p.Cmd.Process.Kill(); err != nil { // SIGKILL mid-stream
			t.Fatal(err)
		}
		p.Kill()
		if progress >= total {
			break
		}
	}
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	if kills < 3 {
		t.Fatalf("only %d kills landed before ingest finished; make the workload larger", kills)
	}
	p := start(t, env, "ingest")
	natstest.Eventually(t, 120*time.Second, func() error {
		if n := chained(); n < total {
			return fmt.Errorf("%d of %d chained", n, total)
		}
		return nil
	})
	p.WaitStderr(t, 30*time.Second, "ingest running")
	p.Stop(t)
	checkChained(t, js, want)
	t.Logf("%d SIGKILLs mid-stream; %d events in %d sessions chained exactly once, in order", kills, total, sessions)
}

// TestHookSpoolsThroughNATSOutage stops claimcheck, records events while it
// is down (they spool), waits past the dedupe window, brings it back, and
// checks that every event lands exactly once and in order — including an
// event whose first delivery was acknowledged but whose acknowledgement the
// hook never saw, so it was spooled too.
func TestHookSpoolsThroughNATSOutage(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "claimcheck.yaml")
	if err := os.WriteFile(cfg, []byte("streams:\n  duplicate_window: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", natstest.FreePort(t))
	data := filepath.Join(dir, "data")
	hookDir := filepath.Join(dir, "hook")
	p, url := up(t, data, listen, "--config", cfg)
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + hookDir, "CLAIMCHECK_HOOK_GATE=false", "CLAIMCHECK_HOOK_RETRY_AFTER=0s"}
	const session = "outage-session"
	ev := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"step %d"}}`, session, i))
	}
	var sent []string
	for i := range 3 {
		if r := runBin(t, env, ev(i), "claimcheck-hook"); r.code != 0 {
			t.Fatalf("before outage: %+v", r)
		}
		sent = append(sent, fmt.Sprintf("step %d", i))
	}
	before, _ := show(t, url, session, 3)
	p.Stop(t)

	// NATS is down: events spool, the hook still exits 0 and prints nothing.
	for i := 3; i < 8; i++ {
		r := runBin(t, env, ev(i), "claimcheck-hook")
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("during outage: %+v", r)
		}
		sent = append(sent, fmt.Sprintf("step %d", i))
	}
	// The acknowledgement of event 2 was lost: the hook spooled it although
	// it had landed. Simulate by putting a copy of its envelope in the spool.
	spool := filepath.Join(hookDir, "spool")
	files, _ := filepath.Glob(filepath.Join(spool, "*.evt"))
	if len(files) != 5 {
		t.Fatalf("%d spool files, want 5", len(files))
	}
	dupEnv, err := envelope.Event(before[2].EventID, session, "PostToolUse", 3, time.Now(), envelope.Source{Host: "h", AgentType: "claude-code", AgentID: "a"}, ev(2))
	if err != nil {
		t.Fatal(err)
	}
	dupName := fmt.Sprintf("%016d.%s.%s.PostToolUse.evt", 0, before[2].EventID, session)
	if err := os.WriteFile(filepath.Join(spool, dupName), dupEnv, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // let the 1s dedupe window pass
	p2, url2 := up(t, data, listen, "--config", cfg)
	if url2 != url {
		t.Fatalf("restarted on %s, want %s", url2, url)
	}
	// The next invocation flushes the spool first, in order, then itself.
	if r := runBin(t, env, ev(8), "claimcheck-hook"); r.code != 0 {
		t.Fatalf("after outage: %+v", r)
	}
	sent = append(sent, "step 8")
	entries, _ := show(t, url, session, len(sent))
	if len(entries) != len(sent) {
		t.Fatalf("%d entries, want %d (exactly once)", len(entries), len(sent))
	}
	for i, e := range entries {
		if !strings.Contains(e.Payload, sent[i]) {
			t.Fatalf("position %d holds %q, want %q (order)", i+1, e.Payload, sent[i])
		}
	}
	if files, _ := filepath.Glob(filepath.Join(spool, "*.evt")); len(files) != 0 {
		t.Fatalf("spool not empty: %v", files)
	}
	if r := runBin(t, env, nil, "claimcheck", "ledger", "verify"); r.code != 0 {
		t.Fatalf("verify: %+v", r)
	}
	p2.Stop(t)
}

// TestOfflineEditOfTheStoreIsNotServed stops claimcheck and changes bytes
// inside the ledger's block file on disk. The store is encrypted at rest:
// the entries' text is not there to find and rewrite, and a changed byte
// fails authentication when NATS reads the block, so NATS drops what no
// longer decrypts instead of serving altered entries. Every entry served
// is as recorded; an entry dropped from the middle of the chain is reported
// by `ledger verify` with its position. A dropped tail is the chain's known
// blind spot (a chain's last entries removed: docs/security.md, "Known
// limits"). An edit through NATS, by whoever can write the stream, is
// reported with its position (pkg/chain and cmd/claimcheck
// TestLedgerVerifyDetectsTamperedCopies).
func TestOfflineEditOfTheStoreIsNotServed(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	listen := fmt.Sprintf("127.0.0.1:%d", natstest.FreePort(t))
	p, url := up(t, data, listen)
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + filepath.Join(dir, "hook"), "CLAIMCHECK_HOOK_GATE=false"}
	for i := range 5 {
		in := fmt.Sprintf(`{"session_id":"edited","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"deploy v%d"}}`, i)
		if r := runBin(t, env, []byte(in), "claimcheck-hook"); r.code != 0 {
			t.Fatalf("hook: %+v", r)
		}
	}
	show(t, url, "edited", 5)
	if r := runBin(t, env, nil, "claimcheck", "ledger", "verify"); r.code != 0 {
		t.Fatalf("verify before edit: %+v", r)
	}
	p.Stop(t)
	noCleartext(t, data, "deploy v2")
	blocks, _ := filepath.Glob(filepath.Join(data, "nats", "jetstream", "*", "streams", "LEDGER", "msgs", "*.blk"))
	if len(blocks) == 0 {
		t.Fatal("no ledger block files")
	}
	for _, b := range blocks {
		buf, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		buf[len(buf)/2] ^= 0xff
		if err := os.WriteFile(b, buf, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, url = up(t, data, listen)
	var entries []shownEntry
	r := runBin(t, []string{"CLAIMCHECK_NATS_URL=" + url}, nil, "claimcheck", "ledger", "show", "--session", "edited", "--json")
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e shownEntry
		if line != "" && json.Unmarshal([]byte(line), &e) == nil {
			entries = append(entries, e)
		}
	}
	if len(entries) >= 5 {
		t.Fatalf("all %d entries are still served after their block was damaged", len(entries))
	}
	gap := uint64(0) // the first position missing before a served one
	for i, e := range entries {
		if want := fmt.Sprintf("deploy v%d", e.N-1); !strings.Contains(e.Payload, want) {
			t.Fatalf("entry n=%d after the damage holds %q, want %q: an altered entry was served", e.N, e.Payload, want)
		}
		if gap == 0 && e.N != uint64(i+1) {
			gap = uint64(i + 1)
		}
	}
	r = runBin(t, []string{"CLAIMCHECK_NATS_URL=" + url}, nil, "claimcheck", "ledger", "verify")
	switch {
	case gap > 0 && (r.code != 1 || !strings.Contains(r.stdout, fmt.Sprintf("FAIL session edited position %d", gap))):
		t.Fatalf("an entry dropped from the middle of the chain (n=%d) is not reported: exit %d\n%s%s", gap, r.code, r.stdout, r.stderr)
	case gap == 0 && r.code != 0:
		t.Fatalf("verify of what remains: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
