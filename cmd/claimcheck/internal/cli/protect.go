package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// hookNames are claimcheck-hook's builds: the lean one and the one with TLS.
var hookNames = []string{"claimcheck-hook", "claimcheck-hook-tls"}

// agentFiles are the files that configure the agent's hooks in a project,
// relative to its directory (Claude Code, Codex, Gemini CLI, Cursor,
// GitHub Copilot). The pre-tool policy lists them too
// (paths.configuration).
var agentFiles = []string{
	".claude/settings.json", ".claude/settings.local.json",
	".codex/config.toml", ".codex/hooks.json",
	".gemini/settings.json",
	".cursor/hooks.json",
	".github/hooks",
}

// protectedConfig is what the agent under audit must not change, as only
// this process knows it: claimcheck-hook's executables, and the files
// that configure claimcheck or the agent's hooks outside a project.
type protectedConfig struct {
	hooks []string // claimcheck-hook and claimcheck-hook-tls: next to this binary, on $PATH
	files []string // absolute paths
}

// protectedConfig finds them: the hooks next to this claimcheck binary and
// on $PATH; this binary; the configuration file; /etc/claimcheck; the key
// set the hook trusts when CLAIMCHECK_HOOK_GATE_KEYS moves it out of the
// hook's state directory; the user-level agent settings ($CODEX_HOME
// for Codex, ~/.codex when unset; $COPILOT_HOME/hooks for Copilot,
// ~/.copilot/hooks when unset).
func (a *app) protectedConfig() protectedConfig {
	var pc protectedConfig
	add := func(list *[]string, p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}
	if exe, err := os.Executable(); err == nil {
		for _, n := range hookNames {
			add(&pc.hooks, filepath.Join(filepath.Dir(exe), n))
		}
		add(&pc.files, exe)
	}
	for _, n := range hookNames {
		if p, err := exec.LookPath(n); err == nil {
			add(&pc.hooks, p)
		}
	}
	add(&pc.files, a.cfgFile)
	add(&pc.files, "/etc/claimcheck")
	if k := a.env.Getenv("CLAIMCHECK_HOOK_GATE_KEYS"); k != "" {
		add(&pc.files, k)
	}
	if home := a.env.Getenv("HOME"); home != "" {
		for _, f := range []string{".claude/settings.json", ".claude/settings.local.json", ".gemini/settings.json", ".cursor/hooks.json"} {
			add(&pc.files, filepath.Join(home, f))
		}
	}
	codex := a.env.Getenv("CODEX_HOME")
	if codex == "" && a.env.Getenv("HOME") != "" {
		codex = filepath.Join(a.env.Getenv("HOME"), ".codex")
	}
	if codex != "" {
		add(&pc.files, filepath.Join(codex, "config.toml"))
		add(&pc.files, filepath.Join(codex, "hooks.json"))
	}
	// Copilot's user-level hook files: every *.json in $COPILOT_HOME/hooks
	// (~/.copilot/hooks when unset), where hooks install --agent copilot
	// writes claimcheck.json.
	copilot := a.env.Getenv("COPILOT_HOME")
	if copilot == "" && a.env.Getenv("HOME") != "" {
		copilot = filepath.Join(a.env.Getenv("HOME"), ".copilot")
	}
	if copilot != "" {
		add(&pc.files, filepath.Join(copilot, "hooks"))
	}
	return pc
}
