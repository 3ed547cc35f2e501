package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/decision"
)

// A managed install puts claimcheck's hooks in Claude Code's managed
// settings, the layer neither the developer's user nor the project can
// override: with allowManagedHooksOnly, Claude Code runs only the hooks
// found there, and a process of the developer's user (the agent's tool
// calls included) can neither change nor disable them. The key set the
// hook trusts goes to a system directory the developer's user cannot
// write either.
const (
	// defaultManagedSettings is Claude Code's managed settings file on
	// Linux (the Claude Code settings reference, "Settings files").
	defaultManagedSettings = "/etc/claude-code/managed-settings.json"
	// defaultSystemDir holds the managed install's key sets and receipt.
	defaultSystemDir = "/etc/claimcheck"
	// managedOnlyKey is Claude Code's setting that ignores every hook
	// outside managed settings.
	managedOnlyKey = "allowManagedHooksOnly"
)

// managedReceipt records what a managed install added, so that
// uninstall --managed removes exactly that.
type managedReceipt struct {
	Settings    string `json:"settings"`
	HookCommand string `json:"hook_command"`
	// AddedManagedOnly: allowManagedHooksOnly was not true before the
	// first install; uninstall removes it.
	AddedManagedOnly bool   `json:"added_allow_managed_hooks_only"`
	GateKeys         string `json:"gate_keys,omitempty"`
	InstalledAt      string `json:"installed_at"`
}

func receiptPath(systemDir string) string { return filepath.Join(systemDir, "managed-install.json") }

func readReceipt(systemDir string) (managedReceipt, bool, error) {
	var r managedReceipt
	b, err := os.ReadFile(receiptPath(systemDir))
	if errors.Is(err, fs.ErrNotExist) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, false, fmt.Errorf("%s: %w", receiptPath(systemDir), err)
	}
	return r, true, nil
}

// writePublic writes b to path atomically, mode 0644 in 0755 directories:
// the developer's user (as whom Claude Code and the hook run) must read
// managed files, and only their owner may write them.
func writePublic(path string, b []byte) error { return writeAtomic(path, b, 0o644, 0o755) }

// writeAtomic replaces path with b (synced, then renamed over it), creating
// its directories with dirMode.
func writeAtomic(path string, b []byte, mode, dirMode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// needRights checks, before anything changes, that this process may
// write each path (or create it in its nearest existing directory).
func needRights(verb string, paths ...string) error {
	for _, p := range paths {
		target := p
		for {
			if _, err := os.Lstat(target); err == nil {
				break
			}
			parent := filepath.Dir(target)
			if parent == target {
				break
			}
			target = parent
		}
		if err := syscall.Access(target, 2 /* W_OK */); err != nil {
			return fmt.Errorf("%s %s needs the rights to write %s (%w): run it as root, e.g. `sudo claimcheck hooks %s --managed`",
				verb, p, target, err, verb)
		}
	}
	return nil
}

// othersCanWrite names the first of paths (the file and the directories
// above it) that someone other than root may write: a managed install
// there protects nothing.
func othersCanWrite(path string) string {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			st, ok := fi.Sys().(*syscall.Stat_t)
			if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 || ok && st.Uid != 0 {
				return p
			}
		}
		if filepath.Dir(p) == p {
			return ""
		}
	}
}

// mergeManagedOnly sets allowManagedHooksOnly; it reports whether the
// setting was not already true.
func mergeManagedOnly(root *object) bool {
	if raw, ok := root.get(managedOnlyKey); ok && strings.TrimSpace(string(raw)) == "true" {
		return false
	}
	root.set(managedOnlyKey, mustJSON(true))
	return true
}

// managedInstall is `hooks install --managed` once the hook command is
// known: the settings, the receipt and the key set.
func (a *app) managedInstall(ctx context.Context, settings, systemDir string, in install) error {
	w := a.env.Stdout
	hookCmd, dryRun := in.hookCmd, in.dryRun
	if !dryRun {
		if err := needRights("install", settings, systemDir); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
			return fmt.Errorf("install %s: %w", settings, err)
		}
	}
	prev, _, err := readReceipt(systemDir)
	if err != nil {
		return err
	}
	in.managed = true
	res, err := installHooks(settings, in)
	if err != nil {
		return err
	}
	switch {
	case res.Changed == 0:
		fmt.Fprintf(w, "%s already runs claimcheck-hook for all %d events with %s; nothing changed\n",
			settings, len(hookEvents), managedOnlyKey)
	case dryRun:
		fmt.Fprintf(w, "would add %d and update %d hook entries in %s (dry run, nothing written)\n", res.Added, res.Updated, settings)
	default:
		fmt.Fprintf(w, "added %d and updated %d hook entries in %s\n", res.Added, res.Updated, settings)
		if res.Backup != "" {
			fmt.Fprintf(w, "previous settings saved as %s\n", res.Backup)
		}
	}
	fmt.Fprintf(w, "hook command: %s\n", hookCmd)
	if dryRun {
		return nil
	}
	rec := managedReceipt{
		Settings: settings, HookCommand: hookCmd, AddedManagedOnly: prev.AddedManagedOnly || res.ManagedOnlyAdded,
		GateKeys: gateKeysOf(hookCmd), InstalledAt: time.Now().UTC().Format(time.RFC3339),
	}
	raw, err := json.Marshal(rec, json.Deterministic(true))
	if err != nil {
		return err
	}
	if err := writePublic(receiptPath(systemDir), append(raw, '\n')); err != nil {
		return fmt.Errorf("install receipt: %w", err)
	}
	if rec.AddedManagedOnly {
		fmt.Fprintf(w, "%s: true — Claude Code now runs only managed hooks; user and project hooks (yours included) no longer run\n",
			managedOnlyKey)
	}
	a.installHookKeysAt(ctx, rec.GateKeys, 0o644)
	if p := othersCanWrite(settings); p != "" {
		fmt.Fprintf(w, "warning: %s is writable by a user other than root: whoever can write it can change or remove claimcheck's hooks\n",
			p)
	}
	fmt.Fprintln(w, "The developer's user (and so the agent) can neither change nor disable these hooks; root on this host still can.")
	return nil
}

// gateKeysOf returns the --gate-keys value of a hook command line.
func gateKeysOf(hookCmd string) string {
	_, rest, ok := strings.Cut(hookCmd, " --gate-keys ")
	if !ok {
		return ""
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return ""
	}
	return strings.Trim(f[0], "'")
}

// managedKeysPath is the key set a managed install's hook trusts for the
// server at natsURL.
func managedKeysPath(systemDir, natsURL string) string {
	return decision.KeySetPath(filepath.Join(systemDir, "hook"), natsURL)
}

// printUserLevelGaps says what a user-level install leaves open.
func printUserLevelGaps(w io.Writer, settings string) {
	fmt.Fprintf(w, strings.TrimLeft(`
this is a user-level install: the agent's tool calls run as you, and you can
write %s. The pre-tool gate refuses the writes to it that it can see (tools,
redirections, cp/mv/ln, interpreters' inline code); a script that builds the
path at run time gets through, and the next session would then run without
claimcheck. Drift detection records such a session; only a managed install
keeps the hooks out of the agent's reach: sudo claimcheck hooks install --managed
`, "\n"), settings)
}
