package pretool

import (
	"fmt"
	"path"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
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
		v.say(Deny, msgNoTool, detail{})
		return
	}
	if pat, ok := matchTool(r.Deny, tool); ok {
		v.say(Deny, msgToolDenied, detail{tool: tool, pattern: pat, who: who})
		return
	}
	if pat, ok := matchTool(r.Ask, tool); ok {
		v.say(Ask, msgToolAsk, detail{tool: tool, pattern: pat, who: who})
		return
	}
	if _, ok := matchTool(r.Allow, tool); ok {
		return
	}
	if action(r.Otherwise) == Ask {
		v.say(Ask, msgToolUnlisted, detail{tool: tool, who: who})
		return
	}
	v.say(Deny, msgToolNotAllowed, detail{tool: tool, who: who, allowed: strings.Join(r.Allow, ", ")})
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
	return shell.Sanitize(strings.ReplaceAll(s, `\`, "/"))
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
		v.say(Deny, msgNoPathField, detail{tool: tool, field: field})
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
		v.say(Deny, msgNoPattern, detail{tool: tool})
		return
	}
	if ti.Path != nil && *ti.Path != "" {
		f := ctx.resolve(filePath(*ti.Path), ctx.cwd)
		// Glob and LS list names; Grep reads contents.
		p.checkRead(v, ctx, f, readOpts{what: tool, namesOnly: tool != "Grep"})
	} else if tool == "LS" {
		v.say(Deny, msgNoLSPath, detail{})
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
func (p *Policy) checkWrite(v *verdict, ctx *context, f shell.Path, o writeOpts) {
	if len(f.Segs) == 0 && !f.Abs {
		return
	}
	if pat, ok := ctx.matchAny(ctx.private, f, true, o.recursive); ok {
		v.say(action(p.Actions.Claimcheck), msgPrivateWrite, detail{what: o.what, path: f.String(), pattern: shell.Display(pat.raw)})
		return
	}
	if ctx.isHook(f, o.recursive) {
		v.say(action(p.Actions.Claimcheck), msgHookWrite, detail{what: o.what, path: f.String()})
		return
	}
	// The agent's configuration is named first, unless only a directory
	// above it is written (rm -rf /etc is about /etc, not /etc/claude-code).
	if pat, ok := ctx.matchAny(ctx.config, f, true, false); ok {
		v.say(action(p.Actions.ProtectedWrite), msgConfigWrite, detail{what: o.what, path: f.String(), pattern: shell.Display(pat.raw)})
		return
	}
	if pat, ok := ctx.matchAny(p.c.protected, f, true, o.recursive); ok {
		v.say(action(p.Actions.ProtectedWrite), msgProtectedWrite, detail{what: o.what, path: f.String(), pattern: shell.Display(pat.raw)})
		return
	}
	if pat, ok := ctx.matchAny(ctx.config, f, true, o.recursive); ok {
		v.say(action(p.Actions.ProtectedWrite), msgConfigWrite, detail{what: o.what, path: f.String(), pattern: shell.Display(pat.raw)})
		return
	}
	if pat, ok := ctx.sensitive(p, f); ok {
		v.say(action(p.Actions.SensitiveWrite), msgSensitiveWrite, detail{what: o.what, path: f.String(), pattern: shell.Display(pat.raw)})
	}
}

// checkRead applies the read rules to one path.
func (p *Policy) checkRead(v *verdict, ctx *context, f shell.Path, o readOpts) {
	if len(f.Segs) == 0 && !f.Abs {
		return
	}
	if pat, ok := ctx.matchAny(ctx.private, f, true, o.recursive); ok {
		v.say(action(p.Actions.Claimcheck), msgPrivateRead, detail{what: o.what, path: f.String(), pattern: shell.Display(pat.raw)})
		return
	}
	if o.namesOnly {
		return
	}
	if pat, ok := ctx.sensitive(p, f); ok {
		v.say(action(p.Actions.SensitiveRead), msgSensitiveRead, detail{what: o.what, path: f.String(), pattern: shell.Display(pat.raw)})
	}
}
