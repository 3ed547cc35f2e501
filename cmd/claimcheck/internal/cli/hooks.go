package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/claimcheck/claimcheck/pkg/dialect"
	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/schemas"
)

// hookEvents are the Claude Code events claimcheck records, with the timeout
// (seconds) installed for each (shared with claimcheck-hook's SessionStart
// check of the hook configuration).
var hookEvents = schemas.HookEvents

func (a *app) hooksCommand() *cobra.Command {
	hooks := &cobra.Command{Use: "hooks", Short: "Manage the agent CLI hooks that feed claimcheck"}
	var settings, command, systemDir, agentFlag, project string
	var dryRun, sandbox, managed bool
	install := &cobra.Command{
		Use:   "install",
		Short: "Add claimcheck-hook to an agent CLI's hooks (Claude Code, Codex, Gemini CLI, Cursor, Copilot) for every event claimcheck records",
		Long: `install merges a command hook running claimcheck-hook into Claude Code's settings for
every event claimcheck records, with an explicit timeout for each. It keeps every
other hook and setting, updates its own entries in place when run again (so it is
idempotent), and backs the file up before changing it.

With --managed it writes Claude Code's managed settings instead
(/etc/claude-code/managed-settings.json), with allowManagedHooksOnly: true, and the
key set the hook trusts under /etc/claimcheck: neither the developer's user nor the
agent can then change or disable the hooks. That needs root; without the rights it
changes nothing and says so.

With --agent codex or --agent gemini it merges claimcheck-hook --agent <name> into
Codex's hooks.json or Gemini CLI's settings.json in the same way (--project DIR: the
project's file). With --agent cursor it merges claimcheck-hook --agent cursor into
~/.cursor/hooks.json (--project DIR: DIR/.cursor/hooks.json); with --agent copilot it
writes claimcheck-hook --agent copilot --event <event> into a file of its own,
~/.copilot/hooks/claimcheck.json ($COPILOT_HOME/hooks/ when set; --project DIR:
DIR/.github/hooks/claimcheck.json, which the Copilot coding agent reads from the default
branch). A file it cannot parse is refused, naming the file and the line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			agent, err := dialect.Parse(agentFlag)
			if err != nil {
				return &exitError{ExitError, err}
			}
			if agent != dialect.Claude && (sandbox || managed) {
				return &exitError{ExitError, fmt.Errorf(
					"--sandbox and --managed are Claude Code's settings; not available with --agent %s", agent)}
			}
			if project != "" && managed {
				return &exitError{ExitError, errors.New("--project and --managed: managed settings are the host's, not a project's")}
			}
			if settings == "" && managed {
				settings = defaultManagedSettings
			}
			if settings == "" {
				if settings, err = agentSettings(agent, a.env.Getenv, project); err != nil {
					return &exitError{ExitError, err}
				}
			}
			hookCmd, err := a.hookCommandLine(command, cmd.Flags().Changed("nats-url"))
			if err != nil {
				return &exitError{ExitError, err}
			}
			in := install{hookCmd: hookCmd, dryRun: dryRun, now: time.Now()}
			switch agent {
			case dialect.Cursor, dialect.Copilot:
				return a.flatInstall(cmd.Context(), agent, settings, in)
			case dialect.Codex, dialect.Gemini:
				return a.agentInstall(cmd.Context(), agent, settings, in)
			}
			if sandbox {
				spec := a.sandboxSpec()
				in.sandbox = &spec
			}
			if managed {
				in.hookCmd += " --gate-keys " + shellQuote(managedKeysPath(systemDir, a.natsURL()))
				if err := a.managedInstall(cmd.Context(), settings, systemDir, in); err != nil {
					return &exitError{ExitError, err}
				}
				fmt.Fprintln(a.env.Stdout, "Claude Code reads hooks at session start: restart running sessions to pick this up.")
				return nil
			}
			return a.userInstall(cmd.Context(), settings, in)
		},
	}
	f := install.Flags()
	f.StringVar(&settings, "settings", "",
		"settings file to change (default ~/.claude/settings.json; with --managed "+defaultManagedSettings+")")
	f.StringVar(&agentFlag, "agent", string(dialect.Claude),
		"the agent CLI to install for: claude (~/.claude/settings.json), codex ($CODEX_HOME/hooks.json, else ~/.codex/hooks.json), "+
			"gemini (~/.gemini/settings.json), cursor (~/.cursor/hooks.json) or copilot (~/.copilot/hooks/claimcheck.json)")
	f.StringVar(&project, "project", "",
		"install into this project's hooks file (DIR/.claude/settings.json, DIR/.codex/hooks.json, DIR/.gemini/settings.json, "+
			"DIR/.cursor/hooks.json, DIR/.github/hooks/claimcheck.json)")
	f.StringVar(&command, "hook-command", "", "path of claimcheck-hook (default: next to this claimcheck binary, else on $PATH)")
	f.BoolVar(&dryRun, "dry-run", false, "report what would change without writing")
	f.BoolVar(&sandbox, "sandbox", false,
		"also turn on Claude Code's sandbox for the agent's Bash commands, so they can neither reach NATS nor read claimcheck's credentials, keys and data (`claimcheck claim` runs outside it)")
	f.BoolVar(&managed, "managed", false,
		"install into Claude Code's managed settings with allowManagedHooksOnly, out of the developer's and the agent's reach (needs root)")
	f.StringVar(&systemDir, "system-dir", defaultSystemDir, "with --managed: where the hook's trusted key sets and the install receipt go")
	hooks.AddCommand(install, a.hooksUninstallCommand())
	a.addHooksVerify(hooks)
	return hooks
}

// userInstall is `hooks install` into a settings file of the user's.
func (a *app) userInstall(ctx context.Context, settings string, in install) error {
	res, err := installHooks(settings, in)
	if err != nil {
		return &exitError{ExitError, err}
	}
	w := a.env.Stdout
	switch {
	case res.Changed == 0 && !res.Sandbox:
		fmt.Fprintf(w, "%s already runs claimcheck-hook for all %d events; nothing changed\n", settings, len(hookEvents))
	case in.dryRun:
		fmt.Fprintf(w, "would add %d and update %d hook entries in %s (dry run, nothing written)\n",
			res.Added, res.Updated, settings)
	default:
		fmt.Fprintf(w, "added %d and updated %d hook entries in %s\n", res.Added, res.Updated, settings)
		if res.Backup != "" {
			fmt.Fprintf(w, "previous settings saved as %s\n", res.Backup)
		}
	}
	fmt.Fprintf(w, "hook command: %s\n", in.hookCmd)
	if res.Sandbox {
		fmt.Fprintf(w, "sandbox settings merged into %s\n", settings)
	}
	if orig, _, err := readSettings(settings); err == nil && orig != nil {
		root := &object{}
		if root.parse(orig) == nil {
			for _, warn := range sandboxWarnings(root) {
				fmt.Fprintln(w, "warning: "+warn)
			}
		}
	}
	printUnsandboxed(w, in.sandbox != nil)
	printUserLevelGaps(w, settings)
	if !in.dryRun {
		if err := a.recordInstall(settings, in.hookCmd); err != nil {
			return &exitError{ExitError, err}
		}
		a.installHookKeys(ctx)
	}
	fmt.Fprintln(w, "Claude Code reads hooks at session start: restart running sessions to pick this up.")
	return nil
}

// sandboxSpec is what --sandbox keeps from the agent's Bash commands.
func (a *app) sandboxSpec() sandboxSpec {
	var spec sandboxSpec
	add := func(p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !slices.Contains(spec.denyRead, p) {
			spec.denyRead = append(spec.denyRead, p)
		}
	}
	add(a.dataDir())
	add(hookStateDir(a.env.Getenv))
	add(a.creds(identity.RoleHook))
	a.protectConfig(&spec)
	spec.excluded = []string{"claimcheck claim *"}
	if exe, err := os.Executable(); err == nil {
		spec.excluded = append(spec.excluded, exe+" claim *")
	}
	return spec
}

// findBeside finds the executable name next to this claimcheck binary,
// else on $PATH.
func findBeside(name string) (string, error) {
	if exe, err := os.Executable(); err == nil {
		cand := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(cand); err == nil && !fi.IsDir() {
			return cand, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found next to claimcheck or on $PATH", name)
	}
	return p, nil
}

// hookCommandLine builds the shell command Claude Code runs. For tls://
// NATS URLs it picks claimcheck-hook-tls: the plain claimcheck-hook is the
// lean build without TLS (its start-up is shorter by TLS's package
// initialisation). The hook's credentials are this host's hook identity:
// --nats-creds, or the hook.creds `claimcheck up` wrote.
func (a *app) hookCommandLine(path string, withURL bool) (string, error) {
	name := "claimcheck-hook"
	creds := a.creds(identity.RoleHook)
	if creds != "" {
		i, ok, err := a.identity(identity.RoleHook)
		if err != nil {
			return "", err
		}
		if ok && i.Role != identity.RoleHook {
			return "", fmt.Errorf(
				"%s holds credentials of role %s: the hook needs this host's hook identity (<data dir>/creds/hook.creds, or claimcheck creds issue --role hook --host <host>)", creds, i.Role)
		}
	}
	if needsTLS(a.v.GetString("nats.url")) {
		name = "claimcheck-hook-tls" // the lean build has no TLS
	}
	if path == "" {
		p, err := findBeside(name)
		if err != nil {
			return "", fmt.Errorf("%w; build it (make build) or pass --hook-command", err)
		}
		path = p
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("hook command %s: %w", abs, err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("hook command %s is not an executable file", abs)
	}
	line := shellQuote(abs)
	if url := a.v.GetString("nats.url"); withURL || a.env.Getenv("CLAIMCHECK_NATS_URL") != "" {
		line += " --nats-url " + shellQuote(url)
	}
	if creds != "" {
		abs, err := filepath.Abs(creds)
		if err != nil {
			return "", err
		}
		line += " --nats-creds " + shellQuote(abs)
	}
	return line, nil
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-:,@+=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

type installResult struct {
	Added, Updated, Changed int
	Backup                  string
	// ManagedOnlyAdded: allowManagedHooksOnly was set (--managed).
	ManagedOnlyAdded bool
	// Sandbox reports that the sandbox settings changed (--sandbox).
	Sandbox bool
}

// install says what to merge into a settings file.
type install struct {
	hookCmd string
	sandbox *sandboxSpec // nil: leave the sandbox settings alone
	managed bool         // managed settings: allowManagedHooksOnly, world-readable
	dryRun  bool
	now     time.Time
}

// installHooks merges the hook (and with a sandbox spec, the sandbox) into
// the settings file. Member order and every value claimcheck does not own
// are kept as they were.
func installHooks(path string, in install) (installResult, error) {
	var res installResult
	orig, mode, err := readSettings(path)
	if err != nil {
		return res, err
	}
	if in.managed && orig == nil {
		mode = 0o644 // Claude Code runs as the developer's user and must read it
	}
	root := &object{}
	if len(bytes.TrimSpace(orig)) > 0 {
		if err := root.parse(orig); err != nil {
			return res, fmt.Errorf("%s is not a JSON object Claude Code could read (%s): %w (fix or move it, then run install again)",
				path, jsonPosition(orig, err), err)
		}
	}
	if res, err = mergeHooks(path, root, in.hookCmd); err != nil {
		return res, err
	}
	if in.managed && mergeManagedOnly(root) {
		res.ManagedOnlyAdded = true
		res.Changed++
	}
	if in.sandbox != nil {
		if res.Sandbox, err = mergeSandbox(path, root, *in.sandbox); err != nil {
			return res, err
		}
	}
	if res.Changed == 0 && !res.Sandbox || in.dryRun {
		return res, nil
	}
	res.Backup, err = writeSettings(path, orig, mode, root, in.now)
	return res, err
}

// readSettings reads a settings file (nil when there is none) and its mode.
func readSettings(path string) ([]byte, os.FileMode, error) {
	mode := os.FileMode(0o600)
	orig, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, mode, nil
	case err != nil:
		return nil, mode, fmt.Errorf("read %s: %w", path, err)
	}
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return orig, mode, nil
}

// mergeHooks adds or updates claimcheck's handler of every event.
func mergeHooks(path string, root *object, hookCmd string) (installResult, error) {
	return mergeEventHooks(path, root, hookCmd, hookEvents, 1)
}

// mergeEventHooks adds or updates claimcheck's handler of each of events,
// in the {"hooks":{Event:[{"hooks":[handler]}]}} shape that Claude Code,
// Codex and Gemini CLI share; timeouts are seconds times timeoutScale
// (Gemini CLI counts milliseconds).
func mergeEventHooks(path string, root *object, hookCmd string, events []schemas.HookEvent, timeoutScale int) (installResult, error) {
	var res installResult
	hooksObj := &object{}
	if raw, ok := root.get("hooks"); ok {
		if err := hooksObj.parse(raw); err != nil {
			return res, fmt.Errorf("%s: \"hooks\" is not an object: %w", path, err)
		}
	}
	for _, ev := range events {
		var groups []jsontext.Value
		if raw, ok := hooksObj.get(ev.Name); ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return res, fmt.Errorf("%s: hooks.%s is not an array: %w", path, ev.Name, err)
			}
		}
		want := handler{Type: "command", Command: hookCmd, Timeout: ev.Timeout * timeoutScale}
		groups, found, changed := mergeHandler(groups, want)
		if !found {
			group := &object{}
			group.set("hooks", mustJSON([]handler{want}))
			groups = append(groups, group.encode())
			res.Added++
		} else if changed {
			res.Updated++
		}
		hooksObj.set(ev.Name, mustJSON(groups))
	}
	res.Changed = res.Added + res.Updated
	if res.Changed > 0 {
		root.set("hooks", hooksObj.encode())
	}
	return res, nil
}

// mergeHandler updates claimcheck's handler among an event's groups (and
// drops a second one); found says there was one.
func mergeHandler(groups []jsontext.Value, want handler) (out []jsontext.Value, found, changed bool) {
	for gi, g := range groups {
		gobj := &object{}
		if gobj.parse(g) != nil {
			continue
		}
		rawHandlers, ok := gobj.get("hooks")
		if !ok {
			continue
		}
		var handlers []jsontext.Value
		if json.Unmarshal(rawHandlers, &handlers) != nil {
			continue
		}
		for hi, h := range handlers {
			var cur handler
			if json.Unmarshal(h, &cur) != nil || !isClaimcheckHook(cur.Command) {
				continue
			}
			if found {
				// A second claimcheck handler for the same event: drop it.
				handlers = append(handlers[:hi], handlers[hi+1:]...)
				changed = true
				break
			}
			found = true
			if cur == want {
				continue
			}
			hobj := &object{}
			_ = hobj.parse(h)
			hobj.set("type", mustJSON(want.Type))
			hobj.set("command", mustJSON(want.Command))
			hobj.set("timeout", mustJSON(want.Timeout))
			handlers[hi] = hobj.encode()
			changed = true
		}
		gobj.set("hooks", mustJSON(handlers))
		groups[gi] = gobj.encode()
	}
	return groups, found, changed
}

// writeSettings backs the old file up and replaces it atomically with root,
// indented as Claude Code writes it; it returns the backup's path ("" when
// there was no file).
func writeSettings(path string, orig []byte, mode os.FileMode, root *object, now time.Time) (string, error) {
	out := root.encode()
	if err := out.Indent(jsontext.WithIndent("  ")); err != nil {
		return "", err
	}
	return writeSettingsBytes(path, orig, mode, append(out, '\n'), now)
}

// writeSettingsBytes backs the old file up (a new file each time, never
// over an earlier backup) and replaces it atomically with out.
func writeSettingsBytes(path string, orig []byte, mode os.FileMode, out []byte, now time.Time) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	backup := ""
	if orig != nil {
		var err error
		if backup, err = writeBackup(path, orig, mode, now); err != nil {
			return "", err
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".settings-*.json")
	if err != nil {
		return backup, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(out); err != nil {
		_ = tmp.Close()
		return backup, err
	}
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return backup, err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return backup, err
	}
	if err := tmp.Close(); err != nil {
		return backup, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return backup, fmt.Errorf("write %s: %w", path, err)
	}
	return backup, nil
}

// writeBackup writes orig to <path>.bak-<UTC time>, with a counter after the
// time when that name is taken: an earlier backup is never overwritten.
func writeBackup(path string, orig []byte, mode os.FileMode, now time.Time) (string, error) {
	stamp := fmt.Sprintf("%s.bak-%s", path, now.UTC().Format("20060102T150405.000Z"))
	for i := 0; ; i++ {
		name := stamp
		if i > 0 {
			name = fmt.Sprintf("%s-%d", stamp, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		if _, err := f.Write(orig); err != nil {
			_ = f.Close()
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		return name, nil
	}
}

type handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

func isClaimcheckHook(cmd string) bool {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return false
	}
	p := strings.Trim(f[0], `'"`)
	return strings.HasSuffix(p, "claimcheck-hook") || strings.HasSuffix(p, "claimcheck-hook-tls")
}

// needsTLS reports whether any of the comma-separated NATS URLs is tls://.
func needsTLS(urls string) bool {
	for _, u := range strings.Split(urls, ",") {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(u)), "tls://") {
			return true
		}
	}
	return false
}

func mustJSON(v any) jsontext.Value {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with values that always encode
	}
	return b
}

// object is a JSON object that keeps its members' order and raw values.
type object struct {
	names  []string
	values []jsontext.Value
}

func (o *object) parse(b []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("expected an object, found %s", tok.Kind())
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String() // a Token is valid only until the next read
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		o.names = append(o.names, name)
		o.values = append(o.values, v.Clone())
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	if _, err := dec.ReadToken(); err == nil {
		return errors.New("data after the object")
	}
	return nil
}

func (o *object) get(name string) (jsontext.Value, bool) {
	for i, n := range o.names {
		if n == name {
			return o.values[i], true
		}
	}
	return nil, false
}

func (o *object) set(name string, v jsontext.Value) {
	for i, n := range o.names {
		if n == name {
			o.values[i] = v
			return
		}
	}
	o.names = append(o.names, name)
	o.values = append(o.values, v)
}

// deleteAt removes the i-th member.
func (o *object) deleteAt(i int) {
	o.names = slices.Delete(o.names, i, i+1)
	o.values = slices.Delete(o.values, i, i+1)
}

// putHooks puts hooks back as root's "hooks", or removes that member when
// hooks has none left.
func putHooks(root, hooks *object) {
	if len(hooks.names) > 0 {
		root.set("hooks", hooks.encode())
	} else if i := slices.Index(root.names, "hooks"); i >= 0 {
		root.deleteAt(i)
	}
}

func (o *object) encode() jsontext.Value {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range o.names {
		if i > 0 {
			b.WriteByte(',')
		}
		q, _ := jsontext.AppendQuote(nil, n)
		b.Write(q)
		b.WriteByte(':')
		b.Write(o.values[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// installHookKeys writes the key set claimcheck-hook trusts for signed gate
// decisions, when NATS is reachable now.
func (a *app) installHookKeys(ctx context.Context) {
	a.installHookKeysAt(ctx, hookKeysPath(a.env.Getenv, a.natsURL()), 0o600)
}

// installHookKeysAt writes the key set to path with the given mode (0644
// in 0755 directories for a managed install, which the hook reads as the
// developer's user).
func (a *app) installHookKeysAt(ctx context.Context, path string, mode os.FileMode) {
	w := a.env.Stdout
	if i, ok, _ := a.identity(identity.RoleOperator); ok && i.Role == identity.RoleHook {
		fmt.Fprintf(w,
			"note: a hook identity may not read the key registry, so the gate's key set was not written to %s: copy it from the claimcheck server (`claimcheck keys export`) or run `claimcheck up` on this host. Until then Stop and PreToolUse fail closed.\n", path)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	nc, js, err := a.connect(ctx)
	if err == nil {
		defer nc.Close()
		var reg *keyring.Registry
		if reg, err = keyring.OpenRegistry(ctx, js); err == nil {
			var n int
			if n, err = writeHookKeys(ctx, reg, path, mode); err == nil {
				fmt.Fprintf(w, "wrote %s: claimcheck-hook trusts gate decisions signed by these %d keys\n", path, n)
				return
			}
		}
	}
	fmt.Fprintf(w,
		"note: the gate's key set was not written to %s (%v); `claimcheck up` writes it when it starts. Until then Stop and PreToolUse fail closed.\n", path, err)
}
