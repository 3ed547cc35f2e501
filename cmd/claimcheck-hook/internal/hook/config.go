package hook

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/dialect"
	"github.com/claimcheck/claimcheck/pkg/hookconfig"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/oneshot"
	"github.com/claimcheck/claimcheck/pkg/payload"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// Config is the hook's configuration. It is read from flags and CLAIMCHECK_*
// environment variables only: the hook runs on every agent event, and a
// configuration library or file parsing would cost more start-up time than
// the whole publish (see docs/performance.md, "Hook start-up").
type Config struct {
	NATSURL       string        // --nats-url, CLAIMCHECK_NATS_URL
	NATSCreds     string        // --nats-creds (or --creds), CLAIMCHECK_NATS_CREDS: .creds or nkey seed file
	StateDir      string        // --state-dir, CLAIMCHECK_HOOK_STATE_DIR
	MaxInputBytes int           // --max-input-bytes, CLAIMCHECK_HOOK_MAX_INPUT_BYTES
	Deadline      time.Duration // --deadline, CLAIMCHECK_HOOK_DEADLINE
	RetryAfter    time.Duration // --retry-after, CLAIMCHECK_HOOK_RETRY_AFTER
	// Agent is the hook dialect of the agent CLI that runs the hook
	// (--agent, CLAIMCHECK_HOOK_AGENT: claude, codex, gemini, cursor or
	// copilot); "" detects it from each payload (dialect.Detect).
	Agent dialect.Agent
	// AgentType is recorded with every event (--agent-type,
	// CLAIMCHECK_HOOK_AGENT_TYPE); "" means the dialect's
	// (dialect.Agent.AgentType: claude-code, codex, gemini-cli, cursor,
	// copilot).
	AgentType string
	// Event is the agent's event this hook runs for (--event), for agents
	// whose payloads do not name it: Copilot's (claimcheck hooks install
	// --agent copilot writes it into each command).
	Event   string
	AgentID string // --agent-id, CLAIMCHECK_HOOK_AGENT_ID
	Host    string // --host, CLAIMCHECK_HOOK_HOST
	// Gate asks the gatekeeper for Stop and PreToolUse decisions (--gate, CLAIMCHECK_HOOK_GATE).
	Gate bool
	// GateDeadline bounds the whole gate answer from the hook's start
	// (--gate-deadline, CLAIMCHECK_HOOK_GATE_DEADLINE); on expiry the hook
	// fails closed.
	GateDeadline time.Duration
	// GateKeys is the key set the hook trusts for signed decisions
	// (--gate-keys, CLAIMCHECK_HOOK_GATE_KEYS; default <state dir>/gate-keys/<server>.json,
	// one file per server: decision.KeySetPath).
	GateKeys string
	// FailOpen lists the gated events that are allowed, not blocked, when no
	// valid decision arrives (--fail-open, CLAIMCHECK_HOOK_FAIL_OPEN: "Stop,PreToolUse");
	// PostToolUse there answers an uninspected tool result by silence
	// rather than with a warning.
	FailOpen map[string]bool
	// StopBlockCap: after this many consecutive blocked stops the hook lets
	// a stop it must fail closed on through, marked NOT verified, as the
	// gatekeeper does at gatekeeper.stop_block_cap (--stop-block-cap,
	// CLAIMCHECK_HOOK_STOP_BLOCK_CAP; 8; 0 never).
	StopBlockCap int
	// ManagedSettingsDir is where Claude Code's managed settings are
	// (--managed-settings-dir, CLAIMCHECK_HOOK_MANAGED_SETTINGS_DIR; default
	// /etc/claude-code on Linux). SessionStart records the hook configuration
	// of every layer; Home and ProjectDir ($HOME, $CLAUDE_PROJECT_DIR) name
	// the user's and the project's.
	ManagedSettingsDir string
	Home               string
	ProjectDir         string

	// Derived: the credentials read once, the host's subject token, and
	// the inbox replies come to (subject.Inbox of the hook identity).
	creds   *oneshot.Credentials
	hostTok string
	inbox   string
	bearer  bool // a claimcheck hook identity is a bearer token
}

// GatedEvents are the events the hook asks the gatekeeper about.
var GatedEvents = map[string]bool{schemas.HookStop: true, schemas.HookPreToolUse: true}

// DefaultNATSURL is where `claimcheck up` listens by default.
const DefaultNATSURL = "nats://127.0.0.1:4222"

// MaxInputLimit is the largest accepted --max-input-bytes: the envelope must
// still fit in NATS's default 1 MiB max_payload.
const MaxInputLimit = 1<<20 - 8<<10

func defaults(getenv func(string) string) Config {
	c := Config{
		NATSURL:       DefaultNATSURL,
		MaxInputBytes: payload.DefaultMaxBytes,
		Deadline:      2 * time.Second,
		RetryAfter:    time.Second,
		Gate:          true,
		GateDeadline:  4 * time.Second,
		FailOpen:      map[string]bool{},
		StopBlockCap:  8,

		ManagedSettingsDir: hookconfig.DefaultManagedDir(),
		Home:               getenv("HOME"),
		ProjectDir:         getenv("CLAUDE_PROJECT_DIR"),
	}
	home := getenv("HOME")
	if x := getenv("XDG_STATE_HOME"); x != "" {
		c.StateDir = filepath.Join(x, "claimcheck", "hook")
	} else if home != "" {
		c.StateDir = filepath.Join(home, ".local", "state", "claimcheck", "hook")
	}
	return c
}

// ParseConfig reads env then flags (flags win). It returns the remaining
// arguments (a subcommand).
func ParseConfig(args []string, getenv func(string) string, stderr io.Writer) (Config, []string, error) {
	c := defaults(getenv)
	var errs []error
	env := func(key string, set func(string) error) {
		if v := getenv("CLAIMCHECK_" + key); v != "" {
			if err := set(v); err != nil {
				errs = append(errs, fmt.Errorf("CLAIMCHECK_%s=%q: %w", key, v, err))
			}
		}
	}
	str := func(p *string) func(string) error { return func(v string) error { *p = v; return nil } }
	dur := func(p *time.Duration) func(string) error {
		return func(v string) error { d, err := time.ParseDuration(v); *p = d; return err }
	}
	env("NATS_URL", str(&c.NATSURL))
	env("NATS_CREDS", str(&c.NATSCreds))
	env("HOOK_STATE_DIR", str(&c.StateDir))
	env("HOOK_MAX_INPUT_BYTES", func(v string) error { n, err := strconv.Atoi(v); c.MaxInputBytes = n; return err })
	env("HOOK_DEADLINE", dur(&c.Deadline))
	env("HOOK_RETRY_AFTER", dur(&c.RetryAfter))
	env("HOOK_AGENT_TYPE", str(&c.AgentType))
	env("HOOK_AGENT", func(v string) error { a, err := dialect.Parse(v); c.Agent = a; return err })
	env("HOOK_AGENT_ID", str(&c.AgentID))
	env("HOOK_HOST", str(&c.Host))
	env("HOOK_GATE", func(v string) error { b, err := strconv.ParseBool(v); c.Gate = b; return err })
	env("HOOK_GATE_DEADLINE", dur(&c.GateDeadline))
	env("HOOK_GATE_KEYS", str(&c.GateKeys))
	env("HOOK_FAIL_OPEN", func(v string) error { return c.setFailOpen(v) })
	env("HOOK_STOP_BLOCK_CAP", func(v string) error { n, err := strconv.Atoi(v); c.StopBlockCap = n; return err })
	env("HOOK_MANAGED_SETTINGS_DIR", str(&c.ManagedSettingsDir))

	fs := flag.NewFlagSet("claimcheck-hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.NATSURL, "nats-url", c.NATSURL, "NATS server URL(s), comma-separated (env CLAIMCHECK_NATS_URL)")
	fs.StringVar(&c.NATSCreds, "nats-creds", c.NATSCreds,
		"NATS credentials: this host's hook identity (claimcheck creds issue --role hook) or another .creds / nkey seed file (env CLAIMCHECK_NATS_CREDS)")
	fs.StringVar(&c.NATSCreds, "creds", c.NATSCreds, "the same as --nats-creds")
	fs.StringVar(&c.StateDir, "state-dir", c.StateDir,
		"private directory for the spool and per-session sequences (env CLAIMCHECK_HOOK_STATE_DIR)")
	fs.IntVar(&c.MaxInputBytes, "max-input-bytes", c.MaxInputBytes, "largest hook payload accepted (env CLAIMCHECK_HOOK_MAX_INPUT_BYTES)")
	fs.DurationVar(&c.Deadline, "deadline", c.Deadline,
		"time allowed to deliver (connect, publish, acknowledgement) before spooling (env CLAIMCHECK_HOOK_DEADLINE)")
	fs.DurationVar(&c.RetryAfter, "retry-after", c.RetryAfter,
		"after a failed delivery, spool without trying NATS for this long (env CLAIMCHECK_HOOK_RETRY_AFTER)")
	fs.StringVar(&c.AgentType, "agent-type", c.AgentType,
		"agent CLI type recorded with every event (default: the --agent dialect's: claude-code, codex, gemini-cli, cursor, copilot) (env CLAIMCHECK_HOOK_AGENT_TYPE)")
	fs.Func("agent",
		"hook dialect of the agent CLI: claude, codex, gemini, cursor or copilot (default: detected from each payload) (env CLAIMCHECK_HOOK_AGENT)",
		func(v string) error { a, err := dialect.Parse(v); c.Agent = a; return err })
	fs.StringVar(&c.Event, "event", c.Event,
		"the agent's event this hook runs for, for agents whose payloads do not name it (Copilot: agentStop, preToolUse, …)")
	fs.StringVar(&c.AgentID, "agent-id", c.AgentID,
		"identity of this agent installation (default $USER@host) (env CLAIMCHECK_HOOK_AGENT_ID)")
	fs.StringVar(&c.Host, "host", c.Host, "host name recorded with every event (default: the system host name) (env CLAIMCHECK_HOOK_HOST)")
	fs.BoolVar(&c.Gate, "gate", c.Gate, "ask the gatekeeper for Stop and PreToolUse decisions, failing closed (env CLAIMCHECK_HOOK_GATE)")
	fs.DurationVar(&c.GateDeadline, "gate-deadline", c.GateDeadline,
		"time from start to a verified gate decision; then block/deny (env CLAIMCHECK_HOOK_GATE_DEADLINE)")
	fs.StringVar(&c.GateKeys, "gate-keys", c.GateKeys,
		"key set trusted for signed gate decisions (default <state-dir>/gate-keys/<server>.json, one per --nats-url) (env CLAIMCHECK_HOOK_GATE_KEYS)")
	fs.Func("fail-open",
		"comma-separated gated events (Stop, PreToolUse, PostToolUse) to allow rather than block when no valid decision arrives (env CLAIMCHECK_HOOK_FAIL_OPEN)", c.setFailOpen)
	fs.IntVar(&c.StopBlockCap, "stop-block-cap", c.StopBlockCap,
		"consecutive blocked stops after which a stop the gate cannot decide is let through, NOT verified; 0 never (env CLAIMCHECK_HOOK_STOP_BLOCK_CAP)")
	fs.StringVar(&c.ManagedSettingsDir, "managed-settings-dir", c.ManagedSettingsDir,
		"where Claude Code's managed settings are, read at SessionStart with the user's and the project's (env CLAIMCHECK_HOOK_MANAGED_SETTINGS_DIR)")
	version := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr,
			"usage: claimcheck-hook [flags]          read one agent hook payload on stdin and record it\n       claimcheck-hook [flags] flush    deliver spooled events now\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, nil, err
	}
	if *version {
		return c, []string{"version"}, nil
	}
	errs = append(errs, c.identity())
	if c.Host == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			h = "unknown-host"
		}
		c.Host = h
	}
	if c.hostTok == "" {
		tok, err := id.HostToken(c.Host)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: pass --host with a name of letters, digits, '-' and '.'", err))
		}
		c.hostTok = tok
		c.inbox = subject.Inbox(subject.OriginHook, tok)
	}
	if c.GateKeys == "" && c.StateDir != "" {
		c.GateKeys = decision.KeySetPath(c.StateDir, c.NATSURL)
	}
	if c.AgentID == "" {
		u := getenv("USER")
		if u == "" {
			u = "unknown"
		}
		c.AgentID = u + "@" + c.Host
	}
	errs = append(errs, c.validate())
	return c, fs.Args(), errors.Join(errs...)
}

// identity reads the credentials, if any. A hook identity (claimcheck
// creds issue --role hook) names the host: its events are that host's, and
// NATS lets them through only on that host's subjects. Credentials without
// a claimcheck role (for a NATS the operator set up) leave the host to
// --host. A claimcheck identity of another role is refused.
func (c *Config) identity() error {
	if c.NATSCreds == "" {
		return nil
	}
	creds, err := oneshot.ReadCredentials(c.NATSCreds)
	if err != nil {
		return err
	}
	c.creds = creds
	switch role := creds.Tag("role"); role {
	case "":
		return nil
	case subject.OriginHook:
	default:
		return fmt.Errorf(
			"%s holds credentials of role %s; the hook needs this host's hook identity (claimcheck creds issue --role hook --host <host>)", c.NATSCreds, role)
	}
	tok := creds.Tag("name")
	host, _ := strings.CutPrefix(creds.Name, subject.OriginHook+":")
	if t, err := id.HostToken(host); err != nil || t != tok {
		host = tok
	}
	if err := id.CheckName(tok); err != nil {
		return fmt.Errorf("%s: the identity's name: %w", c.NATSCreds, err)
	}
	if c.Host != "" && c.Host != host {
		if t, err := id.HostToken(c.Host); err != nil || t != tok {
			return fmt.Errorf("--host %s differs from the host %s that %s was issued for", c.Host, host, c.NATSCreds)
		}
	}
	c.Host, c.hostTok, c.inbox, c.bearer = host, tok, subject.Inbox(subject.OriginHook, tok), true
	return nil
}

func (c Config) validate() error {
	var errs []error
	if strings.TrimSpace(c.NATSURL) == "" {
		errs = append(errs, errors.New("nats url: empty"))
	}
	if c.StateDir == "" {
		errs = append(errs, errors.New("state dir: empty and $HOME is not set (use --state-dir)"))
	} else if !filepath.IsAbs(c.StateDir) {
		errs = append(errs, fmt.Errorf("state dir %q: must be an absolute path", c.StateDir))
	}
	if c.MaxInputBytes < 1024 || c.MaxInputBytes > MaxInputLimit {
		errs = append(errs, fmt.Errorf("max input bytes %d: must be between 1024 and %d", c.MaxInputBytes, MaxInputLimit))
	}
	if c.Deadline < 10*time.Millisecond || c.Deadline > 5*time.Minute {
		errs = append(errs, fmt.Errorf("deadline %s: must be between 10ms and 5m", c.Deadline))
	}
	if c.GateDeadline < 10*time.Millisecond || c.GateDeadline > 10*time.Minute {
		errs = append(errs, fmt.Errorf("gate deadline %s: must be between 10ms and 10m", c.GateDeadline))
	}
	if c.RetryAfter < 0 {
		errs = append(errs, fmt.Errorf("retry-after %s: must not be negative", c.RetryAfter))
	}
	if c.StopBlockCap < 0 || c.StopBlockCap > 1000 {
		errs = append(errs, fmt.Errorf("stop block cap %d: must be between 0 (never) and 1000", c.StopBlockCap))
	}
	if c.AgentType != "" && !validAgentType(c.AgentType) {
		errs = append(errs, fmt.Errorf("agent type %q: must be 1..64 of a-z 0-9 . _ - starting with a letter or digit", c.AgentType))
	}
	for name, v := range map[string]string{"agent id": c.AgentID, "host": c.Host} {
		if v == "" || len(v) > 255 || strings.ContainsAny(v, "\x00\r\n") {
			errs = append(errs, fmt.Errorf("%s %q: must be 1..255 bytes without control characters", name, v))
		}
	}
	return errors.Join(errs...)
}

func validAgentType(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		alnum := ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9'
		if !alnum && (i == 0 || ch != '.' && ch != '_' && ch != '-') {
			return false
		}
	}
	return true
}

func (c *Config) setFailOpen(v string) error {
	c.FailOpen = map[string]bool{}
	for _, e := range strings.Split(v, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !GatedEvents[e] && e != schemas.HookPostToolUse {
			return fmt.Errorf("fail-open event %q: must be one of Stop, PreToolUse, PostToolUse", e)
		}
		c.FailOpen[e] = true
	}
	return nil
}
