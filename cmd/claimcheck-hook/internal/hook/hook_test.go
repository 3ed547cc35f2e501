package hook

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

type result struct {
	code           int
	stdout, stderr string
}

// runHook runs the hook in-process with the given stdin and environment.
func runHook(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string { return env[k] }
	code := Main(context.Background(), args, getenv, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

type fixture struct {
	env map[string]string
	js  jetstream.JetStream
	dir string
}

func setup(t *testing.T, withServer bool) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir()}
	f.env = map[string]string{
		"HOME":                      f.dir,
		"CLAIMCHECK_HOOK_STATE_DIR": filepath.Join(f.dir, "state"),
		"CLAIMCHECK_HOOK_HOST":      "testhost",
		"CLAIMCHECK_HOOK_AGENT_ID":  "tester@testhost",
		"CLAIMCHECK_NATS_URL":       fmt.Sprintf("nats://127.0.0.1:%d", natstest.FreePort(t)),
		"CLAIMCHECK_HOOK_DEADLINE":  "2s",
		"CLAIMCHECK_HOOK_GATE":      "false", // recording tests; gate_test.go covers the gate
	}
	if withServer {
		s := natstest.RunServer(t)
		_, f.js = natstest.Connect(t, s.ClientURL())
		natstest.Bootstrap(t, f.js, nil)
		f.env["CLAIMCHECK_NATS_URL"] = s.ClientURL()
	}
	return f
}

// intake returns the envelopes stored in INTAKE, in order.
func (f *fixture) intake(t *testing.T) []schemas.Envelope {
	t.Helper()
	st, err := f.js.Stream(t.Context(), stream.Intake)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(t.Context())
	var out []schemas.Envelope
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(t.Context(), seq)
		if err != nil {
			continue
		}
		var e schemas.Envelope
		if err := json.Unmarshal(m.Data, &e); err != nil {
			t.Fatalf("stored envelope %d: %v", seq, err)
		}
		if m.Header.Get(jetstream.MsgIDHeader) != e.EventID {
			t.Fatalf("Nats-Msg-Id %q != event id %q", m.Header.Get(jetstream.MsgIDHeader), e.EventID)
		}
		out = append(out, e)
	}
	return out
}

func hookJSON(session, event string, extra string) string {
	return fmt.Sprintf(`{"session_id":%q,"transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":%q%s}`, session, event, extra)
}

func TestRecordsEventsSilently(t *testing.T) {
	f := setup(t, true)
	v, err := validation.New()
	if err != nil {
		t.Fatal(err)
	}
	raw := hookJSON("sess-1", "PostToolUse", `,"tool_name":"Bash","tool_input":{"command":"go test ./..."},"unknown_future_field":{"x":[1,2]}`)
	for i := range 3 {
		r := runHook(t, f.env, "\n  "+raw+"\n")
		if r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("run %d: code=%d stdout=%q stderr=%q", i, r.code, r.stdout, r.stderr)
		}
	}
	// An unknown event is recorded, not refused.
	if r := runHook(t, f.env, hookJSON("sess-1", "SomeFutureEvent", "")); r.code != 0 {
		t.Fatalf("unknown event: %+v", r)
	}
	envs := f.intake(t)
	if len(envs) != 4 {
		t.Fatalf("INTAKE holds %d envelopes, want 4", len(envs))
	}
	for i, e := range envs {
		if e.ClientSeq != uint64(i+1) || e.Host != "testhost" || e.AgentID != "tester@testhost" || e.AgentType != "claude-code" || e.SessionID != "sess-1" {
			t.Errorf("envelope %d: %+v", i, e)
		}
		enc, _ := json.Marshal(e)
		if err := v.Validate(schemas.EventV1, enc); err != nil {
			t.Errorf("envelope %d invalid: %v", i, err)
		}
	}
	// The payload travels verbatim and its digest is over the trimmed bytes.
	if string(envs[0].Payload) != raw || envs[0].PayloadDigest != digest.SHA256([]byte(raw)) {
		t.Fatalf("payload not carried verbatim: %s", envs[0].Payload)
	}
	if envs[3].HookEvent != "SomeFutureEvent" {
		t.Fatalf("unknown event: %+v", envs[3])
	}
}

func TestRejectsBadInputAndRecordsIt(t *testing.T) {
	f := setup(t, true)
	f.env["CLAIMCHECK_HOOK_MAX_INPUT_BYTES"] = "2048"
	big := hookJSON("s", "PostToolUse", `,"x":"`+strings.Repeat("a", 4000)+`"`)
	tests := []struct {
		name, in, wantErr string
	}{
		{"oversized", big, "too large"},
		{"malformed", `{"session_id":"s","hook_event_name":`, "truncated"},
		{"not json", `hello`, "invalid character"},
		{"duplicate keys", `{"session_id":"a","session_id":"b","hook_event_name":"Stop"}`, "duplicate"},
		{"invalid utf8", "{\"session_id\":\"s\",\"hook_event_name\":\"Stop\",\"x\":\"\xff\"}", "UTF-8"},
		{"missing session", `{"hook_event_name":"Stop"}`, "session_id"},
		{"traversal session", hookJSON("../../etc/passwd", "Stop", ""), "invalid session id"},
		{"wildcard session", hookJSON("a.*.>", "Stop", ""), "invalid session id"},
		{"control chars", hookJSON("a\nb", "Stop", ""), "invalid session id"},
		{"long session", hookJSON(strings.Repeat("x", 300), "Stop", ""), "invalid session id"},
		{"empty", "", "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHook(t, f.env, tt.in)
			if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, tt.wantErr) || !strings.Contains(r.stderr, "recorded as event") {
				t.Fatalf("code=%d stdout=%q stderr=%q, want exit 1 naming %q", r.code, r.stdout, r.stderr, tt.wantErr)
			}
		})
	}
	envs := f.intake(t)
	if len(envs) != len(tests) {
		t.Fatalf("%d rejected records in INTAKE, want %d", len(envs), len(tests))
	}
	for _, e := range envs {
		if e.Kind != schemas.KindRejected || e.Rejected == nil || e.Rejected.Reason == "" {
			t.Fatalf("not a rejected record: %+v", e)
		}
	}
	if envs[0].PayloadSize < 4000 || envs[0].PayloadDigest != digest.SHA256([]byte(big)) {
		t.Fatalf("oversized input: size %d digest %s, want the digest of the whole input", envs[0].PayloadSize, envs[0].PayloadDigest)
	}
	// Nothing hostile reached the file system.
	_ = filepath.WalkDir(f.dir, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(p, "passwd") || strings.Contains(p, "..") || strings.Contains(p, "*") {
			t.Errorf("hostile id reached a path: %s", p)
		}
		return nil
	})
	// And a good event after all that still lands.
	if r := runHook(t, f.env, hookJSON("s", "Stop", "")); r.code != 0 {
		t.Fatalf("good event: %+v", r)
	}
}

func TestSpoolsWhileNATSIsDownAndFlushesInOrder(t *testing.T) {
	f := setup(t, false)
	f.env["CLAIMCHECK_HOOK_RETRY_AFTER"] = "0s"
	dir := t.TempDir()
	port := natstest.FreePort(t)
	f.env["CLAIMCHECK_NATS_URL"] = fmt.Sprintf("nats://127.0.0.1:%d", port)
	var sent []string
	for i := range 5 {
		sess := fmt.Sprintf("s%d", i%2)
		r := runHook(t, f.env, hookJSON(sess, "PostToolUse", fmt.Sprintf(`,"i":%d`, i)))
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("spooling run %d: %+v", i, r)
		}
		sent = append(sent, fmt.Sprintf(`"i":%d`, i))
	}
	spoolDir := filepath.Join(f.env["CLAIMCHECK_HOOK_STATE_DIR"], "spool")
	files, _ := filepath.Glob(filepath.Join(spoolDir, "*.evt"))
	if len(files) != 5 {
		t.Fatalf("%d spool files, want 5", len(files))
	}
	for _, p := range append(files, spoolDir, f.env["CLAIMCHECK_HOOK_STATE_DIR"]) {
		fi, _ := os.Stat(p)
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is accessible to others: %v", p, fi.Mode())
		}
	}
	// NATS comes up; the next invocation flushes the spool first, then itself.
	s := natstest.RunServerAt(t, dir, fmt.Sprintf("127.0.0.1:%d", port))
	_, f.js = natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, f.js, nil)
	if r := runHook(t, f.env, hookJSON("s0", "Stop", `,"i":5`)); r.code != 0 {
		t.Fatalf("flushing run: %+v", r)
	}
	sent = append(sent, `"i":5`)
	envs := f.intake(t)
	if len(envs) != 6 {
		t.Fatalf("INTAKE holds %d events, want 6", len(envs))
	}
	for i, e := range envs {
		if !strings.Contains(string(e.Payload), sent[i]) {
			t.Fatalf("position %d holds %s, want %s (order)", i, e.Payload, sent[i])
		}
	}
	if files, _ := filepath.Glob(filepath.Join(spoolDir, "*.evt")); len(files) != 0 {
		t.Fatalf("spool not emptied: %v", files)
	}
	// Per-session sequences continued across the outage.
	if envs[5].ClientSeq != 4 || envs[4].ClientSeq != 3 || envs[3].ClientSeq != 2 {
		t.Fatalf("client seqs: %d %d", envs[4].ClientSeq, envs[5].ClientSeq)
	}
}

func TestRetryAfterSpoolsWithoutWaiting(t *testing.T) {
	f := setup(t, false)
	f.env["CLAIMCHECK_HOOK_RETRY_AFTER"] = "1m"
	// A server that accepts and never answers: a delivery attempt waits the
	// whole deadline.
	f.env["CLAIMCHECK_NATS_URL"] = "nats://" + natstest.SilentServer(t)
	f.env["CLAIMCHECK_HOOK_DEADLINE"] = "300ms"
	start := time.Now()
	if r := runHook(t, f.env, hookJSON("s", "Stop", "")); r.code != 0 {
		t.Fatalf("first: %+v", r)
	}
	first := time.Since(start)
	if first < 300*time.Millisecond {
		t.Fatalf("first run took %s, want it to wait for the 300ms deadline", first)
	}
	start = time.Now()
	for range 5 {
		if r := runHook(t, f.env, hookJSON("s", "Stop", "")); r.code != 0 {
			t.Fatalf("later: %+v", r)
		}
	}
	if later := time.Since(start); later > first {
		t.Fatalf("5 runs within retry-after took %s, one connecting run took %s: they should not try NATS", later, first)
	}
	files, _ := filepath.Glob(filepath.Join(f.env["CLAIMCHECK_HOOK_STATE_DIR"], "spool", "*.evt"))
	if len(files) != 6 {
		t.Fatalf("%d spooled, want 6", len(files))
	}
}

// TestSteadyHooksRetryAfterAnOutage: once NATS is back, hooks that run more
// often than retry_after deliver again within about retry_after. A run that
// spools without trying NATS must not count as a new failure: when it did
// (the torture test found it), an agent calling tools faster than once per
// retry_after spooled for ever after a one-second outage, and every gated
// call failed closed.
func TestSteadyHooksRetryAfterAnOutage(t *testing.T) {
	f := setup(t, false)
	port := natstest.FreePort(t)
	f.env["CLAIMCHECK_NATS_URL"] = fmt.Sprintf("nats://127.0.0.1:%d", port)
	f.env["CLAIMCHECK_HOOK_RETRY_AFTER"] = "500ms"
	if r := runHook(t, f.env, hookJSON("steady", "PostToolUse", "")); r.code != 0 {
		t.Fatalf("while down: %+v", r)
	}
	s := natstest.RunServerAt(t, t.TempDir(), fmt.Sprintf("127.0.0.1:%d", port))
	_, f.js = natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, f.js, nil)
	spoolDir := filepath.Join(f.env["CLAIMCHECK_HOOK_STATE_DIR"], "spool")
	sent := 1
	deadline := time.Now().Add(5 * time.Second)
	for {
		if r := runHook(t, f.env, hookJSON("steady", "PostToolUse", "")); r.code != 0 {
			t.Fatalf("run %d: %+v", sent, r)
		}
		sent++
		files, _ := filepath.Glob(filepath.Join(spoolDir, "*.evt"))
		if len(files) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("NATS has been back for 5s (retry_after 500ms), %d hook runs later %d events are still spooled: "+
				"hooks running more often than retry_after never try NATS again", sent, len(files))
		}
		time.Sleep(50 * time.Millisecond) // the agent's next tool call
	}
	if n := len(f.intake(t)); n != sent {
		t.Fatalf("INTAKE holds %d events, %d were sent", n, sent)
	}
}

func TestFlushCommand(t *testing.T) {
	f := setup(t, false)
	port := natstest.FreePort(t)
	f.env["CLAIMCHECK_NATS_URL"] = fmt.Sprintf("nats://127.0.0.1:%d", port)
	for range 3 {
		runHook(t, f.env, hookJSON("s", "Stop", ""))
	}
	if r := runHook(t, f.env, "", "flush"); r.code == 0 || !strings.Contains(r.stderr, "3 spooled events kept") {
		t.Fatalf("flush while down: %+v", r)
	}
	s := natstest.RunServerAt(t, t.TempDir(), fmt.Sprintf("127.0.0.1:%d", port))
	_, f.js = natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, f.js, nil)
	r := runHook(t, f.env, "", "flush")
	if r.code != 0 || !strings.Contains(r.stdout, "delivered 3 spooled events, 0 remain") {
		t.Fatalf("flush: %+v", r)
	}
	if n := len(f.intake(t)); n != 3 {
		t.Fatalf("INTAKE holds %d", n)
	}
}

// A clustered stream's leader that lost its followers takes a publish as
// a proposal it cannot commit: the hook's attempt times out and spools,
// and a retry of the same Nats-Msg-Id is refused with 409 "duplicate
// message id is in process". That refusal is not for good: the event
// stays spooled (not failed/) and is delivered, once, when the followers
// are back.
func TestAnEventStillInProcessStaysSpooled(t *testing.T) {
	c := natstest.StartCluster(t, 3)
	leader, down := c.IsolateLeader(t, c.Bootstrap(t), stream.Intake)
	f := setup(t, false)
	f.env["CLAIMCHECK_NATS_URL"] = leader.ClientURL()
	f.env["CLAIMCHECK_HOOK_RETRY_AFTER"] = "0s"
	state := f.env["CLAIMCHECK_HOOK_STATE_DIR"]
	if r := runHook(t, f.env, hookJSON("s", "PostToolUse", "")); r.code != 0 {
		t.Fatalf("the hook without quorum: %+v", r)
	}
	r := runHook(t, f.env, "", "flush")
	failed, _ := filepath.Glob(filepath.Join(state, "failed", "*.evt"))
	spooled, _ := filepath.Glob(filepath.Join(state, "spool", "*.evt"))
	if r.code == 0 || len(failed) != 0 || len(spooled) != 1 {
		t.Fatalf("flush while the leader holds the event uncommitted: %+v; spooled %v, failed %v", r, spooled, failed)
	}
	for _, i := range down {
		c.Restart(t, i)
	}
	natstest.Eventually(t, time.Minute, func() error {
		if r := runHook(t, f.env, "", "flush"); r.code != 0 {
			return fmt.Errorf("flush with the followers back: %+v", r)
		}
		return nil
	})
	_, f.js = natstest.Connect(t, leader.ClientURL())
	// Read until the stream answers as settled: right after the restarts
	// its leader may still be elected or catching up, and a read then
	// found no message (a CI run); a duplicate never settles to one.
	natstest.Eventually(t, 30*time.Second, func() error {
		if envs := f.intake(t); len(envs) != 1 || envs[0].HookEvent != "PostToolUse" {
			return fmt.Errorf("INTAKE holds %d events, want the one PostToolUse: %+v", len(envs), envs)
		}
		return nil
	})
	if failed, _ := filepath.Glob(filepath.Join(state, "failed", "*.evt")); len(failed) != 0 {
		t.Fatalf("failed/ holds %v", failed)
	}
}

func TestConcurrentHooksKeepDistinctSequences(t *testing.T) {
	f := setup(t, true)
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if r := runHook(t, f.env, hookJSON("par", "PostToolUse", "")); r.code != 0 {
				t.Errorf("%+v", r)
			}
		})
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for _, e := range f.intake(t) {
		if seen[e.ClientSeq] {
			t.Fatalf("client seq %d used twice", e.ClientSeq)
		}
		seen[e.ClientSeq] = true
	}
	if len(seen) != n {
		t.Fatalf("%d events, want %d", len(seen), n)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"HOME": "/h", "CLAIMCHECK_HOOK_MAX_INPUT_BYTES": "10"}, nil, "max input bytes"},
		{map[string]string{"HOME": "/h", "CLAIMCHECK_HOOK_MAX_INPUT_BYTES": "lots"}, nil, "CLAIMCHECK_HOOK_MAX_INPUT_BYTES"},
		{map[string]string{"HOME": "/h", "CLAIMCHECK_HOOK_DEADLINE": "soon"}, nil, "CLAIMCHECK_HOOK_DEADLINE"},
		{map[string]string{"HOME": "/h"}, []string{"--state-dir", "relative/dir"}, "absolute"},
		{map[string]string{}, nil, "HOME is not set"},
		{map[string]string{"HOME": "/h"}, []string{"--agent-type", "Claude Code"}, "agent type"},
		{map[string]string{"HOME": "/h"}, []string{"bogus"}, "unknown command"},
		{map[string]string{"HOME": "/h", "CLAIMCHECK_HOOK_STOP_BLOCK_CAP": "many"}, nil, "CLAIMCHECK_HOOK_STOP_BLOCK_CAP"},
		{map[string]string{"HOME": "/h"}, []string{"--stop-block-cap", "-1"}, "stop block cap -1"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := Main(context.Background(), tt.args, func(k string) string { return tt.env[k] }, strings.NewReader(""), &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("env %v args %v: code %d stderr %q, want it to mention %q", tt.env, tt.args, code, errb.String(), tt.want)
		}
	}
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"--version"}, func(string) string { return "/h" }, strings.NewReader(""), &out, &out); code != 0 || !strings.Contains(out.String(), "claimcheck-hook") {
		t.Fatalf("--version: %d %q", code, out.String())
	}
}
