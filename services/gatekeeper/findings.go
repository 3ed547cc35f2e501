package gatekeeper

import (
	"context"
	"log/slog"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/level"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/watch"
)

// findingsEvery is how often the gatekeeper asks the watch for findings.
const findingsEvery = time.Second

// watchFindings records the findings the watch says are due, until ctx
// ends: a SessionStart whose hook configuration is not gated, a session
// whose events stopped while its host went on (ungated). The projection
// has replayed the ledger by then, so findings already recorded are known
// and not raised again; gatekeepers racing on one finding leave one record
// (its key is the record's dedupe id).
func (s *Service) watchFindings(ctx context.Context) {
	t := time.NewTicker(findingsEvery)
	defer t.Stop()
	for {
		for _, f := range s.watch.Findings(s.set.Clock.Now()) {
			s.recordFinding(ctx, f)
		}
		s.raiseAnomalies(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// recordFinding signs a finding as a gate decision is signed and records it
// in the session's chain.
func (s *Service) recordFinding(ctx context.Context, f watch.Finding) {
	fid, err := s.gen.New()
	if err != nil {
		return
	}
	gf := schemas.GateFinding{V: 1, FindingID: fid, Kind: f.Kind, SessionID: f.Session, Host: f.Host, EventID: f.EventID,
		Message: f.Message(s.cfg.UngatedAfter), Gatekeeper: s.cfg.ID, IssuedAt: s.set.Clock.Now().UTC().Format(time.RFC3339Nano)}
	switch f.Kind {
	case schemas.FindingHookConfigDrift:
		if f.Config != nil {
			gf.Verdict, gf.Missing, gf.Reasons = f.Config.Verdict, f.Config.Missing, f.Config.Reasons
		}
	case schemas.FindingUngated:
		gf.LastEventAt = f.At.UTC().Format(time.RFC3339Nano)
		gf.NextStartAt = f.NextStart.UTC().Format(time.RFC3339Nano)
	}
	raw, err := s.findingRecord(ctx, gf)
	if err != nil {
		s.m.failures.WithLabelValues("sign").Inc()
		s.set.Logger.ErrorContext(ctx, "gatekeeper: cannot sign a finding", slog.String("kind", f.Kind),
			slog.String("session", f.Session), slog.Any("err", err))
		return
	}
	s.recordEvent(f.Session, schemas.GateFindingEvent, fid, f.Key(), raw)
	s.m.findings.WithLabelValues(f.Kind).Inc()
	s.set.Logger.WarnContext(ctx, "gatekeeper: finding recorded", slog.String("kind", f.Kind), slog.String("session", f.Session),
		slog.String("host", f.Host))
}

// findingRecord signs gf and returns its record: the finding in the clear
// with its envelope's signatures (decision.FindingRef).
func (s *Service) findingRecord(ctx context.Context, gf schemas.GateFinding) ([]byte, error) {
	payload, err := decision.FindingPayload(gf)
	if err != nil {
		return nil, err
	}
	env, err := s.signer.Sign(ctx, schemas.GateFindingType, payload)
	if err != nil {
		return nil, err
	}
	ref, err := decision.FindingRef(env, gf)
	if err != nil {
		return nil, err
	}
	return json.Marshal(schemas.FindingRecord{SessionID: gf.SessionID, HookEvent: schemas.GateFindingEvent, Finding: gf, Signed: ref},
		json.Deterministic(true))
}

// anomalyHorizon: anomalies whose last window ended longer ago than this
// raise nothing (a gatekeeper replaying an old ledger at start).
const anomalyHorizon = 10 * time.Minute

// raiseAnomalies raises the level of each session the anomaly monitor
// found one step. Every gatekeeper finds the same anomalies in the same
// ledger; the session's state remembers the last one counted, so each
// raises the level once.
func (s *Service) raiseAnomalies(ctx context.Context) {
	if s.anomalies == nil {
		return
	}
	now := s.set.Clock.Now()
	for _, a := range s.anomalies.Tick(now, now.Add(-anomalyHorizon)) {
		ev := level.Event{Kind: level.Anomaly, Key: a.Key(), Detail: a.Detail, At: now, By: s.cfg.ID}
		_, _, err := s.updateLevel(ctx, schemas.ScopeSession, a.Session, a.Session, s.view.Owner(a.Session),
			func(st *schemas.LevelState) bool {
				changed := s.cfg.Levels.Escalate(st, ev)
				if changed {
					st.Notice = changeMessage(*st) // no request of the session is being answered: its next one shows it
				}
				return changed
			})
		if err != nil {
			s.m.failures.WithLabelValues("level").Inc()
			s.set.Logger.ErrorContext(ctx, "gatekeeper: cannot raise a level for an anomaly", slog.String("session", a.Session),
				slog.Any("err", err))
		}
	}
}
