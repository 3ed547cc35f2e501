package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// managedSettings is Claude Code's managed settings file on Linux; in the
// tests' mount namespace /etc is a private overlay (main_test.go).
const managedSettings = "/etc/claude-code/managed-settings.json"

// TestClaudeCodeConfiguration: the agent cannot switch the gate off, nor
// destroy the user's work unasked (issue #27), shown with the real client.
func TestClaudeCodeConfiguration(t *testing.T) {
	c, exe := claudeCode(t)
	for _, sc := range []struct {
		name string
		run  func(w *world)
	}{
		{"managed", managedHooks},
		{"lost-work", lostWork},
	} {
		t.Run(sc.name, func(t *testing.T) { sc.run(newWorld(t, c, exe)) })
	}
}

// managedHooks: `claimcheck hooks install --managed` puts the hooks in
// Claude Code's managed settings; with nothing of claimcheck's in the
// project or the user's settings, the whole gate loop runs (the honest
// scenario: paired tool calls, the unbacked stop blocked, the claim, the
// cited attestation let through), and a hook of the project's own does not
// run (allowManagedHooksOnly).
func managedHooks(w *world) {
	if why := os.Getenv(noEtcEnv); why != "" {
		if os.Getenv(requiredEnv) != "" {
			w.fatalf("%s is set and the managed settings cannot be written here: %s", requiredEnv, why)
		}
		w.t.Skip(why)
	}
	projectHook := filepath.Join(w.project, "project-hook.log")
	settings := filepath.Join(w.project, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		w.t.Fatal(err)
	}
	own := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo ran >> ` + projectHook + `"}]}]}}`
	if err := os.WriteFile(settings, []byte(own), 0o644); err != nil {
		w.t.Fatal(err)
	}
	w.install = []string{"hooks", "install", "--managed"}
	w.t.Cleanup(func() {
		r := w.claimcheck("hooks", "uninstall", "--managed")
		b, _ := os.ReadFile(managedSettings)
		if r.code != 0 || strings.Contains(string(b), "claimcheck-hook") {
			w.t.Errorf("claimcheck hooks uninstall --managed: %+v; %s holds %s", r, managedSettings, b)
			_ = os.Remove(managedSettings) // the next scenarios must not run under these hooks
		}
	})
	honest(w)
	b, err := os.ReadFile(managedSettings)
	if err != nil || !strings.Contains(string(b), "claimcheck-hook") || !strings.Contains(string(b), `"allowManagedHooksOnly": true`) {
		w.errorf("%s after install --managed: %v\n%s", managedSettings, err, b)
	}
	for _, f := range []string{settings, filepath.Join(w.home, ".claude", "settings.json")} {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "claimcheck") {
			w.errorf("%s names claimcheck: the session was to be gated by the managed settings alone\n%s", f, b)
		}
	}
	if b, err := os.ReadFile(projectHook); err == nil {
		w.errorf("the project's own hook ran (%q) although the managed settings allow managed hooks only", b)
	}
}

// lostWork: a force push and a hard reset need the user. Headless, Claude
// Code refuses both with claimcheck's reasons, which reach the model; the
// commit the reset would have dropped is still there.
func lostWork(w *world) {
	w.setup(
		step{name: "force push", reply: func(*turn) reply {
			return reply{tools: []toolCall{bash("git push --force origin main", "Publish the branch")}}
		}},
		step{name: "hard reset", reply: func(*turn) reply {
			return reply{tools: []toolCall{bash("git reset --hard HEAD~1", "Drop the last commit")}}
		}},
		step{name: "answer", reply: func(*turn) reply {
			return reply{text: "Neither ran: both need your approval."}
		}},
	)
	// No action verb: no contract, so the final answer needs no evidence.
	run, session := w.session("Is anything in this repository at risk?")
	es := w.ledger(session, sessionOver(1))
	w.checkScript()
	push, ok1 := decisionFor(es, "toolu_e2e0000")
	reset, ok2 := decisionFor(es, "toolu_e2e0001")
	if !ok1 || push.Decision != "ask" || push.Rule != "git.force_push" || push.Reason == "" {
		w.fatalf("ledger: git push --force decision %+v, want ask (git.force_push) with a reason", push)
	}
	if !ok2 || reset.Decision != "ask" || reset.Rule != "git.reset_hard" || reset.Reason == "" {
		w.fatalf("ledger: git reset --hard decision %+v, want ask (git.reset_hard) with a reason", reset)
	}
	w.checkPairs(es)
	if n := count(es, "PostToolUse") + count(es, "PostToolUseFailure"); n != 0 {
		w.errorf("ledger: %d tool results, want none (neither command ran)", n)
	}
	trs := run.toolResults()
	if r := trs["toolu_e2e0000"]; !r.IsError || !strings.Contains(r.text(), push.Reason) {
		w.errorf("client: the force push's tool result %q does not carry the ask reason", r.text())
	}
	if trs := w.model.answeredBy("hard reset"); len(trs) != 1 || !strings.Contains(trs[0].since(), push.Reason) {
		w.errorf("model: the force push's reason did not reach the model")
	}
	if trs := w.model.answeredBy("answer"); len(trs) != 1 || !strings.Contains(trs[0].since(), reset.Reason) {
		w.errorf("model: the hard reset's reason did not reach the model")
	}
	if r := w.run("git", "log", "--oneline"); r.code != 0 || strings.Count(strings.TrimSpace(r.stdout), "\n") != 0 || !strings.Contains(r.stdout, "calc") {
		w.errorf("the project's history changed: %+v", r)
	}
	var res struct {
		Denials []json.RawMessage `json:"permission_denials"`
	}
	r, _ := run.result()
	_ = json.Unmarshal([]byte(r.raw), &res)
	if run.code != 0 || r.Subtype != "success" || len(res.Denials) != 2 {
		w.errorf("client: exit %d, result %s with %d permission denials, want exit 0, success, 2", run.code, r.summary(), len(res.Denials))
	}
	w.verify()
}
