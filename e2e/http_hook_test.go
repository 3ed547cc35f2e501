package e2e

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// TestClaudeHTTPHookEndToEnd drives the gatekeeper's POST /v1/hooks/claude
// (Claude Code's http hook type) on `claimcheck up` with Claude Code
// payloads: events are recorded in the session's chain and Stop and
// PreToolUse get the same decisions as through claimcheck-hook.
func TestClaudeHTTPHookEndToEnd(t *testing.T) {
	dir := t.TempDir()
	port := natstest.FreePort(t)
	_, url := upEnv(t, []string{fmt.Sprintf("CLAIMCHECK_GATEKEEPER_HTTP_LISTEN=127.0.0.1:%d", port), "CLAIMCHECK_GATEKEEPER_HTTP_TOKEN=e2e-token"},
		filepath.Join(dir, "data"), "127.0.0.1:0")
	const session = "sess-http-e2e"
	send := func(event, fields string) (int, string) {
		t.Helper()
		body := fmt.Sprintf(`{"session_id":%q,"transcript_path":"/home/user/.claude/projects/-repo/%s.jsonl","cwd":"/repo","permission_mode":"default","hook_event_name":%q,%s}`, session, session, event, fields)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/v1/hooks/claude", port), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer e2e-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := send("UserPromptSubmit", `"prompt":"Fix the failing test in `+"`src/app.py`"+` and run `+"`pytest`"+`"`); code != 200 || body != "" {
		t.Fatalf("prompt: %d %q", code, body)
	}
	if code, body := send("PostToolUse", `"tool_name":"Edit","tool_input":{"file_path":"/repo/src/app.py","old_string":"a","new_string":"b"},"tool_response":{"filePath":"/repo/src/app.py"},"tool_use_id":"toolu_e1"`); code != 200 || body != "" {
		t.Fatalf("edit: %d %q", code, body)
	}
	code, body := send("Stop", `"stop_hook_active":false,"last_assistant_message":"Fixed it. All tests pass now."`)
	if code != 200 || !strings.Contains(body, `"decision":"block"`) || !strings.Contains(body, "Next step: run") {
		t.Fatalf("unbacked stop: %d %s", code, body)
	}
	code, body = send("PreToolUse", `"tool_name":"Bash","tool_input":{"command":"rm -rf ~"},"tool_use_id":"toolu_e2"`)
	if code != 200 || !strings.Contains(body, `"permissionDecision":"deny"`) {
		t.Fatalf("rm -rf ~: %d %s", code, body)
	}
	// Recorded in the session's chain: 4 events and 2 decisions at least.
	entries, _ := show(t, url, session, 6)
	seen := map[string]int{}
	for _, e := range entries {
		seen[e.HookEvent]++
	}
	for _, ev := range []string{"UserPromptSubmit", "PostToolUse", "Stop", "PreToolUse", "GateDecision"} {
		if seen[ev] == 0 {
			t.Errorf("no %s entry in the ledger: %v", ev, seen)
		}
	}
}
