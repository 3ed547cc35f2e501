package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// cursorUserHooks is a Cursor hooks.json with hooks of the user's own
// (Cursor's hooks documentation, "Configuration file").
const cursorUserHooks = `{
  "version": 1,
  "hooks": {
    "beforeShellExecution": [{ "command": "./hooks/audit.sh" }],
    "afterFileEdit": [{ "command": "./hooks/format.sh" }]
  }
}
`

// copilotUserHooks is a Copilot hook file of the user's own, already named
// as claimcheck's (Copilot CLI hooks reference, "Command hooks").
const copilotUserHooks = `{
  "version": 1,
  "hooks": {
    "preToolUse": [{"type": "command", "bash": "./scripts/audit.sh", "powershell": "./scripts/audit.ps1", "timeoutSec": 5}]
  }
}
`

type flatHooksFile struct {
	Version int `json:"version"`
	Hooks   map[string][]struct {
		Type       string `json:"type"`
		Command    string `json:"command"`
		Bash       string `json:"bash"`
		TimeoutSec int    `json:"timeoutSec"`
	} `json:"hooks"`
}

func readFlatHooks(t *testing.T, path string) (flatHooksFile, map[string]jsontext.Value) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc flatHooksFile
	if err := json.Unmarshal(b, &doc, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var root map[string]jsontext.Value
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	return doc, root
}

// TestHooksInstallForCursorAndCopilot: install merges claimcheck-hook into
// the user's and the project's file, keeping the user's own hooks, is
// idempotent, and for Copilot passes each event with --event.
func TestHooksInstallForCursorAndCopilot(t *testing.T) {
	tests := []struct {
		agent, homeFile, projectFile, user, userCmd string
		events                                      int
	}{
		{"cursor", filepath.Join(".cursor", "hooks.json"), filepath.Join(".cursor", "hooks.json"), cursorUserHooks, "./hooks/audit.sh",
			len(cursorHookEvents)},
		{"copilot", filepath.Join(".copilot", "hooks", "claimcheck.json"), filepath.Join(".github", "hooks", "claimcheck.json"),
			copilotUserHooks, "./scripts/audit.sh", len(copilotHookEvents)},
	}
	for _, tc := range tests {
		t.Run(tc.agent, func(t *testing.T) {
			for _, where := range []string{"home", "project", "new file"} {
				dir := t.TempDir()
				args := []string{"hooks", "install", "--agent", tc.agent, "--hook-command", fakeHook(t)}
				path := filepath.Join(dir, tc.homeFile)
				if where != "home" {
					args = append(args, "--project", dir)
					path = filepath.Join(dir, tc.projectFile)
				}
				env := map[string]string{"HOME": dir}
				if where != "new file" {
					if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(tc.user), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				r := runCLI(t, env, args...)
				if r.code != 0 || !strings.Contains(r.stdout, "added "+itoa(tc.events)) || !strings.Contains(r.stdout, "--agent "+tc.agent) {
					t.Fatalf("%s install: %+v", where, r)
				}
				doc, root := readFlatHooks(t, path)
				if doc.Version != 1 || len(root) != 2 {
					t.Errorf("%s: version %d, root members %d, want 1 and 2", where, doc.Version, len(root))
				}
				if len(doc.Hooks) != tc.events {
					t.Errorf("%s: %d events have hooks, want %d", where, len(doc.Hooks), tc.events)
				}
				userKept := where == "new file"
				for ev, handlers := range doc.Hooks {
					n := 0
					for _, h := range handlers {
						cmd := h.Command
						if tc.agent == "copilot" {
							cmd = h.Bash
						}
						if cmd == tc.userCmd {
							userKept = true
						}
						if !isClaimcheckHook(cmd) {
							continue
						}
						n++
						want := " --agent " + tc.agent
						if tc.agent == "copilot" {
							want += " --event " + ev
							if h.Type != "command" || h.TimeoutSec == 0 {
								t.Errorf("%s: %s handler %+v", where, ev, h)
							}
						}
						if !strings.HasSuffix(cmd, want) {
							t.Errorf("%s: %s command %q, want it to end %q", where, ev, cmd, want)
						}
					}
					if n != 1 {
						t.Errorf("%s: %s has %d claimcheck handlers", where, ev, n)
					}
				}
				if !userKept {
					t.Errorf("%s: the user's own hook was dropped", where)
				}
				before, _ := os.ReadFile(path)
				if r := runCLI(t, env, args...); r.code != 0 || !strings.Contains(r.stdout, "nothing changed") {
					t.Fatalf("%s second install: %+v", where, r)
				}
				if after, _ := os.ReadFile(path); string(after) != string(before) {
					t.Errorf("%s: the second install changed the file", where)
				}
			}
		})
	}
}

// TestHooksInstallForCursorAndCopilotRefusesWhatItCannotParse names the
// file, line and column and leaves the file as it was.
func TestHooksInstallForCursorAndCopilotRefusesWhatItCannotParse(t *testing.T) {
	dir := t.TempDir()
	for _, agent := range []string{"cursor", "copilot"} {
		path := filepath.Join(dir, agent+".json")
		bad := "{\n  \"version\": 1,\n  \"hooks\": {\"stop\": [{\"command\": \"x\"},]}\n}\n"
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, verb := range []string{"install", "uninstall"} {
			args := []string{"hooks", verb, "--agent", agent, "--settings", path}
			if verb == "install" {
				args = append(args, "--hook-command", fakeHook(t))
			}
			r := runCLI(t, map[string]string{"HOME": dir}, args...)
			if r.code == 0 || !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, "line 3, column") {
				t.Errorf("%s %s: %+v, want an error naming the file, line 3 and the column", agent, verb, r)
			}
			if b, _ := os.ReadFile(path); string(b) != bad {
				t.Errorf("%s %s: file changed to %s", agent, verb, b)
			}
		}
	}
	for _, args := range [][]string{{"--agent", "cursor", "--sandbox"}, {"--agent", "copilot", "--managed"}} {
		r := runCLI(t, map[string]string{"HOME": dir}, append([]string{"hooks", "install", "--hook-command", fakeHook(t)}, args...)...)
		if r.code == 0 {
			t.Errorf("%v accepted: %+v", args, r)
		}
	}
}

// TestHooksUninstallForCursorAndCopilot: uninstall gives the file back as
// it was before install, byte for byte, and removes a file install
// created.
func TestHooksUninstallForCursorAndCopilot(t *testing.T) {
	for _, tc := range []struct{ agent, file, user string }{
		{"cursor", filepath.Join(".cursor", "hooks.json"), cursorUserHooks},
		{"copilot", filepath.Join(".github", "hooks", "claimcheck.json"), copilotUserHooks},
		{"cursor", filepath.Join(".cursor", "hooks.json"), ""},
		{"copilot", filepath.Join(".github", "hooks", "claimcheck.json"), ""},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			project := t.TempDir()
			path := filepath.Join(project, tc.file)
			if tc.user != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.user), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"HOME": t.TempDir()}
			if r := runCLI(t, env, "hooks", "install", "--agent", tc.agent, "--project", project, "--hook-command", fakeHook(t)); r.code != 0 {
				t.Fatalf("install: %+v", r)
			}
			r := runCLI(t, env, "hooks", "uninstall", "--agent", tc.agent, "--project", project)
			if tc.user == "" {
				if _, err := os.Stat(path); r.code != 0 || !os.IsNotExist(err) || !strings.Contains(r.stdout, "removed, as before install") {
					t.Fatalf("uninstall of a file install created: %+v (stat: %v)", r, err)
				}
				return
			}
			if r.code != 0 || !strings.Contains(r.stdout, "byte for byte") {
				t.Fatalf("uninstall: %+v", r)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.user {
				t.Fatalf("after install and uninstall the file is\n%s\nwant\n%s", got, tc.user)
			}
		})
	}
}

// TestHooksInstallForCopilotUnderCopilotHome: with $COPILOT_HOME set, the
// user-level file is $COPILOT_HOME/hooks/claimcheck.json.
func TestHooksInstallForCopilotUnderCopilotHome(t *testing.T) {
	home, copilotHome := t.TempDir(), t.TempDir()
	r := runCLI(t, map[string]string{"HOME": home, "COPILOT_HOME": copilotHome}, "hooks", "install", "--agent", "copilot",
		"--hook-command", fakeHook(t))
	path := filepath.Join(copilotHome, "hooks", "claimcheck.json")
	if r.code != 0 || !strings.Contains(r.stdout, path) {
		t.Fatalf("install: %+v", r)
	}
	if doc, _ := readFlatHooks(t, path); len(doc.Hooks) != len(copilotHookEvents) {
		t.Errorf("%d events have hooks, want %d", len(doc.Hooks), len(copilotHookEvents))
	}
	if _, err := os.Stat(filepath.Join(home, ".copilot")); err == nil {
		t.Error("~/.copilot was written too")
	}
}
