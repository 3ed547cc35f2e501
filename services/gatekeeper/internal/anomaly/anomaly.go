// Package anomaly is the seed's behavioural anomaly monitor (L4-C05),
// simply: per agent type, a rolling baseline of how many tool calls, how
// many denials and how many bytes of tool output a session produces in a
// window of time, and a session whose windows stay far above its agent
// type's baseline for several windows in a row. It is pure: the
// gatekeeper feeds it the ledger's entries (every replica the same ones,
// so every replica finds the same anomalies) and raises the session's
// level one step for each anomaly it reports.
package anomaly

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
)

// Metric names what is counted per window.
type Metric string

// Metrics.
const (
	ToolCalls   Metric = "tool_calls"   // PreToolUse events
	Denials     Metric = "denials"      // PreToolUse decisions that denied
	OutputBytes Metric = "output_bytes" // the size of tool results (PostToolUse, PostToolUseFailure)
)

var metrics = []Metric{ToolCalls, Denials, OutputBytes}

// Config tunes the monitor (gatekeeper.levels.anomaly.* in files).
type Config struct {
	// Enabled turns the monitor on. Off by default: its thresholds are
	// the seed's, not calibrated on real fleets, and a false alarm
	// restricts an agent until an operator lifts it.
	Enabled bool `mapstructure:"enabled"`
	// Window is the length of one window of a session's activity.
	Window time.Duration `mapstructure:"window"`
	// Sigma: a window deviates when a metric exceeds the baseline's mean by
	// more than Sigma standard deviations (the seed: 3).
	Sigma float64 `mapstructure:"sigma"`
	// Sustain: this many deviating windows of a session in a row are an
	// anomaly (the seed: "persists 3 consecutive turns").
	Sustain int `mapstructure:"sustain"`
	// MinWindows: a baseline judges nothing before it has seen this many
	// windows of its agent type.
	MinWindows int `mapstructure:"min_windows"`
}

// DefaultConfig returns the seed's thresholds with one-minute windows.
func DefaultConfig() Config {
	return Config{Window: time.Minute, Sigma: 3, Sustain: 3, MinWindows: 30}
}

// Validate reports a problem.
func (c Config) Validate() error {
	if c.Window < time.Second || c.Sigma <= 0 || c.Sustain < 1 || c.MinWindows < 2 {
		return fmt.Errorf("gatekeeper.levels.anomaly: window %s (≥ 1s), sigma %g (> 0), sustain %d (≥ 1), "+
			"min_windows %d (≥ 2): out of range", c.Window, c.Sigma, c.Sustain, c.MinWindows)
	}
	return nil
}

// alpha is the weight of a new window in the rolling baseline (an
// exponentially weighted mean and variance: about the last 40 windows).
const alpha = 0.05

// minSD keeps a quiet baseline from calling one extra event a deviation.
var minSD = map[Metric]float64{ToolCalls: 2, Denials: 1, OutputBytes: 4096}

// baseline is one agent type's rolling mean and variance of one metric.
type baseline struct {
	mean, variance float64
	n              int
}

func (b *baseline) add(x float64) {
	b.n++
	if b.n == 1 {
		b.mean = x
		return
	}
	d := x - b.mean
	b.mean += alpha * d
	b.variance = (1 - alpha) * (b.variance + alpha*d*d)
}

func (b *baseline) sd(m Metric) float64 { return max(math.Sqrt(b.variance), minSD[m]) }

// session is one session's open window and its run of deviating windows.
type session struct {
	agentType string
	window    time.Time // start of the open window
	counts    map[Metric]float64
	run       int      // deviating windows in a row
	why       []string // what deviated in them
}

// An Anomaly is a session whose activity stayed above its agent type's
// baseline for Sustain windows in a row.
type Anomaly struct {
	Session   string
	AgentType string
	// End is the end of the last deviating window; with Session it
	// identifies the anomaly (gatekeepers racing on it raise one step).
	End time.Time
	// Detail says what deviated, window by window.
	Detail string
}

// Key identifies the anomaly.
func (a Anomaly) Key() string { return a.Session + "@" + a.End.UTC().Format(time.RFC3339) }

// Monitor keeps the baselines and the sessions' windows.
type Monitor struct {
	cfg Config

	mu        sync.Mutex
	baselines map[string]map[Metric]*baseline // agent type →
	sessions  map[string]*session
	due       []Anomaly
}

// New returns a monitor.
func New(cfg Config) *Monitor {
	return &Monitor{cfg: cfg, baselines: map[string]map[Metric]*baseline{}, sessions: map[string]*session{}}
}

// Observe counts amount of metric for a session of agentType ("": the
// session's, as first seen) at time at. Observations come in the ledger's
// order; one in a later window closes the session's open window (idle
// windows in between are not judged).
func (m *Monitor) Observe(agentType, sessionID string, metric Metric, amount float64, at time.Time) {
	start := at.Truncate(m.cfg.Window)
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[sessionID]
	if s == nil {
		if agentType == "" {
			agentType = "unknown"
		}
		s = &session{agentType: agentType, window: start, counts: map[Metric]float64{}}
		m.sessions[sessionID] = s
	}
	if start.After(s.window) {
		m.close(sessionID, s)
		s.window, s.counts = start, map[Metric]float64{}
	}
	s.counts[metric] += amount
}

// close judges a session's finished window against its agent type's
// baseline, then adds it to the baseline unless it deviated (an anomalous
// session would otherwise teach the baseline its own behaviour within a
// few windows). The caller holds m.mu.
func (m *Monitor) close(id string, s *session) {
	bs := m.baselines[s.agentType]
	if bs == nil {
		bs = map[Metric]*baseline{}
		for _, k := range metrics {
			bs[k] = &baseline{}
		}
		m.baselines[s.agentType] = bs
	}
	var over []string
	for _, k := range metrics {
		b, x := bs[k], s.counts[k]
		if b.n >= m.cfg.MinWindows && x > b.mean+m.cfg.Sigma*b.sd(k) {
			over = append(over, fmt.Sprintf("%s %.0f (baseline %.1f ± %.1f)", k, x, b.mean, b.sd(k)))
		}
	}
	if len(over) == 0 {
		for _, k := range metrics {
			bs[k].add(s.counts[k])
		}
		s.run, s.why = 0, nil
		return
	}
	s.run++
	s.why = append(s.why, fmt.Sprintf("%s: %v", s.window.UTC().Format("15:04:05"), over))
	if s.run >= m.cfg.Sustain {
		end := s.window.Add(m.cfg.Window)
		m.due = append(m.due, Anomaly{Session: id, AgentType: s.agentType, End: end,
			Detail: fmt.Sprintf("%d windows of %s in a row above the %s baseline by more than %g standard deviations: %v",
				s.run, m.cfg.Window, s.agentType, m.cfg.Sigma, s.why)})
		s.run, s.why = 0, nil
	}
}

// Tick closes the open windows that ended before now (a session that went
// quiet has its last window judged too), then returns the anomalies found
// since the last call whose last window ended no earlier than since (a
// replay of an old ledger raises nothing).
func (m *Monitor) Tick(now, since time.Time) []Anomaly {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.sessions))
	for id := range m.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s := m.sessions[id]
		if !s.window.Add(m.cfg.Window).After(now) {
			m.close(id, s)
			delete(m.sessions, id) // its next event opens a window afresh
		}
	}
	var out []Anomaly
	for _, a := range m.due {
		if !a.End.Before(since) {
			out = append(out, a)
		}
	}
	m.due = m.due[:0]
	return out
}
