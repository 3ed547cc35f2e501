package gatekeeper

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/level"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/watch"
)

// decidePrompt answers a UserPromptSubmit. It never blocks the prompt: it
// audits prompts that ask to bypass the gate (an OverrideRequest record),
// and raises the alerts that are due for the prompt's host (override
// prompts over the threshold, claimcheck-hook failing repeatedly), shown to
// the user (systemMessage) and the agent (additionalContext). The hook
// treats this answer as advisory: without it the prompt goes on.
func (s *Service) decidePrompt(ctx context.Context, req schemas.GateRequest) schemas.GateDecision {
	d := s.base(req)
	d.Decision, d.Rule = schemas.GateAllow, "prompt.audit"
	d.LedgerHead = s.view.Head(req.SessionID)
	var p struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal(req.Payload, &p, json.RejectUnknownMembers(false)); err != nil {
		d.Reason = "the prompt payload could not be read: " + err.Error()
		return d
	}
	now := s.set.Clock.Now()
	w := s.watch
	var agent []string
	if phrase := watch.Bypass(p.Prompt); phrase != "" && req.EventID != "" {
		d.Rule = "prompt.override_request"
		w.Override(req.Host, req.EventID, now)
		if raw, err := json.Marshal(
			schemas.OverrideRequest{SessionID: req.SessionID, HookEvent: schemas.OverrideEvent, PromptEvent: req.EventID, Phrase: phrase,
				Host: req.Host}, json.Deterministic(true)); err == nil {
			oid, _ := s.gen.New()
			s.recordEvent(req.SessionID, schemas.OverrideEvent, oid, "override-"+req.EventID, raw)
		}
		s.m.decisions.WithLabelValues(schemas.HookUserPromptSubmit, "override_request", d.Rule).Inc()
		agent = append(agent,
			"claimcheck: this prompt asks to bypass the evidence gate (\""+phrase+"\"); the request is recorded and the gate still applies. "+
				"Back every claim with `claimcheck claim`, or ask the human to run `claimcheck gate override --session "+req.SessionID+" --reason …` (recorded break-glass).")
	}
	var user []string
	for _, a := range w.Due(req.Host, now) {
		msg := a.Message(w.Config())
		user = append(user, msg)
		raw, err := json.Marshal(
			schemas.GateAlert{SessionID: req.SessionID, HookEvent: schemas.GateAlertEvent, Kind: a.Kind, Host: a.Host, Event: a.Event,
				Day: a.Day, Count: a.Count, Message: msg}, json.Deterministic(true))
		if err != nil {
			continue
		}
		aid, _ := s.gen.New()
		// The alert's key is its dedupe id: gatekeepers racing on one host
		// leave one record.
		s.recordEvent(req.SessionID, schemas.GateAlertEvent, aid, a.Key(), raw)
		s.set.Logger.WarnContext(ctx, "gatekeeper: alert raised", slog.String("kind", a.Kind), slog.String("host", a.Host),
			slog.String("event", a.Event), slog.Any("count", a.Count))
		if a.Kind == watch.KindCrash {
			// A crash burst raises the host's level.
			if tok, err := id.HostToken(a.Host); err == nil {
				if m, _ := s.escalate(ctx, schemas.ScopeHost, tok, req.SessionID, a.Host,
					level.Event{Kind: level.Crashes, Detail: fmt.Sprintf("%d failures of its %s hook", a.Count, a.Event)}); m != "" {
					user = append(user, m)
				}
			}
		}
	}
	if len(user) > 0 {
		d.Rule = "prompt.alert"
		d.SystemMessage = strings.Join(user, "\n")
		agent = append(agent, user...)
		agent = append(agent, "Tell the human about these claimcheck alerts before going on.")
	}
	d.AdditionalContext = strings.Join(agent, "\n")
	return d
}

// promptAtLevel tells the agent and the user, at a prompt, that the
// session cannot use tools (CONTAIN, HALT).
func (s *Service) promptAtLevel(d *schemas.GateDecision, lv effective) {
	if l := lv.level(); l == schemas.LevelContain || l == schemas.LevelHalt {
		msg := changeMessage(lv.LevelState)
		d.SystemMessage = addLine(d.SystemMessage, msg)
		d.AdditionalContext = addLine(d.AdditionalContext, msg+" Do not try tool calls; tell the user this session is stopped and why.")
	}
}
