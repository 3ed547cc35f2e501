package pretool

import (
	"strings"
	"testing"
)

// The files that configure the agent's hooks (Claude Code, Codex, Gemini
// CLI, Cursor, Copilot) or claimcheck itself, as the corpus runtime sees
// them.
var configFiles = []string{
	"/home/dev/.claude/settings.json",
	"/home/dev/.claude/settings.local.json",
	"/home/dev/project/.claude/settings.json",
	"/home/dev/project/.claude/settings.local.json",
	"/home/dev/project/sub/.claude/settings.json",
	"/etc/claude-code/managed-settings.json",
	"/etc/claude-code/managed-settings.d/10-hooks.json",
	"/Library/Application Support/ClaudeCode/managed-settings.json",
	"/home/dev/.codex/config.toml",
	"/home/dev/.codex/hooks.json",
	"/home/dev/project/.codex/config.toml",
	"/home/dev/project/.codex/hooks.json",
	"/etc/codex/config.toml",
	"/home/dev/.gemini/settings.json",
	"/home/dev/project/.gemini/settings.json",
	"/home/dev/.cursor/hooks.json",
	"/home/dev/project/.cursor/hooks.json",
	"/home/dev/project/.github/hooks/claimcheck.json",
	"/etc/claimcheck/config.yaml",
	"/etc/claimcheck/gate-keys.json",
}

// Look-alikes of configFiles that configure nothing.
var configLookAlikes = []string{
	"/home/dev/project/.claude/settings.json.example",
	"/home/dev/project/docs/.claude/settings.json.md",
	"/home/dev/project/claude/settings.json",
	"/home/dev/project/.claude/commands/x.md",
	"/home/dev/project/.claude/agents/reviewer.md",
	"/home/dev/project/.codex/notes.md",
	"/home/dev/project/.gemini/GEMINI.md",
	"/home/dev/project/.cursor/rules/style.mdc",
	"/home/dev/project/.github/workflows/ci.yml",
	"/home/dev/project/github/hooks/x.json",
	"/home/dev/project/settings.json",
}

// configRuntime is the corpus runtime with claimcheck's configuration
// file, binary and $CODEX_HOME known, as `claimcheck up` passes them.
var configRuntime = Runtime{
	ProtectedPaths: corpusRuntime.ProtectedPaths,
	HookBinaries:   []string{"/opt/cc/bin/claimcheck-hook", "/opt/cc/bin/claimcheck-hook-tls"},
	ConfigPaths:    []string{"/opt/cc/claimcheck.yaml", "/opt/cc/bin/claimcheck", "/srv/codex/config.toml", "/srv/codex/hooks.json"},
	Home:           "/home/dev",
}

func TestAgentConfiguration(t *testing.T) { runCases(t, agentConfigCases(t)) }

func agentConfigCases(t testing.TB) []decideCase {
	p := defaultPolicy(t)
	allow := want{Allow, RuleAllowed}
	refused := want{Deny, RuleWriteProtected}
	writers := []struct{ tool, field string }{
		{"Write", "file_path"}, {"Edit", "file_path"}, {"MultiEdit", "file_path"}, {"NotebookEdit", "notebook_path"},
	}
	var cases []decideCase
	add := func(name string, in Input, rt Runtime, w want) {
		cases = append(cases, decideCase{name, p, in, rt, w})
	}
	for _, f := range configFiles {
		for _, w := range writers {
			add(w.tool+" "+f, tool(w.tool, map[string]any{w.field: f}), corpusRuntime, refused)
		}
		// Reading is allowed: the Read tool is what the refusals point to.
		add("Read "+f, tool("Read", map[string]any{"file_path": f}), corpusRuntime, allow)
		// A literal with a blank is not taken for a path in inline code
		// (shell.MaybePath): /Library/Application Support/… is beyond it.
		if !strings.Contains(f, " ") {
			add("python3 -c naming "+f, bash("python3 -c \"print(open('"+f+"').read())\""), corpusRuntime, refused)
		}
		add("cat "+f, bash("cat '"+f+"'"), corpusRuntime, allow)
	}
	for _, f := range configLookAlikes {
		for _, w := range writers {
			add(w.tool+" "+f, tool(w.tool, map[string]any{w.field: f}), corpusRuntime, allow)
		}
		add("python3 -c naming "+f, bash("python3 -c \"open('"+f+"','w')\""), corpusRuntime, allow)
	}
	// Relative paths resolve against the payload's cwd.
	for _, f := range []string{".claude/settings.json", "./.claude/../.claude/settings.local.json", "../project/.codex/hooks.json"} {
		add("Write "+f, tool("Write", map[string]any{"file_path": f}), corpusRuntime, refused)
	}
	// What claimcheck up learns at run time: its configuration file, its
	// binaries, $CODEX_HOME.
	for _, f := range []string{"/opt/cc/claimcheck.yaml", "/opt/cc/bin/claimcheck", "/srv/codex/hooks.json"} {
		add("runtime Write "+f, tool("Write", map[string]any{"file_path": f}), configRuntime, refused)
		add("runtime Read "+f, tool("Read", map[string]any{"file_path": f}), configRuntime, allow)
		add("runtime python3 -c naming "+f, bash("python3 -c \"open('"+f+"','w')\""), configRuntime, refused)
		add("no runtime Write "+f, tool("Write", map[string]any{"file_path": f}), corpusRuntime, allow)
	}
	for _, f := range []string{"/opt/cc/bin/claimcheck-hook", "/opt/cc/bin/claimcheck-hook-tls"} {
		add("runtime Write "+f, tool("Write", map[string]any{"file_path": f}), configRuntime, want{Deny, RulePrivateAccess})
		add("runtime mv "+f, bash("mv /tmp/x "+f), configRuntime, want{Deny, RulePrivateAccess})
		add("runtime run "+f, bash(f+" < event.json"), configRuntime, want{Deny, RuleHookExec})
		add("runtime python3 -c naming "+f, bash("python3 -c \"open('"+f+"','wb')\""), configRuntime, refused)
	}
	add("runtime mv the hook's directory", bash("mv /opt/cc/bin /tmp/bin"), configRuntime, want{Deny, RulePrivateAccess})
	return cases
}

// A refusal of inline code names the file, says why (claimcheck cannot
// tell a read from a write there) and points to the Read tool.
func TestInlineCodeNamingConfigurationSaysWhy(t *testing.T) {
	p := defaultPolicy(t)
	d := p.Decide(bash(`cd .claude && python3 -c "open('settings.json','w').write('{}')"`), corpusRuntime)
	if d.Decision != Deny || d.Rule != RuleWriteProtected {
		t.Fatalf("got %s %s (%s)", d.Decision, d.Rule, d.Reason)
	}
	for _, s := range []string{"/home/dev/project/.claude/settings.json", "cannot tell whether inline code reads or writes", "Read tool"} {
		if !strings.Contains(d.Reason, s) {
			t.Errorf("reason lacks %q: %s", s, d.Reason)
		}
	}
}

// A policy without a configuration list (one written before it existed)
// still loads; its protected list alone decides writes.
func TestPolicyWithoutConfigurationList(t *testing.T) {
	old := string(defaultPolicy(t).Canonical)
	start := strings.Index(old, `"configuration":[`)
	if start < 0 {
		t.Fatal("the built-in policy has no configuration list")
	}
	end := strings.Index(old[start:], "],") + start + 2
	old = old[:start] + old[end:]
	q, err := Load("old", []byte(old), validator(t))
	if err != nil {
		t.Fatalf("a policy without paths.configuration: %v", err)
	}
	if d := q.Decide(tool("Write", map[string]any{"file_path": "/home/dev/project/.codex/hooks.json"}), corpusRuntime); d.Decision != Allow {
		t.Errorf("without the list, .codex/hooks.json: %s %s", d.Decision, d.Rule)
	}
	if d := q.Decide(tool("Write", map[string]any{"file_path": "/etc/claude-code/managed-settings.json"}), corpusRuntime); d.Rule != RuleWriteProtected {
		t.Errorf("without the list, /etc/claude-code still falls under /etc: %s %s", d.Decision, d.Rule)
	}
}
