package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func TestHooksUninstallRestoresTheUsersFileByteForByte(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(userSettings), 0o640); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": dir}
	if r := runCLI(t, env, "hooks", "install", "--hook-command", fakeHook(t)); r.code != 0 {
		t.Fatalf("install: %+v", r)
	}
	// Install and uninstall within the same millisecond must not lose the
	// original through a backup written over another.
	r := runCLI(t, env, "hooks", "uninstall")
	if r.code != 0 || !strings.Contains(r.stdout, "removed 15 claimcheck-hook entries") || !strings.Contains(r.stdout, "byte for byte") {
		t.Fatalf("uninstall: %+v", r)
	}
	got, _ := os.ReadFile(settings)
	if string(got) != userSettings {
		t.Fatalf("after install and uninstall the file is\n%s\nwant the user's own\n%s", got, userSettings)
	}
	if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode changed to %v", fi.Mode().Perm())
	}
	backups, _ := filepath.Glob(settings + ".bak-*")
	if len(backups) != 2 {
		t.Errorf("backups %v, want the one of install and the one of uninstall", backups)
	}
	// Again: nothing to remove, nothing written.
	if r := runCLI(t, env, "hooks", "uninstall"); r.code != 0 || !strings.Contains(r.stdout, "nothing changed") {
		t.Fatalf("second uninstall: %+v", r)
	}
}

func TestHooksUninstallKeepsWhatTheUserChangedSinceInstall(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(settings, []byte(userSettings), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": dir}
	if r := runCLI(t, env, "hooks", "install", "--settings", settings, "--hook-command", fakeHook(t)); r.code != 0 {
		t.Fatalf("install: %+v", r)
	}
	// The user adds a hook of their own beside claimcheck's on Stop, and a
	// setting.
	installed, _ := os.ReadFile(settings)
	var doc map[string]any
	if err := json.Unmarshal(installed, &doc); err != nil {
		t.Fatal(err)
	}
	hooks := doc["hooks"].(map[string]any)
	stop := hooks["Stop"].([]any)
	group := stop[len(stop)-1].(map[string]any)
	group["hooks"] = append(group["hooks"].([]any), map[string]any{"type": "command", "command": "notify-send done"})
	doc["theme"] = "dark"
	edited, _ := json.Marshal(doc, json.Deterministic(true))
	if err := os.WriteFile(settings, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, env, "hooks", "uninstall", "--settings", settings, "--dry-run"); r.code != 0 || !strings.Contains(r.stdout, "would remove 15") {
		t.Fatalf("dry run: %+v", r)
	}
	if b, _ := os.ReadFile(settings); string(b) != string(edited) {
		t.Fatal("the dry run wrote the file")
	}
	r := runCLI(t, env, "hooks", "uninstall", "--settings", settings)
	if r.code != 0 || strings.Contains(r.stdout, "byte for byte") {
		t.Fatalf("uninstall: %+v", r)
	}
	got, _ := os.ReadFile(settings)
	if strings.Contains(string(got), "claimcheck-hook") {
		t.Fatalf("a claimcheck hook is left:\n%s", got)
	}
	var after struct {
		Model       string                      `json:"model"`
		Theme       string                      `json:"theme"`
		Permissions map[string][]string         `json:"permissions"`
		Hooks       map[string][]jsontext.Value `json:"hooks"`
	}
	if err := json.Unmarshal(got, &after); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	if after.Model != "opus" || after.Theme != "dark" || len(after.Permissions["allow"]) != 1 {
		t.Errorf("user settings lost:\n%s", got)
	}
	for _, want := range []string{"block-rm.sh", "echo bye", "notify-send done"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("user hook %q lost:\n%s", want, got)
		}
	}
	if len(after.Hooks) != 2 {
		t.Errorf("events left: %d, want the user's PreToolUse and Stop:\n%s", len(after.Hooks), got)
	}
}

func TestHooksUninstallBadInput(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir}
	// No file: nothing to do.
	if r := runCLI(t, env, "hooks", "uninstall"); r.code != 0 || !strings.Contains(r.stdout, "nothing changed") {
		t.Fatalf("no settings file: %+v", r)
	}
	// Malformed: an error naming the file, and the file untouched.
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"hooks": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, env, "hooks", "uninstall", "--settings", bad)
	if r.code != ExitError || !strings.Contains(r.stderr, "bad.json is not a JSON object") {
		t.Fatalf("malformed: %+v", r)
	}
	if b, _ := os.ReadFile(bad); string(b) != `{"hooks": [` {
		t.Fatal("malformed file changed")
	}
	// hooks of the wrong type.
	if err := os.WriteFile(bad, []byte(`{"hooks": 3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, env, "hooks", "uninstall", "--settings", bad); r.code != ExitError || !strings.Contains(r.stderr, `"hooks" is not an object`) {
		t.Fatalf("hooks not an object: %+v", r)
	}
}

func TestBackupsNeverOverwriteEachOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	first, err := writeBackup(path, []byte("first"), 0o600, now)
	if err != nil {
		t.Fatal(err)
	}
	second, err := writeBackup(path, []byte("second"), 0o600, now)
	if err != nil {
		t.Fatal(err)
	}
	if first == second {
		t.Fatalf("both backups are %s", first)
	}
	if b, _ := os.ReadFile(first); string(b) != "first" {
		t.Fatalf("the first backup now holds %q", b)
	}
	if b, _ := os.ReadFile(second); string(b) != "second" {
		t.Fatalf("the second backup holds %q", b)
	}
}
