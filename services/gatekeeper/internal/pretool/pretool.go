// Package pretool decides Claude Code's PreToolUse hook: may the agent make
// this tool call (allow), must it not (deny, with a reason written for the
// agent), or does the human decide (ask, with a reason for the human)?
//
// The decision is a pure, deterministic function of the call (agent type,
// tool name, raw tool_input, cwd), the policy (a pretool.v1 document) and
// the paths known only at run time. It never resolves names, reads files or
// runs anything:
//   - tool access per agent type, with globs for MCP tools (mcp__server__*);
//   - shell commands (Bash, and PowerShell through the same Bash parser) are
//     parsed with mvdan.cc/sh/v3 into a syntax tree, never matched with
//     regular expressions; words are evaluated statically (quotes, escapes,
//     $'…', ${IFS}, brace expansion, variables assigned earlier in the
//     command, $(echo …)), wrappers (sudo, env, timeout, xargs, …) and
//     nested shells (bash -c, eval, sh <<EOF, echo … | sh) are followed to
//     a depth cap, and each program is classified: destructive operations,
//     download-and-run, decode-and-run, writes to protected paths, reads of
//     secrets, tampering with claimcheck, and what cannot be analysed. The
//     reading is package shell's (its Walker, its catalogue of programs,
//     the same that the verifier reads commands with); the judging, and
//     the reasons (reasons.go), are this package's;
//   - file tools (Read, Write, Edit, …) by path: protected, the agent's
//     and claimcheck's configuration, private to claimcheck, sensitive;
//   - the files that configure the agent's hooks or claimcheck
//     (paths.configuration, Runtime.ConfigPaths) may be read but not
//     written, moved, removed or replaced through a directory above them,
//     and inline interpreter code (python -c, a heredoc or static input to
//     python3, a script written earlier in the command) may not name them;
//   - WebFetch by URL: scheme, then the host as a WHATWG URL parser (and,
//     to be safe, an RFC 3986 one) would see it — private, loopback,
//     link-local, CGNAT, unique-local and metadata addresses in any encoding
//     (decimal, octal, hex, short, IPv4-mapped IPv6, …), localhost and the
//     policy's denied domains;
//   - size caps on tool_input, commands and URLs.
//
// Every finding carries a stable rule id; when several apply, the most
// severe wins (deny over ask over allow) and, among equals, the first found.
// Malformed tool_input for a known tool is denied (fail closed).
//
// Secrets-file templates (.env.example, .env.sample, .env.template,
// .env.dist) and public keys (*.pub) are not secrets: the built-in policy
// lists them as sensitive_exceptions, so reading them needs no approval. A
// glob that may reach beyond an exception (cat .e*) still asks.
//
// What the analysis cannot see: what interpreters' inline code does
// beyond the calls and literals inline.go reads (names built at run time,
// awk's system()), scripts and Makefiles
// already on disk, what programs do with their arguments (git aliases,
// npm scripts, docker exec), symbolic links created in an earlier call,
// the contents of archives, values from the environment or files
// (commands whose program comes from them are "dynamic"), and DNS (a name
// that resolves to a private address is allowed). PowerShell commands are
// parsed as Bash: most do not parse and so need the human.
package pretool

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// Decision values.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
)

// Decision is the answer to one PreToolUse call.
type Decision struct {
	Decision string // Allow, Deny or Ask
	// Reason, for Deny, is written for the agent: what was refused, why, and
	// what to do instead. For Ask it is written for the human. Empty for
	// Allow.
	Reason string
	// Rule is the stable id of the rule that decided, e.g.
	// "shell.destructive.rm_root", "url.private_address", "read.sensitive";
	// RuleAllowed when nothing objected.
	Rule string
}

// Input is one PreToolUse call as the hook payload carries it.
type Input struct {
	AgentType string // the payload's agent_type; "" for the main agent
	ToolName  string
	ToolInput []byte // the raw JSON of tool_input
	Cwd       string // the payload's cwd; relative paths resolve against it
}

// Runtime holds what only the running gatekeeper knows.
type Runtime struct {
	// ProtectedPaths are claimcheck's own directories (the data directory
	// with its keys, the ledger's store, the hook's state and credentials
	// directory). The agent may neither write nor read them: they are
	// treated like the policy's private paths.
	ProtectedPaths []string
	// HookBinaries are the paths of the claimcheck-hook executables
	// (claimcheck-hook, claimcheck-hook-tls), if known: running one under
	// any name, or writing it, is denied.
	HookBinaries []string
	// ConfigPaths are files and directories that configure claimcheck or
	// the agent's hooks, known only at run time (claimcheck's configuration
	// file, its binary, $CODEX_HOME's hook files, …). The agent may read
	// them but not write them: they are treated like the policy's
	// protected paths.
	ConfigPaths []string
	// Home is the user's home directory, for ~ and $HOME. Empty leaves them
	// symbolic: policy patterns starting with ~/ still match them, absolute
	// paths under the real home do not.
	Home string
}

// Rule ids: the Rule of every Decision. Which answer a finding gets is
// fixed (input.*, url.*, tool.ask) or set by the policy's actions (the
// family is named beside each group).
const (
	RuleAllowed = "allowed" // nothing objected

	// Fixed deny: the input cannot be judged.
	RuleInputTooLarge  = "input.too_large"
	RuleInputMalformed = "input.malformed"

	// Tool access: the agent rule's otherwise (deny or ask), or its lists.
	RuleToolNotAllowed = "tool.not_allowed"
	RuleToolAsk        = "tool.ask"

	// actions.unparsable (shell.too_long is a fixed deny).
	RuleShellTooLong    = "shell.too_long"
	RuleShellUnparsable = "shell.unparsable"
	RuleShellTooDeep    = "shell.too_deep"
	RuleShellTooComplex = "shell.too_complex"

	// actions.destructive.
	RuleRmRoot      = "shell.destructive.rm_root"
	RuleFindDelete  = "shell.destructive.find_delete"
	RuleMkfs        = "shell.destructive.mkfs"
	RuleDDDevice    = "shell.destructive.dd_device"
	RuleDeviceWrite = "shell.destructive.device_write"
	RuleShredDevice = "shell.destructive.shred_device"
	RuleForkBomb    = "shell.destructive.fork_bomb"
	RuleChmodRoot   = "shell.destructive.chmod_root"
	RuleChownRoot   = "shell.destructive.chown_root"

	// actions.lost_work: work the user cannot get back from the repository.
	RuleGitForcePush    = "git.force_push"
	RuleGitDeleteRemote = "git.delete_remote_ref"
	RuleGitResetHard    = "git.reset_hard"
	RuleGitClean        = "git.clean"
	RuleGitDiscard      = "git.discard_changes"
	RuleGitStashDrop    = "git.stash_drop"
	RuleGitBranchDelete = "git.branch_force_delete"
	RuleGitRewrite      = "git.history_rewrite"

	// actions.download_exec and actions.decode_exec.
	RuleDownloadExec = "shell.download_exec"
	RuleDecodeExec   = "shell.decode_exec"

	// actions.dynamic.
	RuleDynamicCommand = "shell.dynamic.command_name"
	RuleDynamicEval    = "shell.dynamic.eval"
	RuleDynamicShell   = "shell.dynamic.shell_string"
	RuleDynamicAlias   = "shell.dynamic.alias"
	RuleDynamicRmRoot  = "shell.dynamic.rm_target"
	RuleDynamicInterp  = "shell.dynamic.interpreter_exec"

	// actions.claimcheck.
	RuleHookExec      = "claimcheck.hook_exec"
	RulePrivateAccess = "claimcheck.private_access"
	RuleDeniedCommand = "claimcheck.denied_command"

	// actions.protected_write, actions.sensitive_write, actions.sensitive_read.
	RuleWriteProtected = "write.protected"
	RuleWriteSensitive = "write.sensitive"
	RuleReadSensitive  = "read.sensitive"

	// Fixed deny: WebFetch URLs (url.metadata also for curl and wget).
	RuleURLTooLong      = "url.too_long"
	RuleURLMalformed    = "url.malformed"
	RuleURLScheme       = "url.scheme"
	RuleURLPrivate      = "url.private_address"
	RuleURLMetadata     = "url.metadata"
	RuleURLLocalhost    = "url.localhost"
	RuleURLDeniedDomain = "url.denied_domain"

	// Fixed deny: Decide failed (a recovered panic) or has no policy.
	RuleInternal = "internal.error"
)

// severity orders decisions: the most severe finding wins.
func severity(decision string) int {
	switch decision {
	case Deny:
		return 2
	case Ask:
		return 1
	}
	return 0
}

// verdict accumulates findings and keeps the most severe (the first among
// equals).
type verdict struct {
	d Decision
}

func newVerdict() *verdict { return &verdict{d: Decision{Decision: Allow, Rule: RuleAllowed}} }

func (v *verdict) add(decision, rule, reason string) {
	if severity(decision) > severity(v.d.Decision) {
		v.d = Decision{Decision: decision, Rule: rule, Reason: reason}
	}
}

// say adds the finding m, its reason filled with d.
func (v *verdict) say(decision string, m msg, d detail) { v.add(decision, m.rule(), m.text(d)) }

func (v *verdict) denied() bool { return v.d.Decision == Deny }

// Tools whose tool_input claimcheck reads. Their input must have the shape
// the hook contract documents; anything else is denied.
var shellTools = map[string]bool{"Bash": true, "PowerShell": true, "apply_patch": true}

// Decide answers one PreToolUse call. It is deterministic, does no I/O, and
// never panics: an internal failure denies the call (rule internal.error).
func (p *Policy) Decide(in Input, rt Runtime) (d Decision) {
	defer func() {
		if r := recover(); r != nil {
			d = Decision{Decision: Deny, Rule: msgInternalError.rule(),
				Reason: msgInternalError.text(detail{tool: in.ToolName, err: fmt.Sprint(r)})}
		}
	}()
	if p == nil || p.c == nil {
		return Decision{Decision: Deny, Rule: msgNoPolicy.rule(), Reason: msgNoPolicy.text(detail{})}
	}
	v := newVerdict()
	if len(in.ToolInput) > p.Limits.MaxToolInputBytes {
		v.say(Deny, msgInputTooLarge, detail{tool: in.ToolName, size: len(in.ToolInput), limit: p.Limits.MaxToolInputBytes})
		return v.d
	}
	p.checkTool(v, in.AgentType, in.ToolName)
	if v.denied() {
		return v.d
	}
	ctx := p.newContext(rt, in.Cwd)
	p.checkInput(v, ctx, in)
	return v.d
}

// checkInput decodes tool_input for the tools claimcheck understands and
// applies the content rules.
func (p *Policy) checkInput(v *verdict, ctx *context, in Input) {
	raw := bytes.TrimSpace(in.ToolInput)
	known := shellTools[in.ToolName] || fileTools[in.ToolName] != "" || in.ToolName == "WebFetch" || searchTools[in.ToolName] != ""
	if !known {
		// Unknown tools (MCP, Agent, TodoWrite, …): their input is not
		// inspected, but it must at least be JSON.
		if len(raw) > 0 && !jsontext.Value(raw).IsValid() {
			v.say(Deny, msgInputNotJSON, detail{tool: in.ToolName})
		}
		return
	}
	var ti toolInput
	if err := decodeInput(raw, &ti); err != nil {
		v.say(Deny, msgInputUnreadable, detail{tool: in.ToolName, err: err.Error()})
		return
	}
	switch {
	case shellTools[in.ToolName]:
		if ti.Command == nil {
			v.say(Deny, msgNoCommand, detail{tool: in.ToolName})
			return
		}
		p.checkCommand(v, ctx, *ti.Command)
	case in.ToolName == "WebFetch":
		if ti.URL == nil || *ti.URL == "" {
			v.say(Deny, msgNoURL, detail{})
			return
		}
		p.checkFetch(v, *ti.URL)
	case fileTools[in.ToolName] != "":
		p.checkFileTool(v, ctx, in.ToolName, ti)
	default:
		p.checkSearchTool(v, ctx, in.ToolName, ti)
	}
}

// toolInput holds the tool_input fields claimcheck reads. Pointers tell a
// missing field from an empty one; other members are ignored, but a member
// of the wrong type, a duplicate member or invalid UTF-8 fails the decode.
type toolInput struct {
	Command      *string `json:"command"`
	URL          *string `json:"url"`
	FilePath     *string `json:"file_path"`
	NotebookPath *string `json:"notebook_path"`
	Path         *string `json:"path"`
	Pattern      *string `json:"pattern"`
	Glob         *string `json:"glob"`
}

func decodeInput(raw []byte, ti *toolInput) error {
	if len(raw) == 0 {
		return fmt.Errorf("tool_input is missing")
	}
	if raw[0] != '{' {
		return fmt.Errorf("tool_input must be a JSON object")
	}
	if err := json.Unmarshal(raw, ti, json.RejectUnknownMembers(false)); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// quote shortens s for a message.
func quote(s string) string {
	const max = 120
	s = shell.Display(s)
	if len(s) > max {
		cut := max
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
