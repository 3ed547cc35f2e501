package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/dialect"
	"github.com/claimcheck/claimcheck/schemas"
)

// codexHookEvents are the Codex events `hooks install --agent codex`
// installs claimcheck-hook for (contract doc §4.1; SessionEnd was seen
// from codex 0.169.0, which clamps its timeout to 3 s). PreModelRequest,
// fired before every model request, is left out: it says nothing the
// ledger uses.
var codexHookEvents = []schemas.HookEvent{
	{Name: schemas.HookSessionStart, Timeout: 10},
	{Name: schemas.HookUserPromptSubmit, Timeout: 30},
	{Name: schemas.HookPreToolUse, Timeout: 30},
	{Name: "PermissionRequest", Timeout: 10},
	{Name: schemas.HookPostToolUse, Timeout: 10},
	{Name: schemas.HookPreCompact, Timeout: 10},
	{Name: "PostCompact", Timeout: 10},
	{Name: "SubagentStart", Timeout: 10},
	{Name: schemas.HookSubagentStop, Timeout: 30},
	{Name: schemas.HookStop, Timeout: 30},
	{Name: schemas.HookSessionEnd, Timeout: 3},
}

// geminiHookEvents are the Gemini CLI events `hooks install --agent
// gemini` installs claimcheck-hook for (contract doc §4.3), timeouts in
// seconds (written in milliseconds). BeforeModel, AfterModel (once per
// streamed chunk) and BeforeToolSelection are left out: they carry the
// whole model request each time and nothing the ledger uses.
var geminiHookEvents = []schemas.HookEvent{
	{Name: schemas.HookSessionStart, Timeout: 10},
	{Name: "BeforeAgent", Timeout: 30},
	{Name: "BeforeTool", Timeout: 30},
	{Name: "AfterTool", Timeout: 10},
	{Name: "AfterAgent", Timeout: 30},
	{Name: "PreCompress", Timeout: 10},
	{Name: schemas.HookNotification, Timeout: 10},
	{Name: schemas.HookSessionEnd, Timeout: 5},
}

// agentSettings is where an agent CLI reads its hooks: the user's file, or
// with project set the project's.
func agentSettings(agent dialect.Agent, getenv func(string) string, project string) (string, error) {
	dir, file := ".claude", "settings.json"
	switch agent {
	case dialect.Codex:
		dir, file = ".codex", "hooks.json"
		if project == "" && getenv("CODEX_HOME") != "" {
			return filepath.Join(getenv("CODEX_HOME"), file), nil
		}
	case dialect.Gemini:
		dir = ".gemini"
	case dialect.Cursor:
		dir, file = ".cursor", "hooks.json"
	case dialect.Copilot:
		// Copilot loads every *.json in its hooks directory: claimcheck
		// keeps its handlers in a file of its own there.
		file = "claimcheck.json"
		if project != "" {
			dir = filepath.Join(".github", "hooks")
			break
		}
		if getenv("COPILOT_HOME") != "" {
			return filepath.Join(getenv("COPILOT_HOME"), "hooks", file), nil
		}
		dir = filepath.Join(".copilot", "hooks")
	}
	if project != "" {
		abs, err := filepath.Abs(project)
		if err != nil {
			return "", err
		}
		return filepath.Join(abs, dir, file), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("$HOME is not set; pass --settings or --project")
	}
	return filepath.Join(home, dir, file), nil
}

// agentName is the agent CLI's name in messages.
func agentName(agent dialect.Agent) string {
	switch agent {
	case dialect.Codex:
		return "Codex"
	case dialect.Gemini:
		return "Gemini CLI"
	case dialect.Cursor:
		return "Cursor"
	case dialect.Copilot:
		return "Copilot"
	}
	return "Claude Code"
}

// agentInstall is `hooks install --agent codex|gemini`: claimcheck-hook
// --agent <name> merged into the agent's hooks file for every event of
// its dialect, keeping every other hook, idempotent, backed up first.
func (a *app) agentInstall(ctx context.Context, agent dialect.Agent, settings string, in install) error {
	in.hookCmd += " --agent " + string(agent)
	events, scale := codexHookEvents, 1
	if agent == dialect.Gemini {
		events, scale = geminiHookEvents, 1000
	}
	var notes []string
	switch agent {
	case dialect.Codex:
		notes = []string{
			"Codex runs a command hook only once it is reviewed and trusted: open /hooks in Codex and trust these.",
			"Codex has no cap on blocked stops; claimcheck's gate caps them (gatekeeper.stop_block_cap, the hook's --stop-block-cap).",
		}
	case dialect.Gemini:
		notes = []string{
			"Gemini CLI runs hooks only in a trusted folder.",
			"Gemini CLI sends no tool call ids: its tool results are paired with their calls by tool and input.",
			"Gemini CLI gives the commands it runs no session id: `claimcheck claim` inside it needs --session (the id `gemini --session-id` was given, or stream-json's init session_id).",
		}
	}
	return a.installInto(ctx, agent, settings, in, len(events), notes, func(root *object) (installResult, error) {
		return mergeEventHooks(settings, root, in.hookCmd, events, scale)
	})
}

// installInto is the part of `hooks install --agent NAME` every agent
// shares: read the agent's hook file (refused, naming line and column, when
// it is not a JSON object), merge claimcheck's hooks into it, write it (with
// a backup) unless nothing changed or it is a dry run, and say what was done
// and what the user must know of that agent (notes).
func (a *app) installInto(ctx context.Context, agent dialect.Agent, settings string, in install, events int, notes []string,
	merge func(root *object) (installResult, error)) error {
	orig, mode, err := readSettings(settings)
	if err != nil {
		return &exitError{ExitError, err}
	}
	root := &object{}
	if len(bytes.TrimSpace(orig)) > 0 {
		if err := root.parse(orig); err != nil {
			return &exitError{ExitError, fmt.Errorf(
				"%s is not a JSON object claimcheck can read (%s): %w (fix or move it, then run install again)",
				settings, jsonPosition(orig, err), err)}
		}
	}
	res, err := merge(root)
	if err != nil {
		return &exitError{ExitError, err}
	}
	w := a.env.Stdout
	switch {
	case res.Changed == 0:
		fmt.Fprintf(w, "%s already runs claimcheck-hook for all %d %s events; nothing changed\n", settings, events, agentName(agent))
	case in.dryRun:
		fmt.Fprintf(w, "would add %d and update %d hook entries in %s (dry run, nothing written)\n", res.Added, res.Updated, settings)
	default:
		backup, err := writeSettings(settings, orig, mode, root, in.now)
		if err != nil {
			return &exitError{ExitError, err}
		}
		fmt.Fprintf(w, "added %d and updated %d hook entries in %s\n", res.Added, res.Updated, settings)
		if backup != "" {
			fmt.Fprintf(w, "previous settings saved as %s\n", backup)
		}
	}
	fmt.Fprintf(w, "hook command: %s\n", in.hookCmd)
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	if !in.dryRun {
		a.installHookKeys(ctx)
	}
	fmt.Fprintf(w, "%s reads hooks at session start: restart running sessions to pick this up.\n", agentName(agent))
	return nil
}

// jsonPosition names where in b a decoding error is, as "line L, column C"
// (1-based), or "the file" when the error does not say.
func jsonPosition(b []byte, err error) string {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) || se.ByteOffset < 0 || se.ByteOffset > int64(len(b)) {
		return "the file"
	}
	before := b[:se.ByteOffset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}
