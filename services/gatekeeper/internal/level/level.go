// Package level holds the rules of the degradation levels (seed 002,
// FR-SEC-035): which events raise a session's or a host's level, and what
// each level still lets a tool call do. It is pure: the gatekeeper keeps
// the levels in a JetStream KV bucket and applies these rules to them.
package level

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/anomaly"
)

// Config holds the escalation thresholds (gatekeeper.levels.* in files). A
// level of NORMAL turns a rule off.
type Config struct {
	// Denials: this many tool calls of one agent of a session (the main
	// thread or one sub-agent) denied by the pre-tool policy raise the
	// session to DenialsLevel (the seed: "3x same agent: CONTAIN agent").
	Denials      int    `mapstructure:"denials"`
	DenialsLevel string `mapstructure:"denials_level"`
	// InjectionMedium and InjectionHigh: a tool result flagged at medium
	// (the seed's 0.70 ≤ confidence < 0.90, FLAG + WARN) or at high
	// confidence (≥ 0.90, block the result and ask the human) raises its
	// session to this level.
	InjectionMedium string `mapstructure:"injection_medium"`
	InjectionHigh   string `mapstructure:"injection_high"`
	// Injections: this many flagged results in one session raise it to
	// InjectionsLevel, whatever their confidence (repeated events).
	Injections      int    `mapstructure:"injections"`
	InjectionsLevel string `mapstructure:"injections_level"`
	// Crashes: a burst of claimcheck-hook failures on a host (the crash
	// watchdog's alert, gatekeeper.crash_threshold within crash_window)
	// raises the host to this level. Off (NORMAL) by default: the
	// watchdog counts every failure, a gatekeeper outage's too, and an
	// outage is not a reason to restrict a host's agents until an
	// operator lifts it.
	Crashes string `mapstructure:"crashes"`
	// Contained: this many sessions of one host raised to CONTAIN by a
	// rule within ContainedWindow raise the host to ContainedLevel (the
	// seed's HALT on "multiple CRITICAL events"). Off (NORMAL) by
	// default: an agent that keeps trying what the policy denies is
	// contained in its own session, and a host running several such
	// sessions need not mean a compromise of the host; HALT stops every
	// session of the host until an operator lifts it.
	Contained       int           `mapstructure:"contained"`
	ContainedWindow time.Duration `mapstructure:"contained_window"`
	ContainedLevel  string        `mapstructure:"contained_level"`
	// Anomaly: a session whose activity stays far above its agent type's
	// baseline raises its level one step (up to CONTAIN) per anomaly.
	Anomaly anomaly.Config `mapstructure:"anomaly"`
}

// DefaultConfig returns the seed's escalation table.
func DefaultConfig() Config {
	return Config{Denials: 3, DenialsLevel: schemas.LevelContain,
		InjectionMedium: schemas.LevelRestrict, InjectionHigh: schemas.LevelCheckpoint,
		Injections: 3, InjectionsLevel: schemas.LevelContain,
		Crashes: schemas.LevelNormal, Contained: 3, ContainedWindow: time.Hour, ContainedLevel: schemas.LevelNormal,
		Anomaly: anomaly.DefaultConfig()}
}

// Validate reports every problem.
func (c Config) Validate() error {
	var errs []error
	for key, v := range map[string]string{"denials_level": c.DenialsLevel, "injection_medium": c.InjectionMedium,
		"injection_high": c.InjectionHigh, "injections_level": c.InjectionsLevel, "crashes": c.Crashes,
		"contained_level": c.ContainedLevel} {
		if schemas.LevelRank(v) < 0 {
			errs = append(errs, fmt.Errorf("gatekeeper.levels.%s %q: must be one of %s", key, v, strings.Join(schemas.Levels, ", ")))
		}
	}
	if err := c.Anomaly.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Denials < 1 || c.Injections < 1 || c.Contained < 1 {
		errs = append(errs, fmt.Errorf("gatekeeper.levels.denials %d, gatekeeper.levels.injections %d, "+
			"gatekeeper.levels.contained %d: must be positive", c.Denials, c.Injections, c.Contained))
	}
	if c.ContainedWindow <= 0 {
		errs = append(errs, fmt.Errorf("gatekeeper.levels.contained_window %s: must be positive", c.ContainedWindow))
	}
	return errors.Join(errs...)
}

// Event kinds that escalation counts.
const (
	Denial    = "denial"    // the pre-tool policy denied a tool call
	Injection = "injection" // a tool result was flagged
	Crashes   = "crashes"   // the host's hook failures crossed the crash threshold
	Anomaly   = "anomaly"   // the session's activity stayed above its baseline (Key names the anomaly)
	Contained = "contained" // a rule raised a session of the host to CONTAIN (Key names the session)
)

// An Event is one security event of a session (or host, for Crashes).
type Event struct {
	Kind string
	// High: an injection finding at high confidence.
	High bool
	// Detail names the event for the level's cause ("Bash `rm -rf /`
	// denied by files.protected").
	Detail string
	// Agent is the sub-agent that made the denied call (the payload's
	// agent_id; "" for the main thread).
	Agent string
	At    time.Time
	By    string // the gatekeeper
	// Key identifies an anomaly, or the event of a flagged result: each
	// counts once, however many gatekeepers or retries report it.
	Key string
}

// maxInjectionEvents bounds the flagged results' events a session's state
// remembers.
const maxInjectionEvents = 16

// Escalate counts ev into st and raises st's level when a rule says so; it
// never lowers a level. It reports whether the level changed.
func (c Config) Escalate(st *schemas.LevelState, ev Event) bool {
	if st.Level == "" {
		st.Level = schemas.LevelNormal
	}
	to, rule, cause := schemas.LevelNormal, "", ""
	raise := func(level, r, why string) {
		if schemas.LevelRank(level) > schemas.LevelRank(to) {
			to, rule, cause = level, r, why
		}
	}
	switch ev.Kind {
	case Denial:
		st.Denials++
		if st.DenialsBy == nil {
			st.DenialsBy = map[string]int{}
		}
		st.DenialsBy[ev.Agent]++
		if n := st.DenialsBy[ev.Agent]; n >= c.Denials {
			who := "the session's main agent"
			if ev.Agent != "" {
				who = "sub-agent " + ev.Agent
			}
			raise(c.DenialsLevel, schemas.RuleLevelDenials,
				fmt.Sprintf("%d tool calls of %s were denied (threshold %d; the last: %s)", n, who, c.Denials, ev.Detail))
		}
	case Injection:
		if ev.Key != "" {
			if slices.Contains(st.InjectionEvents, ev.Key) {
				return false // this result was counted already
			}
			st.InjectionEvents = append(st.InjectionEvents, ev.Key)
			if n := len(st.InjectionEvents) - maxInjectionEvents; n > 0 {
				st.InjectionEvents = st.InjectionEvents[n:]
			}
		}
		st.Injections++
		if ev.High {
			raise(c.InjectionHigh, schemas.RuleLevelInjection,
				"a tool result was flagged as a prompt injection at high confidence ("+ev.Detail+")")
		} else {
			raise(c.InjectionMedium, schemas.RuleLevelInjection, "a tool result was flagged as a likely prompt injection ("+ev.Detail+")")
		}
		if st.Injections >= c.Injections {
			raise(c.InjectionsLevel, schemas.RuleLevelInjection,
				fmt.Sprintf("%d tool results of this session were flagged as prompt injections (threshold %d; the last: %s)",
					st.Injections, c.Injections, ev.Detail))
		}
	case Crashes:
		raise(c.Crashes, schemas.RuleLevelCrashes, "claimcheck-hook failed repeatedly on this host ("+ev.Detail+")")
	case Contained:
		// the host's sessions contained within the window, each once
		kept := st.Contained[:0]
		for _, x := range st.Contained {
			if at, err := time.Parse(time.RFC3339Nano, x.At); err == nil && ev.At.Sub(at) < c.ContainedWindow {
				kept = append(kept, x)
			}
		}
		st.Contained = kept
		if slices.ContainsFunc(st.Contained, func(x schemas.ContainedSession) bool { return x.Session == ev.Key }) {
			return false
		}
		st.Contained = append(st.Contained, schemas.ContainedSession{Session: ev.Key, At: ev.At.UTC().Format(time.RFC3339Nano)})
		if n := len(st.Contained); n >= c.Contained {
			raise(c.ContainedLevel, schemas.RuleLevelContained,
				fmt.Sprintf("%d sessions of this host were contained within %s (threshold %d; the last: session %s, %s)",
					n, c.ContainedWindow, c.Contained, ev.Key, ev.Detail))
		}
	case Anomaly:
		if ev.Key <= st.LastAnomaly {
			return false // already counted (by this or another gatekeeper)
		}
		st.LastAnomaly = ev.Key
		if r := schemas.LevelRank(st.Level) + 1; r <= schemas.LevelRank(schemas.LevelContain) {
			raise(schemas.Levels[r], schemas.RuleLevelAnomaly, "sustained anomalous activity: "+ev.Detail)
		}
	}
	if schemas.LevelRank(to) <= schemas.LevelRank(st.Level) {
		return false
	}
	st.Level, st.Rule, st.Cause, st.Operator = to, rule, cause, ""
	st.ChangedAt, st.ChangedBy = ev.At.UTC().Format(time.RFC3339Nano), ev.By
	return true
}

// Set is an operator's change: any level, up or down. Lowering a level
// starts the escalation counters again (otherwise the next denial would
// raise it straight back). It reports whether the level changed.
func Set(st *schemas.LevelState, to, reason, operator, by string, at time.Time) bool {
	if st.Level == "" {
		st.Level = schemas.LevelNormal
	}
	changed := st.Level != to
	if schemas.LevelRank(to) < schemas.LevelRank(st.Level) {
		st.Denials, st.Injections, st.DenialsBy, st.Contained = 0, 0, nil, nil
	}
	st.Level, st.Rule, st.Cause, st.Operator = to, schemas.RuleLevelOperator, reason, operator
	st.ChangedAt, st.ChangedBy = at.UTC().Format(time.RFC3339Nano), by
	return changed
}

// ReadOnly reports whether tool only reads (the seed's T1 tools): file
// reads and searches, the web's read tools, and the agent's own to-do
// list. Shell commands, MCP tools (their effects are unknown), edits and
// writes are not.
func ReadOnly(tool string) bool {
	switch tool {
	case "Read", "NotebookRead", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite",
		"read_file", "read_many_files", "glob", "search_file_content", "list_directory", "web_fetch", "google_web_search":
		return true
	}
	return false
}

// Enforce says what level does to a tool call the policy allowed or asked
// about: "" lets the policy's answer stand, schemas.GateAsk asks the human,
// schemas.GateDeny denies.
func Enforce(level, tool string) string {
	switch level {
	case schemas.LevelRestrict:
		if !ReadOnly(tool) {
			return schemas.GateDeny
		}
	case schemas.LevelCheckpoint:
		if !ReadOnly(tool) {
			return schemas.GateAsk
		}
	case schemas.LevelContain, schemas.LevelHalt:
		return schemas.GateDeny
	}
	return ""
}

// What says in words what a level lets the agent do.
func What(level string) string {
	switch level {
	case schemas.LevelRestrict:
		return "only read-only tools (Read, Glob, Grep, WebFetch, WebSearch) are allowed; writes and commands are denied"
	case schemas.LevelCheckpoint:
		return "every write or command asks the human first"
	case schemas.LevelContain:
		return "every tool call is denied; stop working, end your turn and tell the user why"
	case schemas.LevelHalt:
		return "every tool call on this host is denied until an operator lifts the halt; stop working and tell the user"
	}
	return "the policy alone decides"
}
