package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/decision"
)

// managedFixture is a stand-in /etc: Claude Code's managed settings and
// claimcheck's system directory under a temporary directory.
func managedFixture(t *testing.T) (settings, systemDir string, env map[string]string) {
	t.Helper()
	dir := t.TempDir()
	return filepath.Join(dir, "etc", "claude-code", "managed-settings.json"), filepath.Join(dir, "etc", "claimcheck"),
		map[string]string{"HOME": filepath.Join(dir, "home")}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return m
}

// install --managed writes every hook into the managed settings with
// allowManagedHooksOnly, readable by the developer's user, the hook
// trusting a key set in the system directory; uninstall --managed puts the
// file back byte for byte and removes what install added.
func TestManagedInstall(t *testing.T) {
	for _, tc := range []struct{ name, before string }{
		{"new file", ""},
		{"existing policy", "{\n  \"permissions\": {\"deny\": [\"Bash(curl *)\"]},\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"/opt/audit/stop.sh\"}]}]}\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			settings, systemDir, env := managedFixture(t)
			if tc.before != "" {
				if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(settings, []byte(tc.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			hook := fakeHook(t)
			args := []string{"hooks", "install", "--managed", "--settings", settings, "--system-dir", systemDir, "--hook-command", hook}
			r := runCLI(t, env, args...)
			if r.code != 0 || !strings.Contains(r.stdout, "allowManagedHooksOnly: true") {
				t.Fatalf("install --managed: %+v", r)
			}
			m := readJSON(t, settings)
			if m["allowManagedHooksOnly"] != true {
				t.Fatalf("allowManagedHooksOnly not set: %v", m)
			}
			hooks, _ := m["hooks"].(map[string]any)
			keys := decision.KeySetPath(filepath.Join(systemDir, "hook"), "nats://127.0.0.1:4222")
			for _, ev := range hookEvents {
				b, _ := json.Marshal(hooks[ev.Name])
				if !strings.Contains(string(b), hook+" --gate-keys "+keys) {
					t.Errorf("%s: no claimcheck-hook trusting %s: %s", ev.Name, keys, b)
				}
			}
			if tc.before != "" && !strings.Contains(mustRead(t, settings), "/opt/audit/stop.sh") {
				t.Fatal("the policy's own hook was lost")
			}
			if fi, err := os.Stat(settings); err != nil || fi.Mode().Perm() != 0o644 {
				t.Fatalf("managed settings must be readable by the developer's user and written by root only: %v %v", fi.Mode(), err)
			}
			rec := readJSON(t, receiptPath(systemDir))
			if rec["added_allow_managed_hooks_only"] != true || rec["gate_keys"] != keys {
				t.Fatalf("receipt: %v", rec)
			}
			// Idempotent.
			installed := mustRead(t, settings)
			if r := runCLI(t, env, args...); r.code != 0 || !strings.Contains(r.stdout, "nothing changed") || mustRead(t, settings) != installed {
				t.Fatalf("second install: %+v", r)
			}
			// A user-level uninstall does not touch the managed file.
			r = runCLI(t, env, "hooks", "uninstall")
			if r.code != 0 || mustRead(t, settings) != installed {
				t.Fatalf("user uninstall changed the managed settings: %+v", r)
			}
			r = runCLI(t, env, "hooks", "uninstall", "--managed", "--settings", settings, "--system-dir", systemDir)
			if r.code != 0 {
				t.Fatalf("uninstall --managed: %+v", r)
			}
			after := mustRead(t, settings)
			if tc.before != "" && after != tc.before {
				t.Fatalf("uninstall left\n%s\nwant the file as it was\n%s", after, tc.before)
			}
			if tc.before == "" {
				if m := readJSON(t, settings); len(m) != 0 {
					t.Fatalf("uninstall left %v, want {}", m)
				}
			}
			if _, err := os.Stat(receiptPath(systemDir)); !os.IsNotExist(err) {
				t.Fatalf("receipt left behind: %v", err)
			}
		})
	}
}

// allowManagedHooksOnly set by the policy before claimcheck stays after
// uninstall --managed: install did not add it.
func TestManagedUninstallKeepsThePolicysOwnSetting(t *testing.T) {
	settings, systemDir, env := managedFixture(t)
	before := "{\"allowManagedHooksOnly\": true, \"model\": \"opus\"}\n"
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, env, "hooks", "install", "--managed", "--settings", settings, "--system-dir", systemDir, "--hook-command", fakeHook(t))
	if r.code != 0 || strings.Contains(r.stdout, "no longer run") {
		t.Fatalf("install: %+v", r)
	}
	if rec := readJSON(t, receiptPath(systemDir)); rec["added_allow_managed_hooks_only"] != false {
		t.Fatalf("receipt claims install added the policy's setting: %v", rec)
	}
	// An edit after install: the backup no longer matches.
	m := readJSON(t, settings)
	m["model"] = "sonnet"
	b, _ := json.Marshal(m)
	if err := os.WriteFile(settings, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, env, "hooks", "uninstall", "--managed", "--settings", settings, "--system-dir", systemDir); r.code != 0 {
		t.Fatalf("uninstall: %+v", r)
	}
	m = readJSON(t, settings)
	if m["allowManagedHooksOnly"] != true || m["model"] != "sonnet" || m["hooks"] != nil {
		t.Fatalf("after uninstall: %v", m)
	}
}

// Without the rights to write the managed settings, install changes
// nothing and says how to run it.
func TestManagedInstallNeedsRights(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write anywhere: e2e TestManagedInstallRefusedWithoutRights runs this as a user without rights")
	}
	settings, systemDir, env := managedFixture(t)
	if err := os.MkdirAll(filepath.Dir(settings), 0o555); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, env, "hooks", "install", "--managed", "--settings", settings, "--system-dir", systemDir, "--hook-command", fakeHook(t))
	if r.code == 0 || !strings.Contains(r.stderr, settings) || !strings.Contains(r.stderr, "sudo claimcheck hooks install --managed") {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		t.Fatal("settings written without the rights")
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A receipt that is not what install writes stops install --managed with
// an error naming it, before the managed settings change.
func TestManagedInstallRefusesAMalformedReceipt(t *testing.T) {
	settings, systemDir, env := managedFixture(t)
	if err := os.MkdirAll(systemDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(receiptPath(systemDir), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, env, "hooks", "install", "--managed", "--settings", settings, "--system-dir", systemDir, "--hook-command", fakeHook(t))
	if r.code == 0 || !strings.Contains(r.stderr, receiptPath(systemDir)) {
		t.Fatalf("%+v, want a refusal naming the receipt", r)
	}
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		t.Fatal("the managed settings were written despite the unreadable receipt")
	}
}
