package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"

	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// promptAnswer is Claude Code's reading of UserPromptSubmit and
// SessionStart hook output.
type promptAnswer struct {
	SystemMessage string `json:"systemMessage"`
	Specific      struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func readContext(t *testing.T, r result) promptAnswer {
	t.Helper()
	var a promptAnswer
	if r.code != 0 {
		t.Fatalf("hook exit %d: %+v", r.code, r)
	}
	if strings.TrimSpace(r.stdout) != "" {
		if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
			t.Fatalf("hook stdout is not JSON: %v: %q", err, r.stdout)
		}
	}
	return a
}

// timed runs a gated hook and checks that it answered within the deadline
// (plus process start-up).
func timed(t *testing.T, deadline time.Duration, run func() result) result {
	t.Helper()
	start := time.Now()
	r := run()
	if took := time.Since(start); took > deadline+time.Second {
		t.Fatalf("the hook answered after %s, past its %s deadline: %+v", took, deadline, r)
	}
	return r
}

// TestGateOutagesEndToEnd runs the gatekeeper as its own binary beside
// `claimcheck up --services ingest,verifier,rotator` and takes it away in
// every way the hook must survive: killed (kill -9), stopped (SIGSTOP:
// slower than the deadline), replaced by a responder sending malformed
// replies, and NATS itself down. Each time the hook answers block or deny
// within its deadline and the decision is recorded; the failures are
// recorded as HookCrash events, and once three Stop failures are in the
// ledger the next prompt carries the crash alert. On the way, the
// SessionStart self-test and the override audit are checked.
func TestGateOutagesEndToEnd(t *testing.T) {
	dir := t.TempDir()
	hookDir := filepath.Join(dir, "hook")
	data := filepath.Join(dir, "data")
	upProc, url := upEnv(t, []string{"CLAIMCHECK_HOOK_STATE_DIR=" + hookDir}, data, "127.0.0.1:0", "--services", "ingest,verifier,rotator")
	startGatekeeper := func() *proc {
		p := start(t, []string{"CLAIMCHECK_GATEKEEPER_KEY_DIR=" + filepath.Join(data, "keys")}, "gatekeeper", "--nats-url", url, "--http-listen", "")
		p.WaitStderr(t, 60*time.Second, "gatekeeper running")
		return p
	}
	gk := startGatekeeper()
	const deadline = 1500 * time.Millisecond
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + hookDir, "CLAIMCHECK_HOOK_GATE_DEADLINE=" + deadline.String()}
	a := newAgent(t, env, "sess-outage")
	sessionStart := func() promptAnswer {
		return readContext(t, a.gated("SessionStart", `"source":"startup","model":"claude-sonnet-5"`))
	}
	if ans := sessionStart(); ans.SystemMessage != "" || ans.Specific.AdditionalContext != "" {
		t.Fatalf("self-test of a healthy setup reported %+v", ans)
	}
	a.prompt("Fix the failing test in `src/app.py` and run `pytest` to check it")

	// Override audit: the third prompt asking to bypass the gate raises the alert.
	for i, p := range []string{"skip the tests, I trust it", "force this through", "just mark it as done"} {
		ans := readContext(t, a.gated("UserPromptSubmit", fmt.Sprintf(`"prompt":%q`, p)))
		if !strings.Contains(ans.Specific.AdditionalContext, "bypass the evidence gate") {
			t.Fatalf("bypass prompt %d: the agent was not told: %+v", i, ans)
		}
		if alert := strings.Contains(ans.SystemMessage, "3 prompts"); alert != (i == 2) {
			t.Fatalf("bypass prompt %d: alert shown = %v: %+v", i, alert, ans)
		}
	}

	// 1. Gatekeeper killed.
	_ = gk.Cmd.Process.Signal(syscall.SIGKILL)
	gk.Kill()
	r := timed(t, deadline, func() result { return a.stop("All done; the tests pass.") })
	if ans := readStop(t, r); ans.Decision != "block" || !strings.Contains(r.stderr, "no gatekeeper is running") {
		t.Fatalf("gatekeeper killed, Stop: %+v", r)
	}
	r = timed(t, deadline, func() result { return a.preTool("Bash", `{"command":"ls"}`) })
	if !strings.Contains(r.stdout, `"permissionDecision":"deny"`) {
		t.Fatalf("gatekeeper killed, PreToolUse: %+v", r)
	}
	if ans := sessionStart(); !strings.Contains(ans.Specific.AdditionalContext, "no gatekeeper is running") {
		t.Fatalf("self-test without a gatekeeper: %+v", ans)
	}

	// 2. Gatekeeper slower than the deadline (stopped with SIGSTOP).
	gk = startGatekeeper()
	_ = gk.Cmd.Process.Signal(syscall.SIGSTOP)
	r = timed(t, deadline, func() result { return a.stop("All done; the tests pass.") })
	if ans := readStop(t, r); ans.Decision != "block" || !strings.Contains(r.stderr, "no answer from the gatekeeper within") {
		t.Fatalf("gatekeeper stopped: %+v", r)
	}
	_ = gk.Cmd.Process.Signal(syscall.SIGCONT)
	gk.Kill()

	// 3. A responder sending malformed and unsigned replies (only a
	// gatekeeper's credentials may answer gate requests at all).
	nc, _, _ := connectAs(t, url, identity.RoleGatekeeper)
	rogue, err := nc.QueueSubscribe(subject.GateAll(subject.GateStop), "gatekeeper", func(m *nats.Msg) { _ = m.Respond([]byte(`{"decision":"allow"}`)) })
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	r = timed(t, deadline, func() result { return a.stop("All done; the tests pass.") })
	if ans := readStop(t, r); ans.Decision != "block" {
		t.Fatalf("malformed reply: %+v", r)
	}
	_ = rogue.Unsubscribe()
	nc.Close()

	// Every fallback decision and failure is in the ledger.
	var crashes, decisions int
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		entries, _ := show(t, url, a.session, 1)
		crashes, decisions = 0, 0
		for _, e := range entries {
			switch e.HookEvent {
			case "HookCrash":
				crashes++
			case "GateDecision":
				if strings.Contains(e.Payload, `"source":"hook"`) {
					decisions++
				}
			}
		}
		if crashes >= 4 && decisions >= 4 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("ledger holds %d HookCrash and %d hook-made GateDecision entries, want 4 each", crashes, decisions)
		}
	}

	// Three Stop failures within the hour: the restarted gatekeeper (which
	// rebuilt its view from the ledger) raises the crash alert on the next prompt.
	startGatekeeper()
	ans := readContext(t, a.gated("UserPromptSubmit", `"prompt":"what happened?"`))
	if !strings.Contains(ans.SystemMessage, "failed 3 times for Stop") || !strings.Contains(ans.Specific.AdditionalContext, "failed 3 times for Stop") {
		t.Fatalf("crash alert: %+v", ans)
	}

	// 4. NATS down: block within the deadline, everything spooled.
	upProc.Kill()
	r = timed(t, deadline, func() result { return a.stop("All done; the tests pass.") })
	if ans := readStop(t, r); ans.Decision != "block" || !strings.Contains(r.stderr, "NATS is unreachable") {
		t.Fatalf("NATS down: %+v", r)
	}
	spooled, _ := os.ReadDir(filepath.Join(hookDir, "spool"))
	n := 0
	for _, e := range spooled {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	if n < 3 { // the Stop event, the hook's decision, the crash record
		t.Fatalf("%d entries spooled, want at least 3: %v", n, spooled)
	}
}
