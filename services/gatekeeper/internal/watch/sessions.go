package watch

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/claimcheck/claimcheck/schemas"
)

// FindingHorizon: sessions whose last event is older than this are no
// longer watched, and no finding is raised about them (a gatekeeper
// replaying an old ledger does not flood it with findings about sessions
// long over).
const FindingHorizon = 24 * time.Hour

// Finding is a finding due about a session: its hook configuration
// drifted (schemas.FindingHookConfigDrift) or its events stopped
// (schemas.FindingUngated).
type Finding struct {
	Kind    string
	Session string
	Host    string
	EventID string              // the drifted SessionStart, or the session's last event
	Config  *schemas.HookConfig // drift: the SessionStart's configuration
	At      time.Time           // drift: the SessionStart; ungated: the session's last event
	// NextStart is the host's later SessionStart (ungated).
	NextStart time.Time
	LastEvent string // ungated: the hook event of the session's last event
}

// Key identifies the finding (once per kind and session; also the dedupe
// id of its record).
func (f Finding) Key() string { return "finding-" + f.Kind + "-" + f.Session }

// Message is the text recorded with the finding.
func (f Finding) Message(ungatedAfter time.Duration) string {
	switch f.Kind {
	case schemas.FindingHookConfigDrift:
		verdict, missing, reasons := "", "", ""
		if f.Config != nil {
			verdict = f.Config.Verdict
			if n := len(f.Config.Missing); n > 0 {
				missing = fmt.Sprintf("; %d of %d claimcheck events unhandled (%s)", n, len(schemas.HookEvents),
					strings.Join(f.Config.Missing, ", "))
			}
			if len(f.Config.Reasons) > 0 {
				reasons = "; " + strings.Join(f.Config.Reasons, "; ")
			}
		}
		return fmt.Sprintf("claimcheck finding: session %s on host %q started with claimcheck's hooks %s%s%s. "+
			"Run `claimcheck hooks verify` in the project, and `claimcheck hooks install` to restore them.",
			f.Session, f.Host, verdict, missing, reasons)
	case schemas.FindingUngated:
		return fmt.Sprintf("claimcheck finding: session %s on host %q sent no event for %s after its last one (%s at %s), "+
			"before its turn or the session ended, while the host started another session at %s: what happened after that is not in the ledger "+
			"(its hooks removed or turned off, or the agent CLI killed).",
			f.Session, f.Host, window(ungatedAfter), f.LastEvent, f.At.UTC().Format(time.RFC3339), f.NextStart.UTC().Format(time.RFC3339))
	}
	return "claimcheck finding: " + f.Kind
}

// watched is what the watch keeps of a session for its findings.
type watched struct {
	host      string
	started   bool // a SessionStart was seen
	ended     bool // a SessionEnd was seen
	idle      bool // the last event (Notification aside) ended a turn: Stop or StopFailure
	lastAt    time.Time
	lastEvent string
	lastID    string
}

// start is a host's latest SessionStart.
type start struct {
	at      time.Time
	session string
}

// hookEvents are the agent events that count as a session's activity.
var hookEvents = func() map[string]bool {
	m := map[string]bool{}
	for _, ev := range schemas.HookEvents {
		m[ev.Name] = true
	}
	return m
}()

// Event notes one of the agent's hook events of a session (not
// claimcheck's own records): cfg is a SessionStart's hook configuration.
func (w *Watch) Event(host, session, hookEvent, eventID string, at time.Time, cfg *schemas.HookConfig) {
	if !hookEvents[hookEvent] || session == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.sessions[session]
	if s == nil {
		s = &watched{host: host}
		w.sessions[session] = s
	}
	if !at.Before(s.lastAt) {
		s.lastAt, s.lastEvent, s.lastID = at, hookEvent, eventID
	}
	switch hookEvent {
	case schemas.HookNotification: // also sent while the agent waits for the user
	case schemas.HookStop, "StopFailure":
		s.idle = true
	case schemas.HookSessionEnd:
		s.ended = true
	default:
		s.idle = false
	}
	if hookEvent != schemas.HookSessionStart {
		return
	}
	s.started = true
	if st := w.starts[host]; at.After(st.at) {
		w.starts[host] = start{at: at, session: session}
	}
	if cfg != nil && cfg.Verdict != schemas.HooksGated {
		f := Finding{Kind: schemas.FindingHookConfigDrift, Session: session, Host: host, EventID: eventID, Config: cfg, At: at}
		if !w.found[f.Key()] && !slices.ContainsFunc(w.drifted, func(d Finding) bool { return d.Key() == f.Key() }) {
			w.drifted = append(w.drifted, f)
		}
	}
}

// Found notes a finding that is in the ledger.
func (w *Watch) Found(kind, session string) {
	key := Finding{Kind: kind, Session: session}.Key()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.found[key] = true
	w.drifted = slices.DeleteFunc(w.drifted, func(d Finding) bool { return d.Key() == key })
}

// Findings returns the findings due now (none already raised) and marks
// them raised. Drift is due when a SessionStart shows claimcheck's hooks
// missing or changed. A session is ungated when all of these hold: it has
// a SessionStart; no SessionEnd; its last event (Notification aside) is
// not a Stop or StopFailure, so its turn or the session was still going;
// that event is at least UngatedAfter old; and a SessionStart of another
// session of the same host came after it. Sessions idle longer than
// FindingHorizon are dropped.
func (w *Watch) Findings(now time.Time) []Finding {
	w.mu.Lock()
	defer w.mu.Unlock()
	var due []Finding
	for _, f := range w.drifted {
		if now.Sub(f.At) <= FindingHorizon {
			due = append(due, f)
			w.found[f.Key()] = true
		}
	}
	w.drifted = nil
	for name, s := range w.sessions {
		quiet := now.Sub(s.lastAt)
		if s.ended || quiet > FindingHorizon {
			delete(w.sessions, name)
			continue
		}
		next := w.starts[s.host]
		if !s.started || s.idle || quiet < w.cfg.UngatedAfter || next.session == name || !next.at.After(s.lastAt) {
			continue
		}
		f := Finding{Kind: schemas.FindingUngated, Session: name, Host: s.host, EventID: s.lastID, At: s.lastAt,
			NextStart: next.at, LastEvent: s.lastEvent}
		if w.found[f.Key()] {
			continue
		}
		w.found[f.Key()] = true
		due = append(due, f)
	}
	slices.SortFunc(due, func(a, b Finding) int { return strings.Compare(a.Key(), b.Key()) })
	return due
}
