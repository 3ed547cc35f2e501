package gatekeeper

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/clock"
	"github.com/claimcheck/claimcheck/pkg/id"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/gatekeeper/internal/pretool"
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
// event and decides again, with the current pre-tool policy and key set.
// It is the debugging procedure of seed 001 without the transcript race:
// the inputs are the ledger's, not a transcript file's.
func Replay(ctx context.Context, js jetstream.JetStream, cfg Config, session string, emit func(ReplayStep)) error {
	pol, err := loadPretool(cfg.PretoolPolicyFile)
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
	s := &Service{cfg: cfg, set: service.Settings{Clock: clock.Real{}}, gen: id.NewGenerator(clock.Real{}, id.FastEntropy{}), pretool: pol, runtime: pretool.Runtime{ProtectedPaths: cfg.ProtectedPaths, Home: cfg.Home}, proj: newProjection(cfg.MaxTrail, cfg.MaxEnvelopes, watch.New(watch.DefaultConfig())), policies: newPolicyCache(pkv)}
	s.verify.Store(vs)
	s.proj.js = js // envelopes beyond the projection's bound are read back
	// The session's attestations (others' are reported as foreign: absent here).
	as, err := js.Stream(ctx, stream.Attest)
	if err != nil {
		return err
	}
	for seq := uint64(1); ; {
		m, err := as.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject.AttestPrefix+"."+session+".*"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return fmt.Errorf("read attestations: %w", err)
		}
		s.proj.applyAttestation(m.Subject, m.Sequence, m.Data, m.Time)
		seq = m.Sequence + 1
	}
	var steps []*ReplayStep
	byEvent := map[string]*ReplayStep{}
	err = ledger.NewReader(js, stream.Ledger).Walk(ctx, session, 0, func(st ledger.Stored) error {
		s.proj.applyLedger(session, st.Raw)
		var e schemas.Entry
		if err := json.Unmarshal(st.Raw, &e, json.RejectUnknownMembers(false)); err != nil || e.Kind != schemas.EntryEvent || e.Payload == nil {
			return nil
		}
		switch e.HookEvent {
		case "Stop", "PreToolUse":
		case schemas.GateDecisionEvent:
			var r schemas.GateRecord
			if json.Unmarshal([]byte(*e.Payload), &r, json.RejectUnknownMembers(false)) == nil {
				if step := byEvent[r.Decision.EventID]; step != nil {
					step.Recorded = append(step.Recorded, r.Decision)
				}
			}
			return nil
		default:
			return nil
		}
		req := schemas.GateRequest{V: 1, EventID: e.EventID, SessionID: session, HookEvent: e.HookEvent, Payload: []byte(*e.Payload)}
		d := schemas.GateDecision{V: 1, SessionID: session, HookEvent: e.HookEvent, EventID: e.EventID, Source: "replay", IssuedAt: time.Now().UTC().Format(time.RFC3339Nano)}
		step := &ReplayStep{N: e.N, EventID: e.EventID, HookEvent: e.HookEvent}
		if e.HookEvent == "PreToolUse" {
			d = s.decidePreTool(req)
			d.Source = "replay"
			var p struct {
				ToolName  string `json:"tool_name"`
				ToolInput any    `json:"tool_input"`
			}
			_ = json.Unmarshal([]byte(*e.Payload), &p, json.RejectUnknownMembers(false))
			in, _ := json.Marshal(p.ToolInput)
			step.Summary = p.ToolName + " " + clipText(string(in), 100)
		} else {
			var p struct {
				Message string `json:"last_assistant_message"`
				Active  bool   `json:"stop_hook_active"`
			}
			_ = json.Unmarshal([]byte(*e.Payload), &p, json.RejectUnknownMembers(false))
			s.proj.mu.RLock()
			snap := s.proj.snapshotLocked(s.proj.sessions[session])
			s.proj.mu.RUnlock()
			snap.stopSeen = true
			d = s.judgeStop(d, req, snap, p.Message, p.Active)
			step.Summary = clipText(p.Message, 100)
		}
		step.Decision = d
		steps = append(steps, step)
		byEvent[e.EventID] = step
		return nil
	})
	if err != nil {
		return err
	}
	for _, st := range steps {
		emit(*st)
	}
	return nil
}

func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + "…"
}
