// Package watch is the gatekeeper's override audit and hook crash watchdog:
// it counts prompts that ask to bypass the gate (per host, over 24 hours)
// and claimcheck-hook failures (per host and hook event, over an hour), and
// says when an alert is due. An alert of a kind is raised at most once per
// host (and hook event) per UTC day. It also watches sessions for findings
// (sessions.go): a SessionStart whose hook configuration drifted, and a
// session whose events stopped while its host went on (ungated); each at
// most once per session. It holds no I/O: the projection feeds it what the
// ledger holds, the prompt handler and the findings loop ask it what is due.
package watch

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Alert kinds.
const (
	KindOverride = "override_pattern" // prompts asking to bypass the gate
	KindCrash    = "hook_crashes"     // claimcheck-hook failures
)

// Config holds the thresholds.
type Config struct {
	OverrideThreshold int           // prompts (default 3)
	OverrideWindow    time.Duration // default 24h
	CrashThreshold    int           // failures of one hook event (default 3)
	CrashWindow       time.Duration // default 1h
	// UngatedAfter is how long a session's events must have stopped, with
	// a later session of its host started, before it is found ungated
	// (default 30m).
	UngatedAfter time.Duration
}

// DefaultConfig returns the seed's thresholds: 3 override prompts in 24
// hours, 3 failures of one hook event in an hour.
func DefaultConfig() Config {
	return Config{OverrideThreshold: 3, OverrideWindow: 24 * time.Hour, CrashThreshold: 3, CrashWindow: time.Hour,
		UngatedAfter: 30 * time.Minute}
}

// Alert is one alert, due or raised.
type Alert struct {
	Kind  string
	Host  string
	Event string // the failing hook event (KindCrash)
	Day   string // UTC date, YYYY-MM-DD
	Count int    // events in the window when it was raised
}

// Key identifies the alert for its once-per-day rule (also the dedupe id
// of its record).
func (a Alert) Key() string {
	return "alert-" + a.Kind + "-" + a.Host + "-" + a.Event + "-" + a.Day
}

// Message is the text shown to the user and the agent.
func (a Alert) Message(cfg Config) string {
	switch a.Kind {
	case KindOverride:
		return fmt.Sprintf("claimcheck alert: %d prompts from host %q asked to bypass the evidence gate within %s (threshold %d). "+
			"The gate was not bypassed; every such prompt is in the ledger. Use `claimcheck gate override --session S --reason R` for a recorded break-glass.",
			a.Count, a.Host, window(cfg.OverrideWindow), cfg.OverrideThreshold)
	case KindCrash:
		return fmt.Sprintf("claimcheck alert: claimcheck-hook failed %d times for %s on host %q within %s (threshold %d); "+
			"while it fails, stops are blocked and tool calls denied (fail closed). See `claimcheck ledger show` for the HookCrash events.",
			a.Count, a.Event, a.Host, window(cfg.CrashWindow), cfg.CrashThreshold)
	}
	return "claimcheck alert: " + a.Kind
}

func window(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// Watch is safe for concurrent use.
type Watch struct {
	cfg       Config
	mu        sync.Mutex
	overrides map[string]map[string]time.Time // host → event id → time
	crashes   map[[2]string]map[string]time.Time
	raised    map[string]bool
	// Sessions watched for findings (sessions.go).
	sessions map[string]*watched
	starts   map[string]start // host → its latest SessionStart
	drifted  []Finding        // drift findings not yet raised
	found    map[string]bool  // finding keys raised or in the ledger
}

// New returns an empty watch.
func New(cfg Config) *Watch {
	if cfg.OverrideThreshold <= 0 || cfg.OverrideWindow <= 0 || cfg.CrashThreshold <= 0 || cfg.CrashWindow <= 0 {
		cfg = DefaultConfig()
	}
	if cfg.UngatedAfter <= 0 {
		cfg.UngatedAfter = DefaultConfig().UngatedAfter
	}
	return &Watch{cfg: cfg, overrides: map[string]map[string]time.Time{}, crashes: map[[2]string]map[string]time.Time{},
		raised: map[string]bool{}, sessions: map[string]*watched{}, starts: map[string]start{}, found: map[string]bool{}}
}

// Config returns the thresholds in use.
func (w *Watch) Config() Config { return w.cfg }

// Override counts a bypass prompt (once per event id).
func (w *Watch) Override(host, eventID string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.overrides[host]
	if m == nil {
		m = map[string]time.Time{}
		w.overrides[host] = m
	}
	m[eventID] = at
	prune(m, at.Add(-w.cfg.OverrideWindow))
}

// Crash counts a hook failure for a hook event (once per event id).
func (w *Watch) Crash(host, hookEvent, eventID string, at time.Time) {
	if hookEvent == "" {
		hookEvent = "unknown"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	k := [2]string{host, hookEvent}
	m := w.crashes[k]
	if m == nil {
		m = map[string]time.Time{}
		w.crashes[k] = m
	}
	m[eventID] = at
	prune(m, at.Add(-w.cfg.CrashWindow))
}

// Raised notes an alert that is in the ledger.
func (w *Watch) Raised(a Alert) {
	w.mu.Lock()
	w.raised[a.Key()] = true
	w.mu.Unlock()
}

// Due returns the alerts to raise now for host (none already raised today),
// and marks them raised.
func (w *Watch) Due(host string, now time.Time) []Alert {
	day := now.UTC().Format(time.DateOnly)
	w.mu.Lock()
	defer w.mu.Unlock()
	var due []Alert
	if n := count(w.overrides[host], now.Add(-w.cfg.OverrideWindow), now); n >= w.cfg.OverrideThreshold {
		due = append(due, Alert{Kind: KindOverride, Host: host, Day: day, Count: n})
	}
	for k, m := range w.crashes {
		if k[0] != host {
			continue
		}
		if n := count(m, now.Add(-w.cfg.CrashWindow), now); n >= w.cfg.CrashThreshold {
			due = append(due, Alert{Kind: KindCrash, Host: host, Event: k[1], Day: day, Count: n})
		}
	}
	due = slices.DeleteFunc(due, func(a Alert) bool { return w.raised[a.Key()] })
	slices.SortFunc(due, func(a, b Alert) int { return strings.Compare(a.Key(), b.Key()) })
	for _, a := range due {
		w.raised[a.Key()] = true
	}
	return due
}

func count(m map[string]time.Time, from, to time.Time) int {
	n := 0
	for _, t := range m {
		if t.After(from) && !t.After(to.Add(time.Minute)) { // tolerate a minute of clock skew between hosts
			n++
		}
	}
	return n
}

func prune(m map[string]time.Time, before time.Time) {
	for k, t := range m {
		if !t.After(before) {
			delete(m, k)
		}
	}
}

// bypass matches prompts that ask the agent to get around the gate or the
// evidence it wants. Phrases, not single words: "force" alone is common in
// ordinary requests ("force-push the branch").
var bypass = regexp.MustCompile(`(?i)\b(` + strings.Join([]string{
	`skip(ping)? (the |all |running (the )?)?(tests?|checks?|gate|hooks?|validation|verification|claimcheck)`,
	`force (this|it)( through| in| done)?\b`,
	`(bypass|circumvent|get around|work around|disable|turn off|switch off|ignore|override) (the |this |that |your )?(evidence |stop |claimcheck )?(gate|hooks?|claimcheck|checks?|verification|validators?|tests?)`,
	`(just |simply )?(say|mark|call|declare) (it|this|that|the task)('?s| is| as)? (done|complete|fixed|finished)`,
	`(don'?t|do not|no need to) (run|bother (with|running)) (the )?(tests?|checks?|validators?)`,
	`without (running |any )?(the )?(tests?|checks?|evidence|verification)`,
	`no[- ]verify`,
	`stop the (gate|hook) from blocking`,
}, "|") + `)`)

// Bypass returns the phrase of prompt that asks to bypass the gate, or "".
func Bypass(prompt string) string {
	if len(prompt) > 64<<10 {
		prompt = prompt[:64<<10]
	}
	return strings.TrimSpace(bypass.FindString(prompt))
}
