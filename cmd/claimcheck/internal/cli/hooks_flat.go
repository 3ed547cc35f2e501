package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/claimcheck/claimcheck/pkg/dialect"
	"github.com/claimcheck/claimcheck/schemas"
)

// Cursor and Copilot keep their hooks in a flat shape,
// {"version":1,"hooks":{"<event>":[handler, …]}}, with no matcher groups.

// cursorHookEvents are the Cursor events `hooks install --agent cursor`
// installs claimcheck-hook for (Cursor's hooks documentation; contract doc
// §4.2). Cursor's documentation gives a handler only its "command", so no
// timeout is written. afterAgentThought and the Tab hooks are left out.
var cursorHookEvents = []schemas.HookEvent{
	{Name: "beforeSubmitPrompt"},
	{Name: "beforeShellExecution"},
	{Name: "afterShellExecution"},
	{Name: "beforeMCPExecution"},
	{Name: "afterMCPExecution"},
	{Name: "beforeReadFile"},
	{Name: "afterFileEdit"},
	{Name: "afterAgentResponse"},
	{Name: "stop"},
}

// copilotHookEvents are the Copilot events `hooks install --agent copilot`
// installs claimcheck-hook for, camelCase (Copilot CLI hooks reference;
// contract doc §4.4), with timeoutSec. Each handler passes its event with
// --event: Copilot's camelCase payloads do not name it. notification,
// permissionRequest and subagentStart are left out.
var copilotHookEvents = []schemas.HookEvent{
	{Name: "sessionStart", Timeout: 10},
	{Name: "userPromptSubmitted", Timeout: 30},
	{Name: "preToolUse", Timeout: 30},
	{Name: "postToolUse", Timeout: 10},
	{Name: "postToolUseFailure", Timeout: 10},
	{Name: "agentStop", Timeout: 30},
	{Name: "subagentStop", Timeout: 10},
	{Name: "preCompact", Timeout: 10},
	{Name: "errorOccurred", Timeout: 10},
	{Name: "sessionEnd", Timeout: 10},
}

// flatFormat is one agent's flat hooks file.
type flatFormat struct {
	events []schemas.HookEvent
	// commandKey is the handler member holding the command.
	commandKey string
	// handler is the handler claimcheck wants for ev, as members in order.
	handler func(ev schemas.HookEvent, hookCmd string) *object
}

func flatFormatOf(agent dialect.Agent) flatFormat {
	if agent == dialect.Cursor {
		return flatFormat{events: cursorHookEvents, commandKey: "command", handler: func(_ schemas.HookEvent, hookCmd string) *object {
			h := &object{}
			h.set("command", mustJSON(hookCmd))
			return h
		}}
	}
	return flatFormat{events: copilotHookEvents, commandKey: "bash", handler: func(ev schemas.HookEvent, hookCmd string) *object {
		h := &object{}
		h.set("type", mustJSON("command"))
		h.set("bash", mustJSON(hookCmd+" --event "+ev.Name))
		h.set("timeoutSec", mustJSON(ev.Timeout))
		return h
	}}
}

// mergeFlatHooks adds or updates claimcheck's handler of every event of f,
// keeping every other handler and member; a file without "version" gets 1.
func mergeFlatHooks(path string, root *object, hookCmd string, f flatFormat) (installResult, error) {
	var res installResult
	hooksObj := &object{}
	if raw, ok := root.get("hooks"); ok {
		if err := hooksObj.parse(raw); err != nil {
			return res, fmt.Errorf("%s: \"hooks\" is not an object: %w", path, err)
		}
	}
	for _, ev := range f.events {
		var handlers []jsontext.Value
		if raw, ok := hooksObj.get(ev.Name); ok {
			if err := json.Unmarshal(raw, &handlers); err != nil {
				return res, fmt.Errorf("%s: hooks.%s is not an array: %w", path, ev.Name, err)
			}
		}
		want := f.handler(ev, hookCmd)
		found := false
		for i := 0; i < len(handlers); i++ {
			h := &object{}
			if h.parse(handlers[i]) != nil || !isClaimcheckHook(stringMember(h, f.commandKey)) {
				continue
			}
			if found { // a second claimcheck handler for the same event: drop it
				handlers = slices.Delete(handlers, i, i+1)
				i--
				res.Updated++
				continue
			}
			found = true
			changed := false
			for j, name := range want.names {
				if cur, ok := h.get(name); !ok || !bytes.Equal(cur, want.values[j]) {
					h.set(name, want.values[j])
					changed = true
				}
			}
			if changed {
				handlers[i] = h.encode()
				res.Updated++
			}
		}
		if !found {
			handlers = append(handlers, want.encode())
			res.Added++
		}
		hooksObj.set(ev.Name, mustJSON(handlers))
	}
	res.Changed = res.Added + res.Updated
	if res.Changed > 0 {
		if _, ok := root.get("version"); !ok {
			root.set("version", mustJSON(1))
		}
		root.set("hooks", hooksObj.encode())
	}
	return res, nil
}

// removeFlatHooks drops every claimcheck-hook handler, the events it
// leaves empty and "hooks" when nothing is left in it.
func removeFlatHooks(path string, root *object, commandKey string) (int, error) {
	return pruneHooks(path, root, func(handlers []jsontext.Value) ([]jsontext.Value, int) {
		before := len(handlers)
		handlers = slices.DeleteFunc(handlers, func(v jsontext.Value) bool {
			h := &object{}
			return h.parse(v) == nil && isClaimcheckHook(stringMember(h, commandKey))
		})
		return handlers, before - len(handlers)
	})
}

func stringMember(o *object, name string) string {
	var s string
	if v, ok := o.get(name); ok && json.Unmarshal(v, &s) == nil {
		return s
	}
	return ""
}

// flatInstall is `hooks install --agent cursor|copilot`.
func (a *app) flatInstall(ctx context.Context, agent dialect.Agent, settings string, in install) error {
	in.hookCmd += " --agent " + string(agent)
	f := flatFormatOf(agent)
	var notes []string
	switch agent {
	case dialect.Cursor:
		notes = []string{
			"Cursor runs project hooks only in a trusted workspace.",
			"Cursor sends no tool call ids and no final message with stop: its tool results are paired " +
				"with their calls by tool and input, and a stop is judged on the turn's PASS attestations.",
		}
	case dialect.Copilot:
		notes = []string{
			"Copilot logs and skips a hook that fails or times out: only claimcheck's JSON answers deny or block.",
			"Copilot sends no tool call ids and no final message with agentStop: its tool results are paired " +
				"with their calls by tool and input, and a stop is judged on the turn's PASS attestations.",
			"The Copilot coding agent also reads .github/hooks/, but its payloads as documented carry no session id: " +
				"claimcheck refuses them and denies its tool calls.",
		}
	}
	return a.installInto(ctx, agent, settings, in, len(f.events), notes, func(root *object) (installResult, error) {
		return mergeFlatHooks(settings, root, in.hookCmd, f)
	})
}

// flatUninstall removes claimcheck's handlers from a Cursor or Copilot hooks
// file. When what is left equals a backup install made, that backup's
// bytes are written back; when it is only the "version" install added to a
// file it created (there is no backup), the file is removed.
func flatUninstall(path string, agent dialect.Agent, dryRun bool, now time.Time) (uninstallResult, error) {
	var res uninstallResult
	orig, mode, err := readSettings(path)
	if err != nil || len(bytes.TrimSpace(orig)) == 0 {
		return res, err
	}
	root := &object{}
	if err := root.parse(orig); err != nil {
		return res, fmt.Errorf("%s is not a JSON object claimcheck can read (%s): %w (fix it, then run uninstall again)",
			path, jsonPosition(orig, err), err)
	}
	if res.Removed, err = removeFlatHooks(path, root, flatFormatOf(agent).commandKey); err != nil || res.Removed == 0 || dryRun {
		return res, err
	}
	if res.Restored, err = matchingBackup(path, root.encode()); err != nil {
		return res, err
	}
	if res.Restored != "" {
		restored, err := os.ReadFile(res.Restored)
		if err != nil {
			return res, err
		}
		res.Backup, err = writeSettingsBytes(path, orig, mode, restored, now)
		return res, err
	}
	backups, _ := filepath.Glob(path + ".bak-*")
	if len(root.names) == 1 && root.names[0] == "version" && bytes.Equal(root.values[0], []byte("1")) && len(backups) == 0 {
		// install created the file: remove it, keeping a backup of it.
		if res.Backup, err = writeBackup(path, orig, mode, now); err != nil {
			return res, err
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, err
		}
		res.Deleted = true
		return res, nil
	}
	res.Backup, err = writeSettings(path, orig, mode, root, now)
	return res, err
}
