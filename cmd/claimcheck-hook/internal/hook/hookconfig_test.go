package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/hookconfig"
	"github.com/claimcheck/claimcheck/schemas"
)

// settingsWith is a project settings file handing every claimcheck event
// but skip to cmd, as `claimcheck hooks install` writes it.
func settingsWith(cmd string, skip ...string) string {
	hooks := map[string]any{}
	for _, ev := range schemas.HookEvents {
		if !contains(skip, ev.Name) {
			hooks[ev.Name] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": ev.Timeout}}}}
		}
	}
	b, _ := json.Marshal(map[string]any{"hooks": hooks})
	return string(b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Every SessionStart carries the hook configuration the session starts
// under beside the untouched payload; an edit of the settings between
// sessions shows in the next one's; the other events carry none.
func TestSessionStartRecordsTheHookConfiguration(t *testing.T) {
	f := setup(t, true)
	project := filepath.Join(f.dir, "proj")
	f.env["CLAIMCHECK_HOOK_MANAGED_SETTINGS_DIR"] = filepath.Join(f.dir, "managed")
	const cmd = "/opt/cc/claimcheck-hook --nats-creds /x/hook.creds"
	settings := filepath.Join(project, ".claude", "settings.json")
	write(t, settings, settingsWith(cmd))
	in := hookconfig.NewInstallation(settings, cmd, "2026-11-25T00:00:00Z")
	if err := hookconfig.WriteInstallation(filepath.Join(f.env["CLAIMCHECK_HOOK_STATE_DIR"], hookconfig.RecordFile), in); err != nil {
		t.Fatal(err)
	}
	start := func(session string) string {
		return `{"session_id":"` + session + `","transcript_path":"/t.jsonl","cwd":"` + project + `","hook_event_name":"SessionStart","source":"startup"}`
	}
	if r := runHook(t, f.env, start("sess-a")); r.code != 0 || r.stdout != "" {
		t.Fatalf("gated start: %+v", r)
	}
	runHook(t, f.env, hookJSON("sess-a", "Stop", ""))
	// The agent overwrites the project settings: the next session has no hooks.
	write(t, settings, "{}")
	runHook(t, f.env, start("sess-b"))
	// The settings edited out of band to another command.
	write(t, settings, settingsWith("/tmp/claimcheck-hook --fail-open Stop,PreToolUse"))
	f.env["CLAUDE_PROJECT_DIR"] = project // Claude Code's variable wins over the payload's cwd
	runHook(t, f.env, `{"session_id":"sess-c","cwd":"/elsewhere","hook_event_name":"SessionStart"}`)

	envs := f.intake(t)
	if len(envs) != 4 {
		t.Fatalf("%d envelopes, want 4", len(envs))
	}
	if envs[1].HookConfig != nil {
		t.Fatalf("a Stop carries hook_config: %+v", envs[1].HookConfig)
	}
	want := []struct {
		i       int
		verdict string
		events  int
	}{{0, schemas.HooksGated, len(schemas.HookEvents)}, {2, schemas.HooksNone, 0}, {3, schemas.HooksChanged, len(schemas.HookEvents)}}
	for _, w := range want {
		e := envs[w.i]
		c := e.HookConfig
		if c == nil {
			t.Fatalf("envelope %d (%s) has no hook_config", w.i, e.HookEvent)
		}
		if c.Verdict != w.verdict || c.Expected != in.Handlers || c.Error != "" {
			t.Errorf("envelope %d: verdict %s expected %s error %q, want %s", w.i, c.Verdict, c.Expected, c.Error, w.verdict)
		}
		var proj *schemas.HookLayer
		for i := range c.Layers {
			if c.Layers[i].Layer == schemas.LayerProject {
				proj = &c.Layers[i]
			}
		}
		if proj == nil || proj.Path != settings || !proj.Present || len(proj.Events) != w.events {
			t.Errorf("envelope %d: project layer %+v", w.i, proj)
		}
		if e.PayloadDigest != digest.SHA256(e.Payload) || strings.Contains(string(e.Payload), "hook_config") {
			t.Errorf("envelope %d: payload changed: %s", w.i, e.Payload)
		}
	}
	if envs[2].HookConfig.Layers[2].Digest != digest.SHA256([]byte("{}")) {
		t.Errorf("the overwritten file's digest: %+v", envs[2].HookConfig.Layers)
	}
}

// Reading the configuration never fails the hook: unreadable, oversized
// and broken settings and a broken install record become errors in it.
func TestHookConfigProblemsNeverFailTheHook(t *testing.T) {
	f := setup(t, true)
	f.env["CLAIMCHECK_HOOK_MANAGED_SETTINGS_DIR"] = filepath.Join(f.dir, "managed")
	write(t, filepath.Join(f.dir, "managed", "managed-settings.json"), `{"x":"`+strings.Repeat("a", hookconfig.MaxFileBytes)+`"}`)
	write(t, filepath.Join(f.dir, ".claude", "settings.json"), `{"hooks":`)
	write(t, filepath.Join(f.env["CLAIMCHECK_HOOK_STATE_DIR"], hookconfig.RecordFile), `not json`)
	// No cwd in the payload and no CLAUDE_PROJECT_DIR.
	if r := runHook(t, f.env, `{"session_id":"sess-x","hook_event_name":"SessionStart"}`); r.code != 0 {
		t.Fatalf("hook failed: %+v", r)
	}
	envs := f.intake(t)
	if len(envs) != 1 || envs[0].HookConfig == nil {
		t.Fatalf("envelopes %+v", envs)
	}
	c := envs[0].HookConfig
	if c.Verdict != schemas.HooksNone || !strings.Contains(c.Error, "install record") || len(c.Layers) != 2 {
		t.Fatalf("config %+v", c)
	}
	if !strings.Contains(c.Layers[0].Error, "larger than") || !strings.Contains(c.Layers[1].Error, "invalid JSON") {
		t.Fatalf("layers %+v", c.Layers)
	}
}
