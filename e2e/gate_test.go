package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// gated runs one gated hook and returns what Claude Code would read.
func (a *agent) gated(event, fields string) result {
	a.t.Helper()
	return runBin(a.t, a.env, a.payload(event, fields), "claimcheck-hook")
}

func (a *agent) stop(message string) result {
	a.t.Helper()
	return a.gated("Stop", fmt.Sprintf(`"stop_hook_active":false,"last_assistant_message":%q,"background_tasks":[],"session_crons":[]`, message))
}

func (a *agent) preTool(tool, input string) result {
	a.t.Helper()
	return a.gated("PreToolUse", fmt.Sprintf(`"tool_name":%q,"tool_input":%s,"tool_use_id":"toolu_%d"`, tool, input, time.Now().UnixNano()))
}

// stopAnswer is Claude Code's reading of a Stop hook's stdout.
type stopAnswer struct {
	Decision      string `json:"decision"`
	Reason        string `json:"reason"`
	SystemMessage string `json:"systemMessage"`
}

func readStop(t *testing.T, r result) stopAnswer {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("Stop hook exit %d: %+v", r.code, r)
	}
	var a stopAnswer
	if strings.TrimSpace(r.stdout) == "" {
		return a
	}
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
		t.Fatalf("Stop hook stdout is not JSON: %v: %q", err, r.stdout)
	}
	return a
}

func finalBlock(typ, attID string) string {
	return fmt.Sprintf("```claimcheck\n{\"type\":%q,\"summary\":\"fixed the failing test\",\"claims\":[{\"claim_type\":\"done\",\"attestation_id\":%q}],\"what_succeeded\":\"the fix\",\"what_remains\":\"nothing\",\"next_route_or_question\":\"none\"}\n```", typ, attID)
}

// TestStopGateEndToEnd is the story the gate exists for, with built
// binaries and Claude Code payloads: an agent edits code and claims done
// without running the tests (blocked, told what to run); runs the tests,
// gets a PASS and cites it (passes); edits again (the same citation is stale:
// blocked). Pre-tool decisions, an operator override and the ledgered
// decisions are checked on the way.
func TestStopGateEndToEnd(t *testing.T) {
	dir := t.TempDir()
	hookDir := filepath.Join(dir, "hook")
	_, url := upEnv(t, []string{"CLAIMCHECK_HOOK_STATE_DIR=" + hookDir}, filepath.Join(dir, "data"), "127.0.0.1:0")
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + hookDir}
	a := newAgent(t, env, "sess-gate-1")

	a.prompt("Fix the failing test in `src/app.py` and run `pytest` to check it")
	a.edit("/repo/src/app.py")

	// 1. Claims done without running the tests.
	ans := readStop(t, a.stop("I fixed the bug in src/app.py. All tests pass now."))
	if ans.Decision != "block" || !strings.Contains(ans.Reason, "Next step: run") || !strings.Contains(ans.Reason, "claimcheck claim") {
		t.Fatalf("unbacked done: %+v", ans)
	}

	// 2. Runs the tests, gets a PASS, cites it.
	a.bash("pytest", "============================= 3 passed in 0.12s ==============================\n")
	v, r := a.claim("done", "test_pass", `{"command_substring":"pytest"}`)
	if r.code != 0 || v.Verdict != "PASS" || v.AttestationID == "" {
		t.Fatalf("claim: %+v %+v", v, r)
	}
	msg := "Fixed the off-by-one in src/app.py; all tests pass.\n\n" + finalBlock("done", v.AttestationID)
	if ans := readStop(t, a.stop(msg)); ans.Decision != "" {
		t.Fatalf("fresh attested done was not let through: %+v", ans)
	}

	// 3. Edits again: the same citation is stale.
	a.edit("/repo/src/app.py")
	ans = readStop(t, a.stop(msg))
	if ans.Decision != "block" || !strings.Contains(ans.Reason, "stale") || !strings.Contains(ans.Reason, "re-run `pytest`") {
		t.Fatalf("stale citation: %+v", ans)
	}

	// A forged id and another session's attestation are refused.
	if ans := readStop(t, a.stop("Done.\n"+finalBlock("done", "01KAB0X0000000000000000001"))); ans.Decision != "block" || !strings.Contains(ans.Reason, "cannot be used") {
		t.Fatalf("unknown attestation: %+v", ans)
	}
	b := newAgent(t, env, "sess-gate-2")
	b.prompt("Fix the failing test in `src/app.py` and run `pytest` to check it")
	if ans := readStop(t, b.stop("Done.\n"+finalBlock("done", v.AttestationID))); ans.Decision != "block" || !strings.Contains(ans.Reason, "another session") {
		t.Fatalf("foreign attestation: %+v", ans)
	}

	// 4. Pre-tool: a destructive command is denied, an ordinary one allowed by silence.
	r = a.preTool("Bash", `{"command":"rm -rf / --no-preserve-root","description":"clean"}`)
	if r.code != 0 || !strings.Contains(r.stdout, `"permissionDecision":"deny"`) {
		t.Fatalf("rm -rf /: %+v", r)
	}
	if r := a.preTool("Bash", `{"command":"ls -la src","description":"list"}`); r.code != 0 || r.stdout != "" {
		t.Fatalf("ls: %+v", r)
	}

	// 5. Break-glass: the next stop passes, the user is told.
	if r := runBin(t, env, nil, "claimcheck", "gate", "override", "--session", a.session, "--reason", "demo freeze, approved by the lead"); r.code != 0 {
		t.Fatalf("override: %+v", r)
	}
	var over stopAnswer
	deadline := time.Now().Add(10 * time.Second)
	for {
		over = readStop(t, a.stop(msg))
		if over.Decision == "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // the override travels through ingest
	}
	if over.Decision != "" || !strings.Contains(over.SystemMessage, "override") {
		t.Fatalf("override did not let the stop through: %+v", over)
	}
	// Used once: the next stale stop blocks again.
	if ans := readStop(t, a.stop(msg)); ans.Decision != "block" {
		t.Fatalf("override applied twice: %+v", ans)
	}

	// Every decision is in the session's chain.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		entries, _ := show(t, url, a.session, 1)
		decisions := 0
		for _, e := range entries {
			if e.HookEvent == "GateDecision" {
				decisions++
			}
		}
		if decisions >= 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d GateDecision entries in the ledger, want at least 8 (one per gated hook run)", decisions)
		}
	}
}
