package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
)

// sandboxSpec is what `hooks install --sandbox` puts behind Claude Code's
// sandbox (bubblewrap on Linux, Seatbelt on macOS), which confines the
// agent's Bash tool commands, never its hooks: the hooks keep reaching
// NATS and reading the hook's credentials; the agent's own processes can
// do neither.
type sandboxSpec struct {
	// denyRead: claimcheck's data directory (the NATS authority, every
	// credential, the signing keys, the store and its key), the hook's state
	// directory (spool, trusted keys) and the hook's credentials.
	denyRead []string
	// denyWrite: the files that configure claimcheck or the agent's hooks
	// outside a project, and claimcheck's binaries (sandbox.filesystem
	// .denyWrite, absolute paths).
	denyWrite []string
	// denyEdit: the same files inside the project the session runs in, as
	// permissions.deny Edit(...) rules relative to its directory, which
	// Claude Code also applies to the sandbox's writes (OS level, Bash
	// too) and to its own file tools.
	denyEdit []string
	// excluded: commands that run outside the sandbox (with Claude Code's
	// permission rules): `claimcheck claim`, so that the agent can still
	// back its claims with the hook's identity, which may only ask for
	// verdicts.
	excluded []string
}

// The sandbox settings install owns (Claude Code's settings reference,
// "sandbox"): the sandbox on, a hard failure when it cannot start rather
// than a warning, and no way for the agent to retry a command unsandboxed.
var sandboxFlags = []struct {
	name  string
	value bool
}{
	{"enabled", true},
	{"failIfUnavailable", true},
	{"allowUnsandboxedCommands", false},
}

// mergeSandbox merges spec into the settings' "sandbox" object, keeping
// every other sandbox setting and list entry of the user's; it reports
// whether anything changed.
func mergeSandbox(path string, root *object, spec sandboxSpec) (bool, error) {
	sb := &object{}
	if raw, ok := root.get("sandbox"); ok {
		if err := sb.parse(raw); err != nil {
			return false, fmt.Errorf("%s: \"sandbox\" is not an object: %w", path, err)
		}
	}
	changed := false
	for _, f := range sandboxFlags {
		if raw, ok := sb.get(f.name); !ok || string(raw) != fmt.Sprint(f.value) {
			sb.set(f.name, mustJSON(f.value))
			changed = true
		}
	}
	c, err := mergeList(sb, "excludedCommands", spec.excluded)
	if err != nil {
		return false, fmt.Errorf("%s: sandbox.%w", path, err)
	}
	changed = changed || c
	fs := &object{}
	if raw, ok := sb.get("filesystem"); ok {
		if err := fs.parse(raw); err != nil {
			return false, fmt.Errorf("%s: sandbox.filesystem is not an object: %w", path, err)
		}
	}
	c, err = mergeList(fs, "denyRead", spec.denyRead)
	if err != nil {
		return false, fmt.Errorf("%s: sandbox.filesystem.%w", path, err)
	}
	cw, err := mergeList(fs, "denyWrite", spec.denyWrite)
	if err != nil {
		return false, fmt.Errorf("%s: sandbox.filesystem.%w", path, err)
	}
	if c || cw {
		sb.set("filesystem", fs.encode())
		changed = true
	}
	if changed {
		root.set("sandbox", sb.encode())
	}
	ce, err := mergeDenyEdits(root, spec.denyEdit)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return changed || ce, nil
}

// protectConfig adds to spec what the sandbox keeps the agent's commands
// from writing: claimcheck's binaries and configuration and the agent's
// user-level hook settings (absolute), and the project's hook settings
// (Edit rules relative to the session's directory).
func (a *app) protectConfig(spec *sandboxSpec) {
	pc := a.protectedConfig()
	for _, p := range append(append(pc.hooks, pc.files...), "/etc/claude-code") {
		if !slices.Contains(spec.denyWrite, p) {
			spec.denyWrite = append(spec.denyWrite, p)
		}
	}
	for _, f := range agentFiles {
		rule := "Edit(" + f + ")"
		if !strings.Contains(filepath.Base(f), ".") {
			rule = "Edit(" + f + "/**)" // a directory
		}
		spec.denyEdit = append(spec.denyEdit, rule)
	}
}

// mergeDenyEdits adds rules to the settings' permissions.deny, keeping the
// user's permissions.
func mergeDenyEdits(root *object, rules []string) (bool, error) {
	if len(rules) == 0 {
		return false, nil
	}
	perms := &object{}
	if raw, ok := root.get("permissions"); ok {
		if err := perms.parse(raw); err != nil {
			return false, fmt.Errorf("\"permissions\" is not an object: %w", err)
		}
	}
	c, err := mergeList(perms, "deny", rules)
	if err != nil {
		return false, fmt.Errorf("permissions.%w", err)
	}
	if c {
		root.set("permissions", perms.encode())
	}
	return c, nil
}

// mergeList adds the missing values of add to o's string list name.
func mergeList(o *object, name string, add []string) (bool, error) {
	var have []string
	if raw, ok := o.get(name); ok {
		if err := json.Unmarshal(raw, &have); err != nil {
			return false, fmt.Errorf("%s is not a list of strings: %w", name, err)
		}
	}
	changed := false
	for _, v := range add {
		if !slices.Contains(have, v) {
			have = append(have, v)
			changed = true
		}
	}
	if changed {
		o.set(name, mustJSON(have))
	}
	return changed, nil
}

// sandboxWarnings says what the user's own sandbox settings leave open.
func sandboxWarnings(root *object) []string {
	raw, ok := root.get("sandbox")
	if !ok {
		return nil
	}
	var sb struct {
		Network struct {
			AllowedDomains      []string `json:"allowedDomains"`
			AllowAllUnixSockets bool     `json:"allowAllUnixSockets"`
		} `json:"network"`
	}
	if json.Unmarshal(raw, &sb, json.RejectUnknownMembers(false)) != nil {
		return nil
	}
	var out []string
	for _, d := range sb.Network.AllowedDomains {
		if d == "localhost" || d == "127.0.0.1" || d == "::1" || d == "*" {
			out = append(out, fmt.Sprintf(
				"sandbox.network.allowedDomains lists %q: sandboxed commands can reach a NATS on this host (they still hold no credentials for it)", d))
		}
	}
	if sb.Network.AllowAllUnixSockets {
		out = append(out, "sandbox.network.allowAllUnixSockets is true: sandboxed commands can reach every local socket")
	}
	return out
}

// printUnsandboxed says what an agent's own processes can still do when
// its Bash commands are not sandboxed (the install without --sandbox).
func printUnsandboxed(w io.Writer, sandboxed bool) {
	if sandboxed {
		fmt.Fprintln(w,
			"sandbox: the agent's Bash commands cannot read claimcheck's credentials, keys or data, nor reach NATS; `claimcheck claim` runs outside the sandbox (it may only ask for verdicts).")
		return
	}
	fmt.Fprint(w, strings.TrimLeft(`
without --sandbox the agent's Bash commands run as you. If claimcheck up runs as
you too, they can read its data directory, whose NATS authority issues any
identity: run it as its own user (deploy/systemd). Either way they can read this
host's hook credentials and with them:
  - publish events of this host's sessions (a made-up PreToolUse and PostToolUse
    pair, a made-up prompt) and ask for claims and gate decisions;
  - not: write the ledger, attestations, keys or buckets, purge or delete any
    stream, publish as another host, read other hosts' replies, or override the
    gate (NATS refuses all of it; see docs/security.md).
The pre-tool gate denies the commands it can see reading the credentials or
running claimcheck-hook; a script that hides the path gets through. Add --sandbox
(Claude Code's sandbox), or run claimcheck as its own user (deploy/systemd).
`, "\n"))
}
