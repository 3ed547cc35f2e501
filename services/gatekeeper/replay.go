package gatekeeper

import (
	"context"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/view"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/watch"
)

// ReplayStep is one gated event of a session, decided again from the
// ledger as it stood when the event was recorded, beside what was recorded
// then.
type ReplayStep struct {
	N         uint64 // the event's position
	EventID   string
	HookEvent string
	Summary   string                 // the tool call or the start of the final message
	Decision  schemas.GateDecision   // decided now (unsigned)
	Recorded  []schemas.GateDecision // the decisions recorded for this event
}

// Replay re-runs the gate over a recorded session: for every Stop and
// PreToolUse event in its chain it rebuilds the session's state up to that
// event (view.Session, View.Walk) and decides again, with the current
// pre-tool policy and key set. It is the debugging procedure of seed 001
// without the transcript race: the inputs are the ledger's, not a
// transcript file's.
func Replay(ctx context.Context, js jetstream.JetStream, cfg Config, session string, emit func(ReplayStep)) error {
	pol, err := loadPretool(cfg.PretoolPolicyFile)
	if err != nil {
		return err
	}
	claims, err := loadClaimPolicy(cfg.PolicyFile)
	if err != nil {
		return err
	}
	reg, err := keyring.OpenRegistry(ctx, js)
	if err != nil {
		return err
	}
	vs, err := reg.Set(ctx)
	if err != nil {
		return err
	}
	pkv, err := js.KeyValue(ctx, stream.BucketPolicies)
	if err != nil {
		return err
	}
	if cfg.MaxTrail < 16 {
		cfg.MaxTrail = DefaultConfig().MaxTrail
	}
	w := watch.New(watch.DefaultConfig())
	// The session's attestations (others' are reported as foreign: absent here).
	v, err := view.Session(ctx, js, session, view.Config{MaxTrail: cfg.MaxTrail, MaxEnvelopes: cfg.MaxEnvelopes, Watch: w})
	if err != nil {
		return err
	}
	s := &Service{cfg: cfg, set: service.Settings{Clock: clock.Real{}}, gen: id.NewGenerator(clock.Real{}, id.FastEntropy{}),
		pretool: pol, claims: claims,
		runtime: cfg.runtime(), view: v, watch: w, policies: newPolicyCache(pkv),
		keySet: func() *keyring.Set { return vs }}
	var steps []*ReplayStep
	byEvent := map[string]*ReplayStep{}
	err = v.Walk(ctx, session, func(g view.Gated) {
		step := s.replayStep(ctx, session, g)
		steps = append(steps, step)
		byEvent[step.EventID] = step
	}, func(d schemas.GateDecision) {
		if step := byEvent[d.EventID]; step != nil {
			step.Recorded = append(step.Recorded, d)
		}
	})
	if err != nil {
		return err
	}
	for _, st := range steps {
		emit(*st)
	}
	return nil
}

// replayStep decides a gated event again.
func (s *Service) replayStep(ctx context.Context, session string, g view.Gated) *ReplayStep {
	e := g.Entry
	req := schemas.GateRequest{V: 1, EventID: e.EventID, SessionID: session, HookEvent: e.HookEvent, Payload: []byte(*e.Payload)}
	d := schemas.GateDecision{V: 1, SessionID: session, HookEvent: e.HookEvent, EventID: e.EventID, Source: "replay",
		IssuedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	step := &ReplayStep{N: e.N, EventID: e.EventID, HookEvent: e.HookEvent}
	if e.HookEvent == schemas.HookPreToolUse {
		d = s.decidePreTool(ctx, req, &effective{replay: true})
		d.Source = "replay"
		var p struct {
			ToolName  string `json:"tool_name"`
			ToolInput any    `json:"tool_input"`
		}
		_ = json.Unmarshal([]byte(*e.Payload), &p, json.RejectUnknownMembers(false))
		in, _ := json.Marshal(p.ToolInput)
		step.Summary = p.ToolName + " " + clipText(string(in), 100)
	} else {
		var p stopPayload
		_ = json.Unmarshal([]byte(*e.Payload), &p, json.RejectUnknownMembers(false))
		d = s.judgeStop(ctx, d, req, g.Snapshot, p)
		step.Summary = clipText(p.message(), 100)
	}
	step.Decision = d
	return step
}

func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + "…"
}
