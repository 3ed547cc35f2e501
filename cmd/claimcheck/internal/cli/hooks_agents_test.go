package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// codexUserHooks is a Codex hooks.json with a hook of the user's own
// (Codex's shape: contract doc §4.7).
const codexUserHooks = `{
  "description": "team hooks",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/audit.sh", "timeout": 5}]}]
  }
}
`

// geminiUserSettings is a Gemini CLI settings.json with other settings and
// a hook of the user's own (contract doc §4.3).
const geminiUserSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "hooks": {
    "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "lint-cmd", "timeout": 2000}]}]
  }
}
`

type agentHooksFile struct {
	Hooks map[string][]struct {
		Matcher string    `json:"matcher"`
		Hooks   []handler `json:"hooks"`
	} `json:"hooks"`
}

func readAgentHooks(t *testing.T, path string) (agentHooksFile, map[string]jsontext.Value) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc agentHooksFile
	if err := json.Unmarshal(b, &doc, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var root map[string]jsontext.Value
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	return doc, root
}

func TestHooksInstallForCodexAndGemini(t *testing.T) {
	tests := []struct {
		agent, file, user, userCmd string
		events                     int
		timeoutOf                  map[string]int // event: timeout as written
		keep                       []string       // root members kept
	}{
		{"codex", filepath.Join(".codex", "hooks.json"), codexUserHooks, "/usr/local/bin/audit.sh", len(codexHookEvents),
			map[string]int{"PreToolUse": 30, "Stop": 30, "SessionEnd": 3}, []string{"description", "hooks"}},
		{"gemini", filepath.Join(".gemini", "settings.json"), geminiUserSettings, "lint-cmd", len(geminiHookEvents),
			map[string]int{"BeforeTool": 30000, "AfterAgent": 30000, "SessionEnd": 5000}, []string{"security", "hooks"}},
	}
	for _, tc := range tests {
		t.Run(tc.agent, func(t *testing.T) {
			for _, where := range []string{"home", "project"} {
				dir := t.TempDir()
				args := []string{"hooks", "install", "--agent", tc.agent, "--hook-command", fakeHook(t)}
				path := filepath.Join(dir, tc.file)
				if where == "project" {
					args = append(args, "--project", dir)
				}
				env := map[string]string{"HOME": dir}
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.user), 0o600); err != nil {
					t.Fatal(err)
				}
				r := runCLI(t, env, args...)
				if r.code != 0 || !strings.Contains(r.stdout, "added "+itoa(tc.events)) || !strings.Contains(r.stdout, "--agent "+tc.agent) {
					t.Fatalf("%s install: %+v", where, r)
				}
				doc, root := readAgentHooks(t, path)
				for _, k := range tc.keep {
					if _, ok := root[k]; !ok {
						t.Errorf("%s: member %q lost", where, k)
					}
				}
				if len(root) != len(tc.keep) {
					t.Errorf("%s: root members %v, want only %v", where, len(root), tc.keep)
				}
				if len(doc.Hooks) != tc.events {
					t.Errorf("%s: %d events have hooks, want %d", where, len(doc.Hooks), tc.events)
				}
				userKept := false
				for ev, groups := range doc.Hooks {
					n := 0
					for _, g := range groups {
						for _, h := range g.Hooks {
							if h.Command == tc.userCmd {
								userKept = true
							}
							if isClaimcheckHook(h.Command) {
								n++
								if !strings.HasSuffix(h.Command, " --agent "+tc.agent) || h.Type != "command" {
									t.Errorf("%s: %s handler %+v", where, ev, h)
								}
								if want, ok := tc.timeoutOf[ev]; ok && h.Timeout != want {
									t.Errorf("%s: %s timeout %d, want %d", where, ev, h.Timeout, want)
								}
							}
						}
					}
					if n != 1 {
						t.Errorf("%s: %s has %d claimcheck handlers", where, ev, n)
					}
				}
				if !userKept {
					t.Errorf("%s: the user's own hook was dropped", where)
				}
				// Idempotent: nothing to change, nothing written.
				before, _ := os.ReadFile(path)
				if r := runCLI(t, env, args...); r.code != 0 || !strings.Contains(r.stdout, "nothing changed") {
					t.Fatalf("%s second install: %+v", where, r)
				}
				if after, _ := os.ReadFile(path); string(after) != string(before) {
					t.Errorf("%s: the second install changed the file", where)
				}
				if backups, _ := filepath.Glob(path + ".bak-*"); len(backups) != 1 {
					t.Errorf("%s: backups %v, want the one of the first install", where, backups)
				}
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestHooksInstallForAgentsRefusesWhatItCannotParse(t *testing.T) {
	dir := t.TempDir()
	for _, agent := range []string{"codex", "gemini", "claude"} {
		path := filepath.Join(dir, agent+".json")
		// Gemini CLI tolerates comments in settings.json; claimcheck does not
		// rewrite what it cannot parse.
		bad := "{\n  \"hooks\": {},\n  // a comment\n  \"x\": 1\n}\n"
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, map[string]string{"HOME": dir}, "hooks", "install", "--agent", agent, "--settings", path, "--hook-command", fakeHook(t))
		if r.code == 0 || !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, "line 3") {
			t.Errorf("%s: %+v, want an error naming the file and line 3", agent, r)
		}
		if b, _ := os.ReadFile(path); string(b) != bad {
			t.Errorf("%s: file changed to %s", agent, b)
		}
	}
	for _, args := range [][]string{
		{"--agent", "windsurf"},
		{"--agent", "codex", "--sandbox"},
		{"--agent", "gemini", "--managed"},
	} {
		r := runCLI(t, map[string]string{"HOME": dir}, append([]string{"hooks", "install", "--hook-command", fakeHook(t)}, args...)...)
		if r.code == 0 {
			t.Errorf("%v accepted: %+v", args, r)
		}
	}
}

func TestHooksInstallForClaudeIntoAProject(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	r := runCLI(t, map[string]string{"HOME": home}, "hooks", "install", "--project", project, "--hook-command", fakeHook(t))
	if r.code != 0 || !strings.Contains(r.stdout, filepath.Join(project, ".claude", "settings.json")) {
		t.Fatalf("install: %+v", r)
	}
	doc, _ := readAgentHooks(t, filepath.Join(project, ".claude", "settings.json"))
	if len(doc.Hooks) != len(hookEvents) {
		t.Errorf("%d events have hooks, want %d", len(doc.Hooks), len(hookEvents))
	}
	for _, groups := range doc.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if strings.Contains(h.Command, "--agent") {
					t.Errorf("Claude Code's hook command %q names a dialect: existing installs are detected, and stay as they were", h.Command)
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); err == nil {
		t.Error("the user's settings were written too")
	}
}

// TestHooksUninstallForCodexAndGemini: uninstall --agent gives the agent's
// file back as it was before install, byte for byte.
func TestHooksUninstallForCodexAndGemini(t *testing.T) {
	for _, tc := range []struct{ agent, file, user string }{
		{"codex", filepath.Join(".codex", "hooks.json"), codexUserHooks},
		{"gemini", filepath.Join(".gemini", "settings.json"), geminiUserSettings},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			project := t.TempDir()
			path := filepath.Join(project, tc.file)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.user), 0o600); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"HOME": t.TempDir()}
			if r := runCLI(t, env, "hooks", "install", "--agent", tc.agent, "--project", project, "--hook-command", fakeHook(t)); r.code != 0 {
				t.Fatalf("install: %+v", r)
			}
			r := runCLI(t, env, "hooks", "uninstall", "--agent", tc.agent, "--project", project)
			if r.code != 0 || !strings.Contains(r.stdout, "byte for byte") {
				t.Fatalf("uninstall: %+v", r)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.user {
				t.Fatalf("after install and uninstall the file is\n%s\nwant\n%s", got, tc.user)
			}
		})
	}
	r := runCLI(t, map[string]string{"HOME": t.TempDir()}, "hooks", "uninstall", "--agent", "gemini", "--managed")
	if r.code == 0 {
		t.Errorf("uninstall --agent gemini --managed accepted: %+v", r)
	}
}
