// Package hookconfig reads the hook configuration Claude Code starts a
// session under: every settings layer it takes hooks from (managed,
// managed.d, user, project, local), which of claimcheck's events
// (schemas.HookEvents) each hands to claimcheck-hook, and the switches
// that turn hooks off (allowManagedHooksOnly, disableAllHooks). From them
// it judges whether the session is gated. claimcheck-hook records the
// result with every SessionStart; `claimcheck hooks verify` prints it.
//
// Reading never fails: a file that cannot be read or parsed is a layer
// with an error (and no hooks, as for Claude Code).
package hookconfig

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
)

// MaxFileBytes caps each settings file read; a larger one is not read
// (and counts as a layer whose hooks are unknown).
const MaxFileBytes = 1 << 20

// MaxManagedD caps the managed-settings.d files read.
const MaxManagedD = 16

// Sources says where the layers are. An empty field skips its layers.
type Sources struct {
	ManagedDir string // holds managed-settings.json and managed-settings.d/
	Home       string // the user's home: ~/.claude/settings.json
	ProjectDir string // the project: .claude/settings.json and .claude/settings.local.json
}

// DefaultManagedDir is where Claude Code reads managed settings on this
// operating system.
func DefaultManagedDir() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode"
	case "windows":
		return `C:\Program Files\ClaudeCode`
	}
	return "/etc/claude-code"
}

// Expect is what the configuration should hold: claimcheck-hook for every
// event of schemas.HookEvents with Command (empty: commands are not
// compared). It comes from `claimcheck hooks install`'s record.
type Expect struct {
	Command string
}

// Layer is one settings file as read. Commands are in the clear: Layer is
// for local display; Config.Record is the form the ledger holds.
type Layer struct {
	Kind      string // schemas.Layer*
	Path      string
	Present   bool
	Parsed    bool
	Effective bool // its hooks run
	Size      int
	Digest    string // of the file's bytes
	Err       string
	Settings  Settings
	// Events are the events of schemas.HookEvents handed to claimcheck-hook
	// for every tool; Commands the distinct claimcheck-hook command lines.
	Events   []string
	Commands []string
	// pairs are the (event, command) pairs of the claimcheck-hook handlers.
	pairs []string
	// partial are the events handed to claimcheck-hook for some tools only.
	partial []string
}

// Config is a session's hook configuration and its verdict.
type Config struct {
	Layers  []Layer
	Verdict string // schemas.Hooks*
	Missing []string
	Reasons []string
	Expect  Expect
}

// Read reads every layer and judges the result.
func Read(src Sources, exp Expect) Config {
	var layers []Layer
	if src.ManagedDir != "" {
		layers = append(layers, readLayer(schemas.LayerManaged, filepath.Join(src.ManagedDir, "managed-settings.json")))
		layers = append(layers, readManagedD(filepath.Join(src.ManagedDir, "managed-settings.d"))...)
	}
	if src.Home != "" {
		layers = append(layers, readLayer(schemas.LayerUser, filepath.Join(src.Home, ".claude", "settings.json")))
	}
	if src.ProjectDir != "" {
		layers = append(layers,
			readLayer(schemas.LayerProject, filepath.Join(src.ProjectDir, ".claude", "settings.json")),
			readLayer(schemas.LayerLocal, filepath.Join(src.ProjectDir, ".claude", "settings.local.json")))
	}
	return Judge(layers, exp)
}

func readManagedD(dir string) []Layer {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []Layer{{Kind: schemas.LayerManagedD, Path: dir, Present: true, Err: errString(err)}}
	}
	var out []Layer
	for _, e := range entries { // ReadDir sorts by name: Claude Code's order
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if len(out) == MaxManagedD {
			out = append(out, Layer{Kind: schemas.LayerManagedD, Path: dir, Present: true,
				Err: fmt.Sprintf("more than %d files; the rest were not read", MaxManagedD)})
			break
		}
		out = append(out, readLayer(schemas.LayerManagedD, filepath.Join(dir, e.Name())))
	}
	return out
}

// readLayer reads and parses one settings file.
func readLayer(kind, path string) Layer {
	l := Layer{Kind: kind, Path: path}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l
	}
	l.Present = true
	if err != nil {
		l.Err = errString(err)
		return l
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	switch {
	case err != nil:
		l.Err = errString(err)
		return l
	case len(data) > MaxFileBytes:
		l.Err = fmt.Sprintf("larger than %d bytes; not read", MaxFileBytes)
		return l
	}
	l.Size, l.Digest = len(data), digest.SHA256(data)
	s, err := Parse(data)
	if err != nil {
		l.Err = err.Error()
		return l
	}
	l.Parsed, l.Settings = true, s
	l.scan()
	return l
}

// errString words a file error without the path (the layer has it).
func errString(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

// scan finds the claimcheck-hook handlers of claimcheck's events.
func (l *Layer) scan() {
	for _, ev := range schemas.HookEvents {
		all, some := false, false
		for _, g := range l.Settings.Hooks[ev.Name] {
			for _, h := range g.Hooks {
				if h.Type != "command" || !IsClaimcheckHook(h.Command) {
					continue
				}
				if g.Matcher != "" && g.Matcher != "*" {
					some = true
					continue
				}
				all = true
				l.pairs = append(l.pairs, ev.Name+"\x00"+h.Command)
				if !slices.Contains(l.Commands, h.Command) {
					l.Commands = append(l.Commands, h.Command)
				}
			}
		}
		switch {
		case all:
			l.Events = append(l.Events, ev.Name)
		case some:
			l.partial = append(l.partial, ev.Name)
		}
	}
}

// Handlers is the digest of a set of (event, command) handlers.
func Handlers(pairs []string) string {
	p := slices.Clone(pairs)
	sort.Strings(p)
	return digest.SHA256([]byte(strings.Join(p, "\n")))
}

// Installed is the digest of the handlers `claimcheck hooks install`
// writes with command: claimcheck-hook for every event.
func Installed(command string) string {
	pairs := make([]string, 0, len(schemas.HookEvents))
	for _, ev := range schemas.HookEvents {
		pairs = append(pairs, ev.Name+"\x00"+command)
	}
	return Handlers(pairs)
}

// Judge decides which layers' hooks run and the verdict: gated when every
// event of schemas.HookEvents has a claimcheck-hook handler (for every
// tool) in a layer whose hooks run, and every such handler runs the
// expected command; changed when the events are all handled but a command
// differs; missing when some are not handled; none when none is.
//
// Claude Code merges the hooks of every layer. A managed layer's
// allowManagedHooksOnly leaves only managed hooks; a managed layer's
// disableAllHooks turns every hook off, another layer's turns off the
// hooks outside the managed settings.
func Judge(layers []Layer, exp Expect) Config {
	c := Config{Layers: layers, Expect: exp}
	managedOnly, allOff, othersOff := "", "", ""
	for _, l := range layers {
		managed := l.Kind == schemas.LayerManaged || l.Kind == schemas.LayerManagedD
		switch {
		case managed && l.Settings.AllowManagedHooksOnly && managedOnly == "":
			managedOnly = l.Path
		case managed && l.Settings.DisableAllHooks && allOff == "":
			allOff = l.Path
		case !managed && l.Settings.DisableAllHooks && othersOff == "":
			othersOff = l.Path
		}
	}
	handled := map[string]bool{}
	var commands []string
	for i := range c.Layers {
		l := &c.Layers[i]
		managed := l.Kind == schemas.LayerManaged || l.Kind == schemas.LayerManagedD
		l.Effective = allOff == "" && (managed || (managedOnly == "" && othersOff == ""))
		if !l.Effective {
			if len(l.Events) > 0 {
				c.Reasons = append(c.Reasons, fmt.Sprintf("the claimcheck-hook handlers in %s do not run: %s", l.Path,
					offBy(managedOnly, allOff, othersOff)))
			}
			continue
		}
		for _, ev := range l.Events {
			handled[ev] = true
		}
		for _, cmd := range l.Commands {
			if !slices.Contains(commands, cmd) {
				commands = append(commands, cmd)
			}
		}
		for _, ev := range l.partial {
			c.Reasons = append(c.Reasons, fmt.Sprintf("%s in %s hands only some tools to claimcheck-hook (a matcher)", ev, l.Path))
		}
		if l.Err != "" {
			c.Reasons = append(c.Reasons, fmt.Sprintf("%s: %s (none of its hooks run)", l.Path, l.Err))
		}
	}
	for _, ev := range schemas.HookEvents {
		if !handled[ev.Name] {
			c.Missing = append(c.Missing, ev.Name)
		}
	}
	switch {
	case len(handled) == 0:
		c.Verdict = schemas.HooksNone
	case len(c.Missing) > 0:
		c.Verdict = schemas.HooksMissing
	case exp.Command != "" && slices.ContainsFunc(commands, func(s string) bool { return s != exp.Command }):
		c.Verdict = schemas.HooksChanged
		c.Reasons = append(c.Reasons, "a claimcheck-hook handler runs a command other than the one `claimcheck hooks install` wrote")
	case len(commands) > 1:
		c.Verdict = schemas.HooksChanged
		c.Reasons = append(c.Reasons, fmt.Sprintf("claimcheck-hook runs with %d different command lines", len(commands)))
	default:
		c.Verdict = schemas.HooksGated
	}
	if c.Verdict == schemas.HooksNone || c.Verdict == schemas.HooksMissing {
		c.Reasons = append(c.Reasons, fmt.Sprintf("%d of %d claimcheck events have no claimcheck-hook handler that runs",
			len(c.Missing), len(schemas.HookEvents)))
	}
	return c
}

func offBy(managedOnly, allOff, othersOff string) string {
	switch {
	case allOff != "":
		return "disableAllHooks in " + allOff
	case managedOnly != "":
		return "allowManagedHooksOnly in " + managedOnly
	}
	return "disableAllHooks in " + othersOff
}

// Record is the configuration as the ledger keeps it: digests instead of
// command lines, bounded lists.
func (c Config) Record() *schemas.HookConfig {
	r := &schemas.HookConfig{V: 1, Verdict: c.Verdict, Missing: c.Missing, Reasons: clipAll(c.Reasons, 32, 1024)}
	if c.Expect.Command != "" {
		r.Expected = Installed(c.Expect.Command)
	}
	for _, l := range c.Layers {
		if len(r.Layers) == 24 {
			r.Error = "more than 24 settings layers; the rest are not recorded"
			break
		}
		rl := schemas.HookLayer{Layer: l.Kind, Path: clip(l.Path, 4096), Present: l.Present, Parsed: l.Parsed,
			Effective: l.Effective, Size: l.Size, Digest: l.Digest, Error: clip(l.Err, 1024), Events: l.Events,
			AllowManagedHooksOnly: l.Settings.AllowManagedHooksOnly, DisableAllHooks: l.Settings.DisableAllHooks}
		for _, cmd := range l.Commands {
			if len(rl.Commands) < 16 {
				rl.Commands = append(rl.Commands, digest.SHA256([]byte(cmd)))
			}
		}
		if len(l.pairs) > 0 {
			rl.Handlers = Handlers(l.pairs)
		}
		r.Layers = append(r.Layers, rl)
	}
	if r.Layers == nil {
		r.Layers = []schemas.HookLayer{}
	}
	return r
}

func clipAll(list []string, n, size int) []string {
	if len(list) > n {
		list = list[:n]
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		out = append(out, clip(s, size))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
