package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/dialect"
)

func (a *app) hooksUninstallCommand() *cobra.Command {
	var settings, systemDir, agentFlag, project string
	var dryRun, managed bool
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove claimcheck-hook from an agent CLI's hooks (Claude Code, Codex, Gemini CLI, Cursor, Copilot), keeping everything else",
		Long: `uninstall removes every hook handler that runs claimcheck-hook (or claimcheck-hook-tls)
from the settings file, and the groups and events that held nothing else. Every other
hook and setting stays. When what is left equals a backup that install made, that
backup's bytes are written back, so the file is as it was before install; otherwise
the file is rewritten with the same members in the same order. The current file is
backed up first. Sandbox settings that install --sandbox merged stay: they guard the
agent's commands whether or not claimcheck records them.

With --managed it undoes install --managed: the handlers in Claude Code's managed
settings, allowManagedHooksOnly if that install set it, the key set it wrote and its
receipt.

With --agent codex, gemini, cursor or copilot [--project DIR] it removes them from that
agent's hooks file (the one install --agent wrote); a Cursor or Copilot file that install
created and that holds nothing else is removed.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			agent, err := dialect.Parse(agentFlag)
			if err != nil {
				return &exitError{ExitError, err}
			}
			if managed && (agent != dialect.Claude || project != "") {
				return &exitError{ExitError, errors.New(
					"--managed is Claude Code's managed settings; not with --agent codex|gemini|cursor|copilot or --project")}
			}
			var rec managedReceipt
			if managed {
				if settings == "" {
					settings = defaultManagedSettings
				}
				var err error
				if rec, _, err = readReceipt(systemDir); err != nil {
					return &exitError{ExitError, err}
				}
				if !dryRun {
					if err := needRights("uninstall", settings, systemDir); err != nil {
						return &exitError{ExitError, err}
					}
				}
			}
			if settings == "" {
				if settings, err = agentSettings(agent, a.env.Getenv, project); err != nil {
					return &exitError{ExitError, err}
				}
			}
			var res uninstallResult
			if agent == dialect.Cursor || agent == dialect.Copilot {
				res, err = flatUninstall(settings, agent, dryRun, time.Now())
			} else {
				res, err = uninstallHooks(settings, dryRun, time.Now(), rec.AddedManagedOnly)
			}
			if err != nil {
				return &exitError{ExitError, err}
			}
			w := a.env.Stdout
			if managed && !dryRun {
				a.removeManagedFiles(systemDir, rec)
			}
			switch {
			case res.Removed == 0:
				fmt.Fprintf(w, "%s runs no claimcheck-hook; nothing changed\n", settings)
				return nil
			case dryRun:
				fmt.Fprintf(w, "would remove %d claimcheck-hook entries from %s (dry run, nothing written)\n", res.Removed, settings)
				return nil
			}
			fmt.Fprintf(w, "removed %d claimcheck-hook entries from %s\n", res.Removed, settings)
			if res.Restored != "" {
				fmt.Fprintf(w, "the file is now byte for byte the backup %s\n", res.Restored)
			}
			if res.Deleted {
				fmt.Fprintf(w, "install created %s and it held nothing else: removed, as before install\n", settings)
			}
			fmt.Fprintf(w, "previous settings saved as %s\n", res.Backup)
			fmt.Fprintf(w, "%s reads hooks at session start: restart running sessions to pick this up.\n", agentName(agent))
			return nil
		},
	}
	cmd.Flags().StringVar(&settings, "settings", "", "settings file to change (default: the --agent's, as for install)")
	cmd.Flags().StringVar(&agentFlag, "agent", string(dialect.Claude),
		"the agent CLI to uninstall from: claude, codex, gemini, cursor or copilot")
	cmd.Flags().StringVar(&project, "project", "", "uninstall from this project's hooks file, as install --project")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report what would change without writing")
	cmd.Flags().BoolVar(&managed, "managed", false, "undo install --managed (Claude Code's managed settings; needs root)")
	cmd.Flags().StringVar(&systemDir, "system-dir", defaultSystemDir,
		"with --managed: where install --managed put the key set and its receipt")
	return cmd
}

type uninstallResult struct {
	Removed  int
	Backup   string // the settings as they were before uninstall
	Restored string // the install backup written back, if one matched
	Deleted  bool   // the file install created was removed
}

// uninstallHooks removes claimcheck's handlers from a settings file (and
// allowManagedHooksOnly when dropManagedOnly: install --managed set it).
func uninstallHooks(path string, dryRun bool, now time.Time, dropManagedOnly bool) (uninstallResult, error) {
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
	if res.Removed, err = removeHooks(path, root); err != nil {
		return res, err
	}
	if dropManagedOnly {
		if i := slices.Index(root.names, managedOnlyKey); i >= 0 {
			root.deleteAt(i)
			res.Removed++
		}
	}
	if res.Removed == 0 || dryRun {
		return res, nil
	}
	if res.Restored, err = matchingBackup(path, root.encode()); err != nil {
		return res, err
	}
	if res.Restored == "" {
		res.Backup, err = writeSettings(path, orig, mode, root, now)
		return res, err
	}
	restored, err := os.ReadFile(res.Restored)
	if err != nil {
		return res, err
	}
	res.Backup, err = writeSettingsBytes(path, orig, mode, restored, now)
	return res, err
}

// removeHooks drops every claimcheck-hook handler from root's hooks, then
// the groups left with no handler and the events left with no group (only
// those claimcheck emptied), and "hooks" itself if nothing is left in it.
func removeHooks(path string, root *object) (int, error) {
	return pruneHooks(path, root, removeFromGroups)
}

// pruneHooks applies prune to each event's array under root's "hooks"
// (members that are not arrays are left alone), drops the events it
// empties and "hooks" itself when nothing is left in it, and returns how
// many handlers prune dropped.
func pruneHooks(path string, root *object, prune func([]jsontext.Value) (kept []jsontext.Value, n int)) (int, error) {
	raw, ok := root.get("hooks")
	if !ok {
		return 0, nil
	}
	hooksObj := &object{}
	if err := hooksObj.parse(raw); err != nil {
		return 0, fmt.Errorf("%s: \"hooks\" is not an object: %w", path, err)
	}
	removed := 0
	for i := 0; i < len(hooksObj.names); i++ {
		var items []jsontext.Value
		if json.Unmarshal(hooksObj.values[i], &items) != nil {
			continue // not claimcheck's to judge
		}
		kept, n := prune(items)
		if n == 0 {
			continue
		}
		removed += n
		if len(kept) == 0 {
			hooksObj.deleteAt(i)
			i--
			continue
		}
		hooksObj.values[i] = mustJSON(kept)
	}
	if removed == 0 {
		return 0, nil
	}
	putHooks(root, hooksObj)
	return removed, nil
}

// removeFromGroups drops claimcheck's handlers from an event's groups, and
// a group it leaves without handlers; n is how many handlers it dropped.
func removeFromGroups(groups []jsontext.Value) (kept []jsontext.Value, n int) {
	for _, g := range groups {
		gobj := &object{}
		var handlers []jsontext.Value
		rawHandlers, ok := jsontext.Value(nil), false
		if gobj.parse(g) == nil {
			rawHandlers, ok = gobj.get("hooks")
		}
		if !ok || json.Unmarshal(rawHandlers, &handlers) != nil {
			kept = append(kept, g)
			continue
		}
		before := len(handlers)
		handlers = slices.DeleteFunc(handlers, func(h jsontext.Value) bool {
			var cur handler
			return json.Unmarshal(h, &cur) == nil && isClaimcheckHook(cur.Command)
		})
		n += before - len(handlers)
		switch {
		case len(handlers) == before:
			kept = append(kept, g)
		case len(handlers) > 0:
			gobj.set("hooks", mustJSON(handlers))
			kept = append(kept, gobj.encode())
		}
	}
	return kept, n
}

// matchingBackup returns the newest backup of path (made by install or
// uninstall) whose JSON equals want, member order aside; "" if none does.
func matchingBackup(path string, want jsontext.Value) (string, error) {
	backups, err := filepath.Glob(path + ".bak-*")
	if err != nil {
		return "", err
	}
	slices.Sort(backups) // the names end in a UTC time stamp
	canonWant := want.Clone()
	if canonWant.Canonicalize() != nil {
		return "", nil
	}
	for _, b := range slices.Backward(backups) {
		data, err := os.ReadFile(b)
		if err != nil {
			continue
		}
		v := jsontext.Value(bytes.TrimSpace(data)).Clone()
		if v.Canonicalize() == nil && bytes.Equal(v, canonWant) {
			return b, nil
		}
	}
	return "", nil
}

// removeManagedFiles removes the key set and the receipt install --managed
// wrote (the key set only where that install puts key sets).
func (a *app) removeManagedFiles(systemDir string, rec managedReceipt) {
	w := a.env.Stdout
	keysDir := filepath.Join(systemDir, "hook", decision.KeySetDir)
	if k := rec.GateKeys; k != "" && filepath.Dir(k) == keysDir {
		if err := os.Remove(k); err == nil {
			fmt.Fprintf(w, "removed the hook's key set %s\n", k)
		} else if !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(w, "warning: %v\n", err)
		}
	}
	if err := os.Remove(receiptPath(systemDir)); err == nil {
		fmt.Fprintf(w, "removed %s\n", receiptPath(systemDir))
	} else if !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(w, "warning: %v\n", err)
	}
}
