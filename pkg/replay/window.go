package replay

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/schemas"
)

// ParseTime reads a point in time given on a command line: an RFC 3339
// time ("2026-11-28T06:00:00Z", fractional seconds allowed), or a duration
// back from now ("90m", "1h30m", "7d"; Go duration units plus d for 24h).
func ParseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, errors.New("empty: want an RFC 3339 time (2026-11-28T06:00:00Z) or a duration back from now (1h, 7d)")
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	d, err := parseAgo(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want an RFC 3339 time (2026-11-28T06:00:00Z) or a duration back from now (1h, 90m, 7d)", s)
	}
	return now.Add(-d).UTC(), nil
}

// maxAgo bounds a duration back from now (a century; anything longer is
// a typo, and time.Duration overflows at 292 years).
const maxAgo = 100 * 365 * 24 * time.Hour

// parseAgo is time.ParseDuration with a days unit ("7d", "1d12h"),
// refusing negative and absurd durations.
func parseAgo(s string) (time.Duration, error) {
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseUint(s[:i], 10, 16)
		if err != nil {
			return 0, err
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
	}
	var d time.Duration
	if s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, err
		}
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			return 0, errors.New("signed duration")
		}
	}
	if d < 0 || d > maxAgo || days > maxAgo || d+days > maxAgo {
		return 0, errors.New("out of range")
	}
	return d + days, nil
}

// Window is the span of ingestion times a replay covers: Since
// inclusive, Until exclusive; a zero Until leaves it open.
type Window struct {
	Since, Until time.Time
}

// Check reports a window that ends before it starts.
func (w Window) Check() error {
	if !w.Until.IsZero() && !w.Until.After(w.Since) {
		return fmt.Errorf("--until %s is not after --since %s", w.Until.Format(time.RFC3339Nano), w.Since.Format(time.RFC3339Nano))
	}
	return nil
}

// Contains reports whether t is inside the window.
func (w Window) Contains(t time.Time) bool {
	return !t.Before(w.Since) && (w.Until.IsZero() || t.Before(w.Until))
}

// Pos is a position in the ledger: the stream sequence of a block and
// the entry's place in it (1-based). Archive and hot stream share the
// sequences (the archive is a prefix of the stream), so a Pos names one
// entry wherever it is read from, and positions sort in ledger order.
type Pos struct {
	Seq   uint64
	Index int
}

// String is the form --after reads: "<seq>.<index>".
func (p Pos) String() string { return fmt.Sprintf("%d.%d", p.Seq, p.Index) }

// IsZero reports the zero Pos (before the first entry).
func (p Pos) IsZero() bool { return p.Seq == 0 && p.Index == 0 }

// Less orders positions.
func (p Pos) Less(q Pos) bool { return p.Seq < q.Seq || (p.Seq == q.Seq && p.Index < q.Index) }

// maxIndex bounds an entry's place in a block (ingest's blocks hold a few
// hundred at most).
const maxIndex = 1 << 20

// ParsePos reads a position printed by replay or export ("1234.2").
func ParsePos(s string) (Pos, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ".")
	if !ok {
		return Pos{}, fmt.Errorf("%q: want <sequence>.<entry>, as printed by export or replay (e.g. 1234.2)", s)
	}
	seq, err := strconv.ParseUint(a, 10, 64)
	if err != nil || seq == 0 || a[0] == '+' {
		return Pos{}, fmt.Errorf("%q: the sequence %q is not a positive integer", s, a)
	}
	idx, err := strconv.Atoi(b)
	if err != nil || idx < 1 || idx > maxIndex || b[0] == '+' {
		return Pos{}, fmt.Errorf("%q: the entry %q is not an integer in 1..%d", s, b, maxIndex)
	}
	return Pos{Seq: seq, Index: idx}, nil
}

// Filter selects entries; empty fields select everything.
type Filter struct {
	Host    string
	Session string // a chain: a session id, _rejected or _rotator
	Kind    string // an entry kind (event, claim, …) or a hook event (PreToolUse, GateDecision, …)
}

// EntryKinds are the values of an entry's kind.
var EntryKinds = []string{schemas.EntryEvent, schemas.EntryInvalid, schemas.EntryRejected, schemas.EntryContract,
	schemas.EntryClaim, schemas.EntryVerdict, schemas.EntryRotator}

// HookEvents are the hook_event values --kind accepts: Claude Code's
// hooks, and the records claimcheck itself chains.
var HookEvents = []string{schemas.HookSessionStart, schemas.HookUserPromptSubmit, schemas.HookPreToolUse,
	schemas.HookPostToolUse, schemas.HookPostToolUseFailure, schemas.HookNotification, schemas.HookSubagentStop,
	schemas.HookStop, schemas.HookPreCompact, schemas.HookSessionEnd, schemas.ClaimRequestEvent,
	schemas.GateDecisionEvent, schemas.GateOverrideEvent, schemas.HookCrashEvent, schemas.OverrideEvent,
	schemas.GateAlertEvent, schemas.GateFindingEvent, schemas.RotatorSegmentDeleted, schemas.RotatorKeyRotated,
	schemas.RotatorKeyRevoked, schemas.RotatorKeyRetired}

// Check validates the filter, naming the flag and value that are wrong.
func (f Filter) Check() error {
	var errs []error
	if f.Session != "" && f.Session != schemas.RejectedChain && f.Session != schemas.RotatorChain {
		if err := id.CheckSession(f.Session); err != nil {
			errs = append(errs, fmt.Errorf("--session %q: %w", f.Session, err))
		}
	}
	if f.Host != "" && (len(f.Host) > 253 || strings.ContainsAny(f.Host, " \t\r\n")) {
		errs = append(errs, fmt.Errorf("--host %q: not a host name", f.Host))
	}
	if f.Kind != "" && !slices.Contains(EntryKinds, f.Kind) && !slices.Contains(HookEvents, f.Kind) {
		errs = append(errs, fmt.Errorf("--kind %q: want an entry kind (%s) or a hook event (%s)", f.Kind,
			strings.Join(EntryKinds, ", "), strings.Join(HookEvents, ", ")))
	}
	return errors.Join(errs...)
}

// Match reports whether an entry with these fields passes the filter.
func (f Filter) Match(h *Head) bool {
	return (f.Host == "" || h.Host == f.Host) && (f.Session == "" || h.Chain == f.Session) &&
		(f.Kind == "" || h.Kind == f.Kind || h.HookEvent == f.Kind)
}
