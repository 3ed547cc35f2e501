package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/hookconfig"
	"github.com/claimcheck/claimcheck/schemas"
)

// TestHooksVerify: install into a project's settings records what it wrote
// and verify passes; each kind of drift makes verify exit 1 and say why.
func TestHooksVerify(t *testing.T) {
	home := t.TempDir()
	project := filepath.Join(t.TempDir(), "proj")
	managed := filepath.Join(t.TempDir(), "managed")
	settings := filepath.Join(project, ".claude", "settings.json")
	local := filepath.Join(project, ".claude", "settings.local.json")
	env := map[string]string{"HOME": home}
	hook := fakeHook(t)
	if r := runCLI(t, env, "hooks", "install", "--settings", settings, "--hook-command", hook); r.code != 0 ||
		!strings.Contains(r.stdout, "recorded the installed hook command") {
		t.Fatalf("install: %+v", r)
	}
	rec, ok, err := hookconfig.LoadInstallation(installRecordPath(func(k string) string { return env[k] }))
	if err != nil || !ok || rec.Settings != settings || !strings.HasPrefix(rec.Command, hook) || len(rec.Events) != len(schemas.HookEvents) {
		t.Fatalf("install record %+v ok=%v err=%v", rec, ok, err)
	}
	verify := func(args ...string) res {
		return runCLI(t, env, append([]string{"hooks", "verify", "--project", project, "--managed-settings-dir", managed}, args...)...)
	}
	r := verify()
	if r.code != 0 || !strings.Contains(r.stdout, "verdict: gated") || !strings.Contains(r.stdout, "15/15") ||
		!strings.Contains(r.stdout, "from the install record") {
		t.Fatalf("verify after install: %+v", r)
	}
	orig, _ := os.ReadFile(settings)
	write := func(path, body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, path, body, want string
	}{
		{"settings overwritten", settings, "{}", "verdict: none"},
		{"Stop removed", settings, strings.Replace(string(orig), `"Stop"`, `"Stopped"`, 1), "unhandled: Stop"},
		{"another command", settings, strings.ReplaceAll(string(orig), hook, hook+" --fail-open Stop"), "verdict: changed"},
		{"disableAllHooks", local, `{"disableAllHooks":true}`, "do not run: disableAllHooks in " + local},
		{"look-alike", settings, strings.ReplaceAll(string(orig), hook, filepath.Join(filepath.Dir(hook), "not-claimcheck-hook")), "verdict: none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			write(tt.path, tt.body)
			defer func() { write(settings, string(orig)); _ = os.Remove(local) }()
			r := verify()
			if r.code != ExitFault || !strings.Contains(r.stdout, tt.want) || !strings.Contains(r.stdout, "Run `claimcheck hooks install`") {
				t.Fatalf("code %d, want %d and %q:\n%s%s", r.code, ExitFault, tt.want, r.stdout, r.stderr)
			}
		})
	}
	// Managed hooks with allowManagedHooksOnly gate the project's sessions
	// whatever the project's settings say.
	if err := os.MkdirAll(managed, 0o755); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(managed, "managed-settings.json"), strings.Replace(string(orig), "{", `{"allowManagedHooksOnly":true,`, 1))
	write(settings, "{}")
	r = verify("--json")
	var rep verifyReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if r.code != 0 || rep.Verdict != schemas.HooksGated || !rep.Layers[0].AllowManagedHooksOnly || len(rep.Layers[0].Events) != 15 ||
		rep.Layers[0].Commands[0] != rec.Command {
		t.Fatalf("managed: code %d %+v", r.code, rep)
	}
	if r := runCLI(t, env, "hooks", "verify", "--project", project, "extra"); r.code != ExitError {
		t.Fatalf("usage error: %+v", r)
	}
}
