package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/schemas"
)

// TestHookConfigDriftIsRecorded: hooks installed into a project, a session
// starts gated; the settings are overwritten out of band (as an agent's
// `python3 -c` could), and the next session's SessionStart records hooks
// none, the gatekeeper chains a signed hook_config_drift finding in it,
// and `claimcheck hooks verify` exits 1. All with the built binaries.
func TestHookConfigDriftIsRecorded(t *testing.T) {
	dir := t.TempDir()
	hookDir := filepath.Join(dir, "hook")
	home := filepath.Join(dir, "home")
	project := filepath.Join(dir, "project")
	settings := filepath.Join(project, ".claude", "settings.json")
	_, url := upEnv(t, []string{"CLAIMCHECK_HOOK_STATE_DIR=" + hookDir}, filepath.Join(dir, "data"), "127.0.0.1:0")
	credsMu.Lock()
	hookCreds := credsByURL[url].hook
	credsMu.Unlock()
	env := []string{"CLAIMCHECK_NATS_URL=" + url, "CLAIMCHECK_HOOK_STATE_DIR=" + hookDir, "CLAIMCHECK_HOOK_GATE=false", "HOME=" + home,
		"CLAIMCHECK_HOOK_MANAGED_SETTINGS_DIR=" + filepath.Join(dir, "managed"), "CLAUDE_PROJECT_DIR=" + project}
	if r := runBin(t, env, nil, "claimcheck", "hooks", "install", "--settings", settings, "--hook-command", bin("claimcheck-hook"),
		"--nats-creds", hookCreds); r.code != 0 || !strings.Contains(r.stdout, "recorded the installed hook command") {
		t.Fatalf("hooks install: %+v", r)
	}
	verify := func() result {
		return runBin(t, env, nil, "claimcheck", "hooks", "verify", "--project", project, "--managed-settings-dir", filepath.Join(dir, "managed"))
	}
	if r := verify(); r.code != 0 || !strings.Contains(r.stdout, "verdict: gated") {
		t.Fatalf("verify after install: %+v", r)
	}
	start := func(session string) {
		t.Helper()
		a := newAgent(t, env, session)
		a.hook(schemas.HookSessionStart, `"source":"startup","model":"claude-sonnet-4-5"`)
	}
	start("drift-1")
	if e := entries(t, url, "drift-1", 1)[0]; e.HookConfig == nil || e.HookConfig.Verdict != schemas.HooksGated {
		t.Fatalf("first session's SessionStart: %+v", e.HookConfig)
	}
	if err := os.WriteFile(settings, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start("drift-2")
	got := entries(t, url, "drift-2", 2)
	if c := got[0].HookConfig; c == nil || c.Verdict != schemas.HooksNone || len(c.Missing) != len(schemas.HookEvents) {
		t.Fatalf("second session's SessionStart: %+v", c)
	}
	f := got[1]
	var rec schemas.FindingRecord
	if f.HookEvent != schemas.GateFindingEvent || f.Payload == nil || json.Unmarshal([]byte(*f.Payload), &rec) != nil ||
		rec.Finding.Kind != schemas.FindingHookConfigDrift || rec.Signed == nil || len(rec.Signed.Signatures) == 0 ||
		!strings.HasPrefix(f.Origin, "gatekeeper:") {
		t.Fatalf("finding entry %+v", f)
	}
	if r := verify(); r.code != 1 || !strings.Contains(r.stdout, "verdict: none") {
		t.Fatalf("verify after the edit: %+v", r)
	}
	if r := runBin(t, env, nil, "claimcheck", "session", "status", "--session", "drift-2"); !strings.Contains(r.stdout, "findings: hook_config_drift") {
		t.Fatalf("session status: %+v", r)
	}
	if r := runBin(t, env, nil, "claimcheck", "hosts", "--drifted"); r.code != 0 || !strings.Contains(r.stdout, "drift-2") {
		t.Fatalf("hosts --drifted: %+v", r)
	}
	// The first session has no finding.
	if got := entries(t, url, "drift-1", 1); len(got) != 1 {
		t.Fatalf("first session: %d entries", len(got))
	}
}

// entries waits until session has at least want entries (at most 30 s)
// and returns them decoded.
func entries(t *testing.T, url, session string, want int) []schemas.Entry {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := runBin(t, []string{"CLAIMCHECK_NATS_URL=" + url}, nil, "claimcheck", "ledger", "show", "--session", session, "--json")
		var out []schemas.Entry
		sc := bufio.NewScanner(strings.NewReader(r.stdout))
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			var e schemas.Entry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("ledger show --json: %v\n%s", err, sc.Text())
			}
			out = append(out, e)
		}
		if len(out) >= want {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: %d entries within 30s, want %d (%q)", session, len(out), want, r.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
