package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/config"
)

// up tells the gatekeeper what only it knows: the hook's executables next
// to claimcheck's, claimcheck's configuration file and binary, and the
// agent's hook settings outside a project ($CODEX_HOME and $COPILOT_HOME too).
func TestUpProtectsHookBinariesAndConfiguration(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "CODEX_HOME": filepath.Join(dir, "codex"), "COPILOT_HOME": filepath.Join(dir, "copilot"),
		"CLAIMCHECK_HOOK_GATE_KEYS": filepath.Join(dir, "keys.json")}
	a := &app{env: Env{Getenv: func(k string) string { return env[k] }}, v: config.New(), cfgFile: filepath.Join(dir, "claimcheck.yaml")}
	a.v.Set("data_dir", filepath.Join(dir, "data"))
	cfg, err := a.loadUp()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{filepath.Join(filepath.Dir(exe), "claimcheck-hook"), filepath.Join(filepath.Dir(exe), "claimcheck-hook-tls")} {
		if !slices.Contains(cfg.Gatekeeper.HookBinaries, want) {
			t.Errorf("hook_binaries %v lacks %s", cfg.Gatekeeper.HookBinaries, want)
		}
	}
	for _, want := range []string{exe, a.cfgFile, "/etc/claimcheck", env["CLAIMCHECK_HOOK_GATE_KEYS"],
		filepath.Join(dir, ".claude", "settings.json"), filepath.Join(dir, "codex", "hooks.json"), filepath.Join(dir, "codex", "config.toml"),
		filepath.Join(dir, ".gemini", "settings.json"), filepath.Join(dir, ".cursor", "hooks.json"), filepath.Join(dir, "copilot", "hooks")} {
		if !slices.Contains(cfg.Gatekeeper.ConfigPaths, want) {
			t.Errorf("config_paths %v lacks %s", cfg.Gatekeeper.ConfigPaths, want)
		}
	}
}

// --sandbox also keeps the agent's commands from writing the files that
// configure claimcheck or the agent's hooks: user-level ones and
// claimcheck's binaries in sandbox.filesystem.denyWrite, the project's as
// permissions.deny Edit rules (which Claude Code applies to the sandbox
// too); the user's own permissions stay, and a second run changes nothing.
func TestHooksInstallSandboxProtectsConfiguration(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	user := `{"permissions":{"allow":["Bash(ls:*)"],"deny":["Read(./.env)"]},"sandbox":{"filesystem":{"denyWrite":["/opt/mine"]}}}`
	if err := os.WriteFile(settings, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": dir, "CLAIMCHECK_DATA_DIR": filepath.Join(dir, "data"), "CODEX_HOME": filepath.Join(dir, "cx")}
	hook := fakeHook(t)
	r := runCLI(t, env, "hooks", "install", "--hook-command", hook, "--sandbox")
	if r.code != 0 {
		t.Fatalf("install --sandbox: %+v", r)
	}
	got, _ := os.ReadFile(settings)
	var doc struct {
		Permissions struct {
			Allow []string `json:"allow"`
			Deny  []string `json:"deny"`
		} `json:"permissions"`
		Sandbox struct {
			Filesystem struct {
				DenyWrite []string `json:"denyWrite"`
			} `json:"filesystem"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal(got, &doc, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	exe, _ := os.Executable()
	for _, want := range []string{"/opt/mine", settings, filepath.Join(dir, ".claude", "settings.local.json"),
		filepath.Join(dir, "cx", "hooks.json"), filepath.Join(dir, "cx", "config.toml"), filepath.Join(dir, ".gemini", "settings.json"),
		filepath.Join(dir, ".cursor", "hooks.json"), "/etc/claude-code", "/etc/claimcheck", exe,
		filepath.Join(filepath.Dir(exe), "claimcheck-hook"), filepath.Join(filepath.Dir(exe), "claimcheck-hook-tls")} {
		if !slices.Contains(doc.Sandbox.Filesystem.DenyWrite, want) {
			t.Errorf("sandbox.filesystem.denyWrite %v lacks %s", doc.Sandbox.Filesystem.DenyWrite, want)
		}
	}
	for _, want := range []string{"Read(./.env)", "Edit(.claude/settings.json)", "Edit(.claude/settings.local.json)", "Edit(.codex/config.toml)",
		"Edit(.codex/hooks.json)", "Edit(.gemini/settings.json)", "Edit(.cursor/hooks.json)", "Edit(.github/hooks/**)"} {
		if !slices.Contains(doc.Permissions.Deny, want) {
			t.Errorf("permissions.deny %v lacks %s", doc.Permissions.Deny, want)
		}
	}
	if !slices.Equal(doc.Permissions.Allow, []string{"Bash(ls:*)"}) {
		t.Errorf("the user's permissions.allow changed: %v", doc.Permissions.Allow)
	}
	r = runCLI(t, env, "hooks", "install", "--hook-command", hook, "--sandbox")
	if again, _ := os.ReadFile(settings); r.code != 0 || string(again) != string(got) || !strings.Contains(r.stdout, "nothing changed") {
		t.Fatalf("second install changed the settings: %+v\n%s", r, again)
	}
	// Without --sandbox neither list is touched.
	plain := filepath.Join(dir, "plain.json")
	if err := os.WriteFile(plain, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, env, "hooks", "install", "--hook-command", hook, "--settings", plain); r.code != 0 {
		t.Fatalf("install: %+v", r)
	}
	if raw, _ := os.ReadFile(plain); strings.Contains(string(raw), "denyWrite") || strings.Contains(string(raw), "Edit(") {
		t.Errorf("install without --sandbox wrote write denials: %s", raw)
	}
}
