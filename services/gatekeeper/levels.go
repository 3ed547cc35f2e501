package gatekeeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/level"
)

// The degradation levels live in the levels bucket, one key per session
// (session.<id>), host (host.<token>) and the fleet (fleet), each changed
// by compare and set on its revision: every gatekeeper reads them for
// every request, so all replicas enforce the same level from the request
// after a change on. Each change is signed and recorded in a chain as a
// level_change finding.

// LevelKey is the key of a scope's level in the levels bucket.
func LevelKey(scope, name string) string {
	if scope == schemas.ScopeFleet {
		return "fleet"
	}
	return scope + "." + name
}

// levelReadTimeout bounds reading the levels for one request.
const levelReadTimeout = time.Second

// effective is the level a request is decided at: the highest of its
// session's, host's and the fleet's, and which of them it is.
type effective struct {
	schemas.LevelState
	session     schemas.LevelState // the session's own, for its notice
	sessionRev  uint64
	unavailable error // the levels could not be read
	// replay: deciding a recorded event again (claimcheck gate replay):
	// the policy alone, no level read, applied or changed.
	replay bool
}

func (e effective) level() string {
	if e.Level == "" {
		return schemas.LevelNormal
	}
	return e.Level
}

// readLevel returns the state under key and its revision (0 when absent).
func (s *Service) readLevel(ctx context.Context, key string) (schemas.LevelState, uint64, error) {
	var st schemas.LevelState
	e, err := s.levels.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return st, 0, nil
	}
	if err != nil {
		return st, 0, err
	}
	if err := json.Unmarshal(e.Value(), &st, json.RejectUnknownMembers(false)); err != nil {
		return st, 0, fmt.Errorf("level %s: %w", key, err)
	}
	return st, e.Revision(), nil
}

// effectiveLevel reads the levels of a request's session, host and the
// fleet. An error is kept in the result: the caller fails closed.
func (s *Service) effectiveLevel(ctx context.Context, session, host string) effective {
	ctx, cancel := context.WithTimeout(ctx, levelReadTimeout)
	defer cancel()
	var out effective
	out.Level = schemas.LevelNormal
	keys := []struct{ scope, name string }{{schemas.ScopeSession, session}, {schemas.ScopeFleet, ""}}
	if tok, err := id.HostToken(host); err == nil && host != "" {
		keys = append(keys, struct{ scope, name string }{schemas.ScopeHost, tok})
	}
	// The reads go out together: one round trip to NATS instead of three
	// in a row, on every gated request.
	type read struct {
		st  schemas.LevelState
		rev uint64
		err error
	}
	got := make([]read, len(keys))
	var wg sync.WaitGroup
	for i := 1; i < len(keys); i++ {
		wg.Go(func() { got[i].st, got[i].rev, got[i].err = s.readLevel(ctx, LevelKey(keys[i].scope, keys[i].name)) })
	}
	got[0].st, got[0].rev, got[0].err = s.readLevel(ctx, LevelKey(keys[0].scope, keys[0].name))
	wg.Wait()
	for i, k := range keys {
		st, rev, err := got[i].st, got[i].rev, got[i].err
		if err != nil {
			out.unavailable = err
			return out
		}
		if i == 0 {
			out.session, out.sessionRev = st, rev
		}
		if st.Level != "" && schemas.LevelRank(st.Level) > schemas.LevelRank(out.Level) {
			out.LevelState = st
			out.Scope, out.Name = k.scope, k.name
		}
	}
	return out
}

// updateLevel changes the state under (scope, name) with change, by
// compare and set, retrying when another gatekeeper changed it in
// between. change reports whether the level changed; only then is the
// change recorded (a level_change finding, in session's chain, or in the
// levels chain for a host or the fleet).
func (s *Service) updateLevel(ctx context.Context, scope, name, session, host string,
	change func(*schemas.LevelState) bool) (schemas.LevelState, bool, error) {
	key := LevelKey(scope, name)
	for range 16 {
		st, rev, err := s.readLevel(ctx, key)
		if err != nil {
			return st, false, err
		}
		st.V, st.Scope, st.Name = 1, scope, name
		from := st.Level
		if from == "" {
			from = schemas.LevelNormal
		}
		changed := change(&st)
		var fid string
		if changed {
			if fid, err = s.gen.New(); err != nil {
				return st, false, err
			}
			st.FindingID = fid
		}
		b, err := json.Marshal(st, json.Deterministic(true))
		if err != nil {
			return st, false, err
		}
		var newRev uint64
		if rev == 0 {
			newRev, err = s.levels.Create(ctx, key, b)
		} else {
			newRev, err = s.levels.Update(ctx, key, b, rev)
		}
		if err == nil {
			if changed {
				s.recordLevel(ctx, st, from, newRev, session, host)
			}
			return st, changed, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !isWrongSeq(err) {
			return st, false, fmt.Errorf("level %s: %w", key, err)
		}
	}
	return schemas.LevelState{}, false, fmt.Errorf("level %s: too many concurrent changes", key)
}

func isWrongSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// escalate counts a security event of a session (or host) and raises its
// level when a rule says so. It returns the message the user is shown
// when the level changed ("" otherwise) and the state after the event;
// failures are logged (the event was answered already; the next one
// counts again).
func (s *Service) escalate(ctx context.Context, scope, name, session, host string, ev level.Event) (string, schemas.LevelState) {
	ev.At, ev.By = s.set.Clock.Now(), s.cfg.ID
	st, changed, err := s.updateLevel(ctx, scope, name, session, host, func(st *schemas.LevelState) bool {
		return s.cfg.Levels.Escalate(st, ev)
	})
	if err != nil {
		s.m.failures.WithLabelValues("level").Inc()
		s.set.Logger.ErrorContext(ctx, "gatekeeper: cannot update a level", slog.String("scope", scope), slog.String("name", name),
			slog.Any("err", err))
		return "", st
	}
	if !changed {
		return "", st
	}
	msg := changeMessage(st)
	if scope == schemas.ScopeSession && st.Level == schemas.LevelContain && s.cfg.Levels.ContainedLevel != schemas.LevelNormal {
		// a rule contained a session: it counts towards its host's level
		if tok, err := id.HostToken(host); err == nil {
			if m, _ := s.escalate(ctx, schemas.ScopeHost, tok, session, host,
				level.Event{Kind: level.Contained, Key: session, Detail: st.Cause}); m != "" {
				msg += "\n" + m
			}
		}
	}
	return msg, st
}

// raised folds a level just raised into lv.
func (lv *effective) raised(st schemas.LevelState) {
	if schemas.LevelRank(st.Level) > schemas.LevelRank(lv.level()) {
		lv.LevelState = st
	}
}

// changeMessage is what the user is shown when a level changes.
func changeMessage(st schemas.LevelState) string {
	who := st.Scope + " " + st.Name
	if st.Scope == schemas.ScopeFleet {
		who = "the fleet"
	}
	msg := fmt.Sprintf("claimcheck: %s is now at level %s: %s. Cause: %s", who, st.Level, level.What(st.Level), st.Cause)
	if st.Operator != "" {
		msg += " (set by " + st.Operator + ")"
	}
	return msg
}

// recordLevel signs a level change and records it: in the session's
// chain for a session, in the levels chain for a host or the fleet. Its
// dedupe id is the key and revision, so a retried record is kept once.
func (s *Service) recordLevel(ctx context.Context, st schemas.LevelState, from string, rev uint64, session, host string) {
	chain := session
	if st.Scope != schemas.ScopeSession || id.CheckSession(chain) != nil {
		chain = schemas.LevelChain
	}
	gf := schemas.GateFinding{V: 1, FindingID: st.FindingID, Kind: schemas.FindingLevel, SessionID: chain, Host: host,
		Scope: st.Scope, Name: st.Name, From: from, Level: st.Level, Rule: st.Rule, Operator: st.Operator, Revision: rev,
		Message: changeMessage(st), Gatekeeper: s.cfg.ID, IssuedAt: s.set.Clock.Now().UTC().Format(time.RFC3339Nano)}
	raw, err := s.findingRecord(ctx, gf)
	if err != nil {
		s.m.failures.WithLabelValues("sign").Inc()
		s.set.Logger.ErrorContext(ctx, "gatekeeper: cannot sign a level change", slog.Any("err", err))
		return
	}
	s.recordEvent(chain, schemas.GateFindingEvent, gf.FindingID, fmt.Sprintf("level-%s-%d", LevelKey(st.Scope, st.Name), rev), raw)
	s.m.findings.WithLabelValues(schemas.FindingLevel).Inc()
	s.set.Logger.WarnContext(ctx, "gatekeeper: level changed", slog.String("scope", st.Scope), slog.String("name", st.Name),
		slog.String("from", from), slog.String("to", st.Level), slog.String("rule", st.Rule), slog.String("cause", st.Cause))
}

// applyLevel makes a decision obey the level it is made at, and names the
// level; a session's pending notice (a change the user has not seen) goes
// into its systemMessage and is cleared.
func (s *Service) applyLevel(ctx context.Context, d *schemas.GateDecision, lv effective, tool string) {
	if lv.replay {
		return
	}
	if lv.unavailable != nil {
		if d.HookEvent == schemas.HookPreToolUse {
			d.Decision, d.Rule = schemas.GateDeny, schemas.RuleLevelUnknown
			d.Reason = "claimcheck denied this tool call because it could not read the session's degradation level (fail closed): " +
				lv.unavailable.Error()
		}
		return
	}
	l := lv.level()
	if l != schemas.LevelNormal {
		d.Level = l
	}
	if d.HookEvent == schemas.HookPreToolUse {
		switch want := level.Enforce(l, tool); {
		case want == schemas.GateDeny && d.Decision != schemas.GateDeny,
			want == schemas.GateAsk && d.Decision == schemas.GateAllow:
			d.Decision, d.Rule = want, schemas.RuleLevelEnforced
			d.Reason = levelReason(lv.LevelState, tool, want)
			if lv.Scope != schemas.ScopeSession {
				// A host's or the fleet's level: the session's user was
				// not shown the change (it happened elsewhere).
				d.SystemMessage = addLine(d.SystemMessage, changeMessage(lv.LevelState))
			}
		}
	}
	if n := lv.session.Notice; n != "" && id.CheckSession(d.SessionID) == nil {
		d.SystemMessage = addLine(d.SystemMessage, n)
		rev := lv.sessionRev
		st := lv.session
		st.Notice = ""
		if b, err := json.Marshal(st, json.Deterministic(true)); err == nil {
			_, _ = s.levels.Update(ctx, LevelKey(schemas.ScopeSession, d.SessionID), b, rev) // shown once; a lost race shows it again
		}
	}
}

// levelReason is what the agent (deny) or the human (ask) reads.
func levelReason(st schemas.LevelState, tool, decision string) string {
	who := st.Scope + " " + st.Name
	if st.Scope == schemas.ScopeFleet {
		who = "the fleet"
	}
	verb := "denied"
	if decision == schemas.GateAsk {
		verb = "needs the human's approval"
	}
	lift := fmt.Sprintf("`claimcheck gate level --%s %s --set NORMAL --reason …`", st.Scope, st.Name)
	if st.Scope == schemas.ScopeFleet {
		lift = "`claimcheck gate level --fleet --set NORMAL --reason …`"
	}
	return fmt.Sprintf("claimcheck: this %s call %s: %s is at degradation level %s (%s). Cause: %s. "+
		"An operator lifts the level with %s.", tool, verb, who, st.Level, level.What(st.Level), st.Cause, lift)
}

func addLine(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

// serveLevel answers `claimcheck gate level --set` (subject.GateLevel,
// which only the operator role may publish on).
func (s *Service) serveLevel(ctx context.Context) nats.MsgHandler {
	return func(m *nats.Msg) {
		s.inflight <- struct{}{}
		go func() {
			defer func() { <-s.inflight }()
			reply := s.SetLevel(ctx, m.Data)
			b, _ := json.Marshal(reply, json.Deterministic(true))
			_ = m.Respond(b)
		}()
	}
}

// SetLevel changes a level as an operator asked (a schemas.LevelRequest).
func (s *Service) SetLevel(ctx context.Context, data []byte) schemas.LevelReply {
	var req schemas.LevelRequest
	if err := json.Unmarshal(data, &req, json.RejectUnknownMembers(true)); err != nil {
		return schemas.LevelReply{Error: "bad level request: " + err.Error()}
	}
	if err := checkLevelRequest(req); err != nil {
		return schemas.LevelReply{Error: err.Error()}
	}
	name, session := req.Name, ""
	switch req.Scope {
	case schemas.ScopeSession:
		session = req.Name
	case schemas.ScopeHost:
		name, _ = id.HostToken(req.Name)
	case schemas.ScopeFleet:
		name = ""
	}
	now := s.set.Clock.Now()
	st, _, err := s.updateLevel(ctx, req.Scope, name, session, "", func(st *schemas.LevelState) bool {
		changed := level.Set(st, req.Level, req.Reason, req.Operator, s.cfg.ID, now)
		if changed && req.Scope == schemas.ScopeSession {
			st.Notice = changeMessage(*st)
		}
		return changed
	})
	if err != nil {
		return schemas.LevelReply{Error: err.Error()}
	}
	return schemas.LevelReply{State: st}
}

func checkLevelRequest(req schemas.LevelRequest) error {
	switch {
	case req.V != 1:
		return fmt.Errorf("v %d, want 1", req.V)
	case schemas.LevelRank(req.Level) < 0:
		return fmt.Errorf("level %s: not one of %v", id.Quote(req.Level), schemas.Levels)
	case req.Reason == "":
		return errors.New("a reason is required")
	case req.Operator == "":
		return errors.New("the operator's name is required")
	}
	switch req.Scope {
	case schemas.ScopeSession:
		return id.CheckSession(req.Name)
	case schemas.ScopeHost:
		_, err := id.HostToken(req.Name)
		return err
	case schemas.ScopeFleet:
		return nil
	}
	return fmt.Errorf("scope %s: not session, host or fleet", id.Quote(req.Scope))
}

// openLevels opens the levels bucket.
func openLevels(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, stream.BucketLevels)
	if err != nil {
		return nil, fmt.Errorf("levels bucket: %w (run `claimcheck streams ensure`)", err)
	}
	return kv, nil
}
