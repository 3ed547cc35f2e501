package pretool

import (
	"fmt"
	"path"
	"strings"
)

// rule returns the tool rule for an agent type and the name it is known by
// in messages.
func (p *Policy) rule(agentType string) (ToolRule, string) {
	if agentType == "" {
		return p.Tools.Main, "the main agent"
	}
	if r, ok := p.Tools.Agents[agentType]; ok {
		return r, fmt.Sprintf("agent type %q", agentType)
	}
	return p.Tools.Default, fmt.Sprintf("agent type %q (default rule)", agentType)
}

func matchTool(pats []string, name string) (string, bool) {
	for _, pat := range pats {
		if ok, _ := path.Match(pat, name); ok {
			return pat, true
		}
	}
	return "", false
}

// checkTool applies the tool access matrix.
func (p *Policy) checkTool(v *verdict, agentType, tool string) {
	r, who := p.rule(agentType)
	if tool == "" {
		v.add(Deny, RuleInputMalformed, "claimcheck refused this tool call: the PreToolUse payload names no tool.")
		return
	}
	if pat, ok := matchTool(r.Deny, tool); ok {
		v.add(Deny, RuleToolNotAllowed, fmt.Sprintf("claimcheck refused the %s tool: the policy denies it (%q) for %s. Do the work with the tools you are allowed, or ask the user.", tool, pat, who))
		return
	}
	if pat, ok := matchTool(r.Ask, tool); ok {
		v.add(Ask, RuleToolAsk, fmt.Sprintf("claimcheck: the policy asks before %s uses the %s tool (%q).", who, tool, pat))
		return
	}
	if _, ok := matchTool(r.Allow, tool); ok {
		return
	}
	if action(r.Otherwise) == Ask {
		v.add(Ask, RuleToolNotAllowed, fmt.Sprintf("claimcheck: the %s tool is not on the policy's list for %s; allow it only if you expect this agent to use it.", tool, who))
		return
	}
	v.add(Deny, RuleToolNotAllowed, fmt.Sprintf("claimcheck refused the %s tool: it is not allowed for %s. Use one of the allowed tools (%s), or ask the user.", tool, who, strings.Join(r.Allow, ", ")))
}

// fileTools name the tool_input field holding the path, and whether the
// tool writes ("w") or reads ("r").
var fileTools = map[string]string{
	"Read":         "r",
	"NotebookRead": "r",
	"Write":        "w",
	"Edit":         "w",
	"MultiEdit":    "w",
	"NotebookEdit": "w",
}

// searchTools read what is under a path.
var searchTools = map[string]string{"Grep": "r", "Glob": "r", "LS": "r"}

// filePath returns the tool's path argument, made safe for resolution:
// backslashes (Windows) become slashes and marker bytes are replaced.
func filePath(s string) string {
	return sanitize(strings.ReplaceAll(s, `\`, "/"))
}

func (p *Policy) checkFileTool(v *verdict, ctx *context, tool string, ti toolInput) {
	field, raw := "file_path", ti.FilePath
	if strings.HasPrefix(tool, "Notebook") {
		field, raw = "notebook_path", ti.NotebookPath
		if raw == nil {
			field, raw = "file_path", ti.FilePath
		}
	}
	if raw == nil || *raw == "" {
		v.add(Deny, RuleInputMalformed, fmt.Sprintf("claimcheck refused this %s call: tool_input has no %s.", tool, field))
		return
	}
	f := ctx.resolve(filePath(*raw), ctx.cwd)
	if fileTools[tool] == "w" {
		p.checkWrite(v, ctx, f, writeOpts{what: tool})
		return
	}
	p.checkRead(v, ctx, f, readOpts{what: tool})
}

func (p *Policy) checkSearchTool(v *verdict, ctx *context, tool string, ti toolInput) {
	if tool != "LS" && ti.Pattern == nil {
		v.add(Deny, RuleInputMalformed, fmt.Sprintf("claimcheck refused this %s call: tool_input has no pattern.", tool))
		return
	}
	if ti.Path != nil && *ti.Path != "" {
		f := ctx.resolve(filePath(*ti.Path), ctx.cwd)
		// Glob and LS list names; Grep reads contents.
		p.checkRead(v, ctx, f, readOpts{what: tool, namesOnly: tool != "Grep"})
	} else if tool == "LS" {
		v.add(Deny, RuleInputMalformed, "claimcheck refused this LS call: tool_input has no path.")
	}
}

type writeOpts struct {
	what      string // the tool or program, for messages
	recursive bool   // also refuse when f contains a protected or private path
}

type readOpts struct {
	what      string
	namesOnly bool // lists names (ls, Glob): only private paths matter
	recursive bool // reads everything beneath f (grep -r, tar, cp -r)
}

// checkWrite applies the write rules to one target.
func (p *Policy) checkWrite(v *verdict, ctx *context, f fpath, o writeOpts) {
	if len(f.segs) == 0 && !f.abs {
		return
	}
	if pat, ok := ctx.matchAny(ctx.private, f, true, o.recursive); ok {
		v.add(action(p.Actions.Claimcheck), RulePrivateAccess, fmt.Sprintf("claimcheck refused %s writing %s: it is claimcheck's own data (%s), which agents may not modify. Leave claimcheck's files alone; ask the user if something there needs changing.", o.what, f, display(pat.raw)))
		return
	}
	if ctx.hookPath != "" && (f.key() == ctx.hookPath || o.recursive && strings.HasPrefix(ctx.hookPath, f.key()+"/")) {
		v.add(action(p.Actions.Claimcheck), RulePrivateAccess, fmt.Sprintf("claimcheck refused %s writing %s: it is the claimcheck-hook executable.", o.what, f))
		return
	}
	if pat, ok := ctx.matchAny(p.c.protected, f, true, o.recursive); ok {
		v.add(action(p.Actions.ProtectedWrite), RuleWriteProtected, fmt.Sprintf("claimcheck refused %s writing %s: the path is protected by policy (%s). Write inside the project instead, or ask the user to make this change.", o.what, f, display(pat.raw)))
		return
	}
	if pat, ok := ctx.sensitive(p, f); ok {
		v.add(action(p.Actions.SensitiveWrite), RuleWriteSensitive, fmt.Sprintf("claimcheck: %s wants to write %s, which matches the sensitive-file pattern %s (files that usually hold secrets). Allow only if you expect this change.", o.what, f, display(pat.raw)))
	}
}

// checkRead applies the read rules to one path.
func (p *Policy) checkRead(v *verdict, ctx *context, f fpath, o readOpts) {
	if len(f.segs) == 0 && !f.abs {
		return
	}
	if pat, ok := ctx.matchAny(ctx.private, f, true, o.recursive); ok {
		v.add(action(p.Actions.Claimcheck), RulePrivateAccess, fmt.Sprintf("claimcheck refused %s reading %s: it is claimcheck's own data (%s: keys, ledger, hook state), which agents may not read. You do not need it to do your task; claimcheck records what you do by itself.", o.what, f, display(pat.raw)))
		return
	}
	if o.namesOnly {
		return
	}
	if pat, ok := ctx.sensitive(p, f); ok {
		v.add(action(p.Actions.SensitiveRead), RuleReadSensitive, fmt.Sprintf("claimcheck: %s wants to read %s, which matches the sensitive-file pattern %s (files that usually hold secrets such as keys, tokens or passwords). Allow only if the agent needs these secrets.", o.what, f, display(pat.raw)))
	}
}
