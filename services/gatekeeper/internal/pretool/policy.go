package pretool

import (
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/canon"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/shell"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

// Policy is a loaded, validated pretool.v1 policy.
type Policy struct {
	V           int     `json:"v"`
	Version     string  `json:"version"`
	Description string  `json:"description,omitempty"`
	Limits      Limits  `json:"limits"`
	Actions     Actions `json:"actions"`
	Tools       Tools   `json:"tools"`
	Paths       Paths   `json:"paths"`
	Shell       Shell   `json:"shell"`
	URLs        URLs    `json:"urls"`

	// Digest is "sha256:<hex>" of the policy's RFC 8785 form; every
	// decision records it with Version. Source names where the policy was
	// loaded from.
	Digest string `json:"-"`
	Source string `json:"-"`
	// Canonical is the policy document in RFC 8785 form.
	Canonical []byte `json:"-"`

	c *compiled
}

// Limits cap the sizes of what is analysed.
type Limits struct {
	MaxToolInputBytes int `json:"max_tool_input_bytes"`
	MaxCommandBytes   int `json:"max_command_bytes"`
	MaxURLBytes       int `json:"max_url_bytes"`
	// MaxShellDepth bounds how deeply nested shells are followed.
	MaxShellDepth int `json:"max_shell_depth"`
}

// Actions give the answer (Deny or Ask) for each family of findings.
type Actions struct {
	Destructive    string `json:"destructive"`
	DownloadExec   string `json:"download_exec"`
	DecodeExec     string `json:"decode_exec"`
	Dynamic        string `json:"dynamic"`
	Unparsable     string `json:"unparsable"`
	Claimcheck     string `json:"claimcheck"`
	ProtectedWrite string `json:"protected_write"`
	SensitiveRead  string `json:"sensitive_read"`
	SensitiveWrite string `json:"sensitive_write"`
	LostWork       string `json:"lost_work"`
}

// Tools is the tool access matrix.
type Tools struct {
	Main    ToolRule            `json:"main"`    // agent_type ""
	Default ToolRule            `json:"default"` // agent types without an entry
	Agents  map[string]ToolRule `json:"agents,omitempty"`
}

// ToolRule lists tool names or globs (path.Match syntax, e.g. mcp__github__*).
// Deny wins over Ask, Ask over Allow; a tool in none gets Otherwise.
type ToolRule struct {
	Description string   `json:"description,omitempty"`
	Allow       []string `json:"allow"`
	Ask         []string `json:"ask,omitempty"`
	Deny        []string `json:"deny,omitempty"`
	Otherwise   string   `json:"otherwise"`
}

// Paths are path patterns (see the schema for their syntax).
type Paths struct {
	Protected []string `json:"protected"`
	// Configuration configures the agent's hooks or claimcheck itself:
	// like Protected, and inline interpreter code may not name it.
	Configuration       []string `json:"configuration,omitempty"`
	Private             []string `json:"private"`
	Sensitive           []string `json:"sensitive"`
	SensitiveExceptions []string `json:"sensitive_exceptions"`
	SystemRoots         []string `json:"system_roots"`
}

// Shell holds the shell rules that are lists of programs.
type Shell struct {
	HookPrograms   []string   `json:"hook_programs"`
	DeniedCommands [][]string `json:"denied_commands"`
}

// URLs constrains WebFetch.
type URLs struct {
	Schemes       []string `json:"schemes"`
	DeniedDomains []string `json:"denied_domains"`
}

// ErrInvalid is wrapped by every load failure: the policy file must be
// fixed; loading it again cannot help.
var ErrInvalid = errors.New("invalid pretool policy")

// compiled is the policy in the form Decide uses.
type compiled struct {
	protected, config, private, sensitive, exceptions, roots []pattern
	hook                                                     map[string]bool
	schemes                                                  map[string]bool
}

// Load parses and validates a pretool.v1 document. source names it in
// errors, which also name the field and the reason.
func Load(source string, raw []byte, v *validation.Validator) (*Policy, error) {
	if err := v.Validate(schemas.PretoolV1, raw); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, source, err)
	}
	var p Policy
	if err := json.Unmarshal(raw, &p, json.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, source, err)
	}
	c, err := p.compile()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, source, err)
	}
	canonical, err := canon.Canonicalize(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, source, err)
	}
	p.c, p.Canonical, p.Digest, p.Source = c, canonical, digest.SHA256(canonical), source
	return &p, nil
}

// LoadFile loads a policy from a file.
func LoadFile(path string, v *validation.Validator) (*Policy, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pretool policy file: %w", err)
	}
	return Load(path, raw, v)
}

// Default loads the built-in policy (schemas.DefaultPretoolPolicy).
func Default(v *validation.Validator) (*Policy, error) {
	raw, err := schemas.Policies.ReadFile(schemas.DefaultPretoolPolicy)
	if err != nil {
		return nil, fmt.Errorf("built-in pretool policy: %w", err)
	}
	return Load("built-in "+schemas.DefaultPretoolPolicy, raw, v)
}

// compile checks what the schema cannot (glob syntax) and prepares the
// patterns. Errors name the field.
func (p *Policy) compile() (*compiled, error) {
	var errs []error
	c := &compiled{hook: map[string]bool{}, schemes: map[string]bool{}}
	list := func(field string, in []string) []pattern {
		out := make([]pattern, 0, len(in))
		for i, s := range in {
			pat, err := compilePattern(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("paths.%s[%d]: %q: %w", field, i, s, err))
				continue
			}
			out = append(out, pat)
		}
		return out
	}
	c.protected = list("protected", p.Paths.Protected)
	c.config = list("configuration", p.Paths.Configuration)
	c.private = list("private", p.Paths.Private)
	c.sensitive = list("sensitive", p.Paths.Sensitive)
	c.exceptions = list("sensitive_exceptions", p.Paths.SensitiveExceptions)
	c.roots = list("system_roots", p.Paths.SystemRoots)
	rules := map[string]ToolRule{"main": p.Tools.Main, "default": p.Tools.Default}
	for name, r := range p.Tools.Agents {
		rules["agents."+name] = r
	}
	names := make([]string, 0, len(rules))
	for n := range rules {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := rules[n]
		for _, l := range []struct {
			kind string
			pats []string
		}{{"allow", r.Allow}, {"ask", r.Ask}, {"deny", r.Deny}} {
			for i, s := range l.pats {
				if _, err := path.Match(s, ""); err != nil {
					errs = append(errs, fmt.Errorf("tools.%s.%s[%d]: %q: %w", n, l.kind, i, s, err))
				}
			}
		}
	}
	for _, h := range p.Shell.HookPrograms {
		c.hook[h] = true
	}
	for _, s := range p.URLs.Schemes {
		c.schemes[s] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// action maps an action family to its configured decision; anything but
// Ask denies.
func action(a string) string {
	if a == Ask {
		return Ask
	}
	return Deny
}

// context is what one decision needs besides the policy: the run-time
// paths, compiled against the caller's home and cwd.
type context struct {
	home      string // absolute home, or homeMarkerPath when unknown
	homeSet   bool
	cwd       string // absolute cwd, or "" when unknown
	private   []pattern
	config    []pattern // the policy's configuration paths and Runtime.ConfigPaths
	hookPaths []string  // resolved HookBinaries
}

func (p *Policy) newContext(rt Runtime, cwd string) *context {
	ctx := &context{home: shell.SymbolicHome}
	if h := strings.TrimSpace(rt.Home); strings.HasPrefix(h, "/") {
		ctx.home, ctx.homeSet = path.Clean(h), true
	}
	if strings.HasPrefix(cwd, "/") {
		ctx.cwd = path.Clean(cwd)
	}
	ctx.private = append(ctx.private, p.c.private...)
	for _, s := range rt.ProtectedPaths {
		if pat, err := compilePattern(s); err == nil {
			pat.runtime = true
			ctx.private = append(ctx.private, pat)
		}
	}
	ctx.config = append(ctx.config, p.c.config...)
	for _, s := range rt.ConfigPaths {
		if pat, err := compilePattern(s); err == nil {
			pat.runtime = true
			ctx.config = append(ctx.config, pat)
		}
	}
	for _, h := range rt.HookBinaries {
		if h != "" {
			ctx.hookPaths = append(ctx.hookPaths, ctx.resolve(h, "").Key())
		}
	}
	return ctx
}

// isHook reports whether f is one of the hook's executables or, when
// above, a directory holding one.
func (c *context) isHook(f shell.Path, above bool) bool {
	k := f.Key()
	for _, h := range c.hookPaths {
		if k == h || above && strings.HasPrefix(h, k+"/") {
			return true
		}
	}
	return false
}
