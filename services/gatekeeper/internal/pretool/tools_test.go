package pretool

import (
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

type want struct{ decision, rule string }

func check(t *testing.T, p *Policy, name string, in Input, rt Runtime, w want) {
	t.Helper()
	got := p.Decide(in, rt)
	if got.Decision != w.decision || got.Rule != w.rule {
		t.Errorf("%s: got %s %s (%s), want %s %s", name, got.Decision, got.Rule, got.Reason, w.decision, w.rule)
	}
	if got.Decision != Allow && got.Reason == "" {
		t.Errorf("%s: %s without a reason", name, got.Decision)
	}
	if got.Decision == Allow && got.Rule != RuleAllowed {
		t.Errorf("%s: allow with rule %q", name, got.Rule)
	}
}

// decideCase is one call the tests below decide; the golden table
// (golden_test.go) records the decisions of all of them.
type decideCase struct {
	name string
	p    *Policy
	in   Input
	rt   Runtime
	want want
}

func runCases(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, c := range cases {
		check(t, c.p, c.name, c.in, c.rt, c.want)
	}
}

// toolCases are the cases of the tools tests, by test.
func toolCases(t testing.TB) map[string][]decideCase {
	return map[string][]decideCase{
		"TestFileTools":          fileToolCases(t),
		"TestAgentConfiguration": agentConfigCases(t),
		"TestSymbolicHome":       symbolicHomeCases(t),
		"TestAgentTools":         agentToolCases(t),
		"TestToolRuleLists":      toolRuleListCases(t),
		"TestMalformedInput":     malformedInputCases(t),
		"TestSizeCaps":           sizeCapCases(t),
		"TestShellLimits":        shellLimitCases(t),
	}
}

func TestFileTools(t *testing.T) { runCases(t, fileToolCases(t)) }

func fileToolCases(t testing.TB) []decideCase {
	p := defaultPolicy(t)
	allow := want{Allow, RuleAllowed}
	tests := []struct {
		tool, field, path string
		want              want
	}{
		// Sensitive reads need the human.
		{"Read", "file_path", "/home/dev/project/.env", want{Ask, RuleReadSensitive}},
		{"Read", "file_path", "/home/dev/project/.env.local", want{Ask, RuleReadSensitive}},
		{"Read", "file_path", "/home/dev/project/.env.example", allow},
		{"Read", "file_path", "/home/dev/project/.env.sample", allow},
		{"Read", "file_path", "/home/dev/.ssh/id_rsa", want{Ask, RuleReadSensitive}},
		{"Read", "file_path", "/home/dev/.ssh/id_ed25519", want{Ask, RuleReadSensitive}},
		{"Read", "file_path", "/home/dev/.ssh/deploy_key", want{Ask, RuleReadSensitive}},
		{"Read", "file_path", "/home/dev/.ssh/id_rsa.pub", allow},
		{"Read", "file_path", "/home/dev/.ssh/known_hosts", allow},
		{"Read", "file_path", "/home/dev/.aws/credentials", want{Ask, RuleReadSensitive}},
		{"Read", "file_path", "/home/dev/.aws/config", allow},
		{"Read", "file_path", "/home/dev/.netrc", want{Ask, RuleReadSensitive}},
		{"Read", "file_path", "/home/dev/.docker/config.json", want{Ask, RuleReadSensitive}},
		{"Read", "file_path", "certs/server.pem", want{Ask, RuleReadSensitive}},
		{"Read", "file_path", "/home/dev/project/tls/server.key", want{Ask, RuleReadSensitive}},
		{"Read", "file_path", "/home/dev/project/credentials.json", want{Ask, RuleReadSensitive}},
		{"Read", "file_path", "/home/dev/project/credentials_test.go", allow},
		{"Read", "file_path", "/home/dev/project/main.go", allow},
		{"Read", "file_path", `C:\Users\dev\project\.env`, want{Ask, RuleReadSensitive}},
		{"NotebookRead", "notebook_path", "/home/dev/project/.env", want{Ask, RuleReadSensitive}},
		// claimcheck's own files: neither read nor written.
		{"Read", "file_path", "/home/dev/.local/share/claimcheck/keys/v1.key", want{Deny, RulePrivateAccess}},
		{"Read", "file_path", "/home/dev/.local/state/claimcheck/hook/gate-keys.json", want{Deny, RulePrivateAccess}},
		{"Read", "file_path", "/var/lib/claimcheck/nats/jetstream/x", want{Deny, RulePrivateAccess}},
		{"Read", "file_path", "/home/dev/.config/claimcheck/config.yaml", want{Deny, RulePrivateAccess}},
		{"Read", "file_path", "../.local/share/claimcheck/keys/v1.key", want{Deny, RulePrivateAccess}},
		{"Read", "file_path", "/usr/local/bin/claimcheck-hook", allow},
		{"Edit", "file_path", "/home/dev/.local/share/claimcheck/config", want{Deny, RulePrivateAccess}},
		{"Write", "file_path", "/usr/local/bin/claimcheck-hook", want{Deny, RulePrivateAccess}},
		// Protected writes are refused; sensitive writes need the human.
		{"Write", "file_path", "/etc/hosts", want{Deny, RuleWriteProtected}},
		{"Write", "file_path", "/etc/../etc/hosts", want{Deny, RuleWriteProtected}},
		{"Write", "file_path", "/home/dev/project/../../../etc/passwd", want{Deny, RuleWriteProtected}},
		{"Write", "file_path", "../.ssh/authorized_keys", want{Deny, RuleWriteProtected}},
		{"Write", "file_path", "/home/dev/.ssh/authorized_keys", want{Deny, RuleWriteProtected}},
		{"Write", "file_path", "/home/dev/.claude/settings.json", want{Deny, RuleWriteProtected}},
		{"Edit", "file_path", "/home/dev/project/.claude/settings.local.json", want{Deny, RuleWriteProtected}},
		{"MultiEdit", "file_path", "/etc/ssh/sshd_config", want{Deny, RuleWriteProtected}},
		{"NotebookEdit", "notebook_path", "/usr/lib/x.ipynb", want{Deny, RuleWriteProtected}},
		{"Write", "file_path", "/home/dev/project/.env", want{Ask, RuleWriteSensitive}},
		{"Edit", "file_path", "/home/dev/project/deploy/id_rsa", want{Ask, RuleWriteSensitive}},
		{"Write", "file_path", "/home/dev/project/main.go", allow},
		{"Write", "file_path", "/home/dev/project/.claude/agents/reviewer.md", allow},
		{"Edit", "file_path", "/home/dev/project/.env.example", allow},
		// Search tools: contents for Grep, names for Glob and LS.
		{"Grep", "path", "/home/dev/.local/state/claimcheck", want{Deny, RulePrivateAccess}},
		{"Grep", "path", "/home/dev/project/.env", want{Ask, RuleReadSensitive}},
		{"Grep", "path", "/home/dev/project", allow},
		{"Glob", "path", "/home/dev/.local/share/claimcheck", want{Deny, RulePrivateAccess}},
		{"Glob", "path", "/home/dev/.ssh", allow},
		{"LS", "path", "/var/lib/claimcheck/nats", want{Deny, RulePrivateAccess}},
	}
	var cases []decideCase
	for _, tt := range tests {
		in := map[string]any{tt.field: tt.path}
		switch tt.tool {
		case "Write":
			in["content"] = "x"
		case "Edit":
			in["old_string"], in["new_string"] = "a", "b"
		case "Grep", "Glob":
			in["pattern"] = "TODO"
		}
		cases = append(cases, decideCase{tt.tool + " " + tt.path, p, tool(tt.tool, in), corpusRuntime, tt.want})
	}
	return cases
}

// Without a known home, ~ stays symbolic: policy patterns anchored at ~
// still match commands that use ~ or $HOME, and unanchored patterns match
// any path.
func TestSymbolicHome(t *testing.T) { runCases(t, symbolicHomeCases(t)) }

func symbolicHomeCases(t testing.TB) []decideCase {
	p := defaultPolicy(t)
	var cases []decideCase
	for _, tt := range []struct {
		in   Input
		want want
	}{
		{bash("rm -rf ~"), want{Deny, RuleRmRoot}},
		{bash("rm -rf $HOME/"), want{Deny, RuleRmRoot}},
		{bash("cd && rm -rf *"), want{Deny, RuleRmRoot}},
		{bash("rm -rf ~/.."), want{Deny, RuleRmRoot}},
		{bash("cat ~/.local/share/claimcheck/keys/v1.key"), want{Deny, RulePrivateAccess}},
		{bash("echo x >> ~/.ssh/authorized_keys"), want{Deny, RuleWriteProtected}},
		{bash("cat ~/.aws/credentials"), want{Ask, RuleReadSensitive}},
		{bash("rm -rf /home/dev"), want{Deny, RuleRmRoot}},
		{bash("rm -rf ~/project/build"), want{Allow, RuleAllowed}},
		{bash("cat '~/.env'"), want{Ask, RuleReadSensitive}},
		{tool("Read", map[string]any{"file_path": "/home/dev/.ssh/id_rsa"}), want{Ask, RuleReadSensitive}},
	} {
		cases = append(cases, decideCase{string(tt.in.ToolInput), p, tt.in, Runtime{}, tt.want})
	}
	return cases
}

func TestAgentTools(t *testing.T) { runCases(t, agentToolCases(t)) }

func agentToolCases(t testing.TB) []decideCase {
	p := defaultPolicy(t)
	ls := []byte(`{"command":"ls"}`)
	read := []byte(`{"file_path":"/home/dev/project/a.go"}`)
	write := []byte(`{"file_path":"/home/dev/project/a.go","content":"x"}`)
	tests := []struct {
		agent, tool string
		input       []byte
		want        want
	}{
		{"", "Bash", ls, want{Allow, RuleAllowed}},
		{"", "Read", read, want{Allow, RuleAllowed}},
		{"", "mcp__github__create_issue", []byte(`{"title":"x"}`), want{Allow, RuleAllowed}},
		{"", "mcp__plugin_x_srv__tool", []byte(`{}`), want{Allow, RuleAllowed}},
		{"", "Agent", []byte(`{"prompt":"x","subagent_type":"Explore"}`), want{Allow, RuleAllowed}},
		{"", "BrandNewTool", []byte(`{}`), want{Ask, RuleToolNotAllowed}},
		{"Explore", "Read", read, want{Allow, RuleAllowed}},
		{"Explore", "Bash", ls, want{Allow, RuleAllowed}},
		{"Explore", "Write", write, want{Deny, RuleToolNotAllowed}},
		{"Explore", "Edit", write, want{Deny, RuleToolNotAllowed}},
		{"Explore", "Agent", []byte(`{}`), want{Deny, RuleToolNotAllowed}},
		{"Explore", "mcp__github__create_issue", []byte(`{}`), want{Deny, RuleToolNotAllowed}},
		{"Plan", "Write", write, want{Deny, RuleToolNotAllowed}},
		{"security-reviewer", "Write", write, want{Allow, RuleAllowed}},
		{"my-plugin:reviewer", "mcp__x__y", []byte(`{}`), want{Allow, RuleAllowed}},
		{"security-reviewer", "BrandNewTool", []byte(`{}`), want{Deny, RuleToolNotAllowed}},
		{"explore", "Write", write, want{Allow, RuleAllowed}}, // agent types match exactly
		{"", "", []byte(`{}`), want{Deny, RuleInputMalformed}},
	}
	var cases []decideCase
	for _, tt := range tests {
		in := Input{AgentType: tt.agent, ToolName: tt.tool, ToolInput: tt.input, Cwd: corpusCwd}
		cases = append(cases, decideCase{tt.agent + "/" + tt.tool, p, in, corpusRuntime, tt.want})
	}
	return cases
}

func TestToolRuleLists(t *testing.T) { runCases(t, toolRuleListCases(t)) }

func toolRuleListCases(t testing.TB) []decideCase {
	v := validator(t)
	base := defaultPolicy(t)
	doc := strings.Replace(string(base.Canonical), `"otherwise":"ask"`, `"ask":["Bash","WebFetch"],"deny":["mcp__evil__*"],"otherwise":"deny"`, 1)
	p, err := Load("custom.json", []byte(doc), v)
	if err != nil {
		t.Fatal(err)
	}
	var cases []decideCase
	for _, tt := range []struct {
		name string
		in   Input
		want want
	}{
		{"deny beats allow", Input{ToolName: "mcp__evil__steal", ToolInput: []byte(`{}`)}, want{Deny, RuleToolNotAllowed}},
		{"allow by glob", Input{ToolName: "mcp__good__read", ToolInput: []byte(`{}`)}, want{Allow, RuleAllowed}},
		{"ask list", bash("ls"), want{Ask, RuleToolAsk}},
		{"content deny beats tool ask", bash("rm -rf /"), want{Deny, RuleRmRoot}},
		{"content ask keeps the first ask", bash("cat .env"), want{Ask, RuleToolAsk}},
		{"url deny beats tool ask", fetch("http://127.0.0.1/"), want{Deny, RuleURLPrivate}},
		{"otherwise deny", Input{ToolName: "BrandNewTool", ToolInput: []byte(`{}`)}, want{Deny, RuleToolNotAllowed}},
	} {
		cases = append(cases, decideCase{tt.name, p, tt.in, corpusRuntime, tt.want})
	}
	return cases
}

func TestMalformedInput(t *testing.T) { runCases(t, malformedInputCases(t)) }

func malformedInputCases(t testing.TB) []decideCase {
	p := defaultPolicy(t)
	malformed := want{Deny, RuleInputMalformed}
	tests := []struct {
		name, tool, input string
		want              want
	}{
		{"command not a string", "Bash", `{"command":5}`, malformed},
		{"command missing", "Bash", `{"description":"x"}`, malformed},
		{"command null", "Bash", `{"command":null}`, malformed},
		{"empty object", "PowerShell", `{}`, malformed},
		{"array", "Bash", `["rm -rf /"]`, malformed},
		{"not JSON", "Bash", `rm -rf /`, malformed},
		{"truncated", "Bash", `{"command":"ls"`, malformed},
		{"duplicate member", "Bash", `{"command":"ls","command":"rm -rf /"}`, malformed},
		{"invalid UTF-8", "Bash", "{\"command\":\"ls \xff\"}", malformed},
		{"NUL in command", "Bash", `{"command":"ls\u0000rm -rf /"}`, malformed},
		{"empty input", "Bash", ``, malformed},
		{"file_path missing", "Read", `{"offset":1}`, malformed},
		{"file_path wrong type", "Write", `{"file_path":["/etc/hosts"],"content":"x"}`, malformed},
		{"file_path empty", "Edit", `{"file_path":""}`, malformed},
		{"url missing", "WebFetch", `{"prompt":"x"}`, malformed},
		{"url empty", "WebFetch", `{"url":""}`, malformed},
		{"url wrong type", "WebFetch", `{"url":{"href":"http://x"}}`, malformed},
		{"grep without pattern", "Grep", `{"path":"."}`, malformed},
		{"unknown tool, invalid JSON", "mcp__x__y", `{"a":`, malformed},
		{"unknown tool, valid JSON", "mcp__x__y", `{"a":1}`, want{Allow, RuleAllowed}},
		{"unknown tool, no input", "TodoWrite", ``, want{Allow, RuleAllowed}},
		{"extra members are fine", "Bash", `{"command":"ls","timeout":120000,"run_in_background":false,"dangerouslyDisableSandbox":true}`, want{Allow, RuleAllowed}},
	}
	var cases []decideCase
	for _, tt := range tests {
		cases = append(cases, decideCase{tt.name, p, Input{ToolName: tt.tool, ToolInput: []byte(tt.input), Cwd: corpusCwd}, corpusRuntime, tt.want})
	}
	return cases
}

func TestSizeCaps(t *testing.T) { runCases(t, sizeCapCases(t)) }

func sizeCapCases(t testing.TB) []decideCase {
	p := defaultPolicy(t)
	big := strings.Repeat("a", p.Limits.MaxToolInputBytes)
	return []decideCase{
		{"tool_input", p, tool("mcp__x__y", map[string]any{"blob": big}), corpusRuntime, want{Deny, RuleInputTooLarge}},
		{"write content", p, tool("Write", map[string]any{"file_path": "/home/dev/project/a", "content": big}), corpusRuntime, want{Deny, RuleInputTooLarge}},
		{"command", p, bash("echo " + strings.Repeat("x", p.Limits.MaxCommandBytes)), corpusRuntime, want{Deny, RuleShellTooLong}},
		{"command at the cap", p, bash("echo " + strings.Repeat("x", p.Limits.MaxCommandBytes-5)), corpusRuntime, want{Allow, RuleAllowed}},
		{"url", p, fetch("https://example.com/" + strings.Repeat("a", p.Limits.MaxURLBytes)), corpusRuntime, want{Deny, RuleURLTooLong}},
		{"url at the cap", p, fetch("https://example.com/" + strings.Repeat("a", p.Limits.MaxURLBytes-20)), corpusRuntime, want{Allow, RuleAllowed}},
	}
}

func TestShellLimits(t *testing.T) { runCases(t, shellLimitCases(t)) }

func shellLimitCases(t testing.TB) []decideCase {
	p := defaultPolicy(t)
	// bash -c nested one level deeper than the cap.
	tooDeep := "ls"
	for range p.Limits.MaxShellDepth + 1 {
		tooDeep = "bash -c " + shell.Quote(tooDeep)
	}
	atCap := "ls"
	for range p.Limits.MaxShellDepth {
		atCap = "bash -c " + shell.Quote(atCap)
	}
	return []decideCase{
		{"nesting", p, bash(tooDeep), corpusRuntime, want{Ask, RuleShellTooDeep}},
		{"nesting at the cap", p, bash(atCap), corpusRuntime, want{Allow, RuleAllowed}},
		{"nested destruction past the cap still found first", p, bash("rm -rf / ; " + strings.Repeat("bash -c '", 1) + "ls'"), corpusRuntime, want{Deny, RuleRmRoot}},
		{"brace bomb", p, bash("echo {1..100}{1..100}"), corpusRuntime, want{Ask, RuleShellTooComplex}},
		{"many statements", p, bash(strings.Repeat("true; ", 5000) + "rm -rf /"), corpusRuntime, want{Deny, RuleRmRoot}},
		{"growing variable", p, bash("x=ab; " + strings.Repeat("x=$x$x; ", 40) + "echo $x"), corpusRuntime, want{Allow, RuleAllowed}},
		{"growing variable as a program", p, bash("x=ab; " + strings.Repeat("x=$x$x; ", 40) + "$x"), corpusRuntime, want{Ask, RuleDynamicCommand}},
	}
}

func TestDecideWithoutPolicy(t *testing.T) {
	var p *Policy
	if d := p.Decide(bash("ls"), Runtime{}); d.Decision != Deny || d.Rule != RuleInternal {
		t.Fatalf("nil policy: %+v", d)
	}
	if d := (&Policy{}).Decide(bash("ls"), Runtime{}); d.Decision != Deny || d.Rule != RuleInternal {
		t.Fatalf("unloaded policy: %+v", d)
	}
}

func TestReasons(t *testing.T) {
	p := defaultPolicy(t)
	d := p.Decide(bash("sudo rm -rf /"), corpusRuntime)
	for _, s := range []string{"refused", "rm -rf /", "system or home directory", "./build"} {
		if !strings.Contains(d.Reason, s) {
			t.Errorf("deny reason %q lacks %q", d.Reason, s)
		}
	}
	d = p.Decide(tool("Read", map[string]any{"file_path": "/home/dev/project/.env"}), corpusRuntime)
	for _, s := range []string{"Read", "/home/dev/project/.env", ".env", "secrets"} {
		if !strings.Contains(d.Reason, s) {
			t.Errorf("ask reason %q lacks %q", d.Reason, s)
		}
	}
}
