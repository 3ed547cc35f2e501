package view

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// Session returns the view `claimcheck gate replay` decides from: the
// recorded session's attestations applied from ATTEST (other sessions'
// are absent, so citing one finds nothing), and nothing followed; Walk
// then applies the session's chain. Envelopes beyond cfg.MaxEnvelopes are
// read back from ATTEST like the gatekeeper's.
func Session(ctx context.Context, js jetstream.JetStream, session string, cfg Config) (*View, error) {
	v := New(cfg)
	v.js = js
	as, err := js.Stream(ctx, stream.Attest)
	if err != nil {
		return nil, err
	}
	for seq := uint64(1); ; {
		m, err := as.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject.AttestPrefix+"."+session+".*"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return v, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read attestations: %w", err)
		}
		v.applyAttestation(m.Subject, m.Sequence, m.Data, m.Time)
		seq = m.Sequence + 1
	}
}

// Gated is an event the gate decides (Stop or PreToolUse) met by Walk.
type Gated struct {
	Entry schemas.Entry
	// Snapshot is the session as it stood with the event applied
	// (StopSeen is true).
	Snapshot Snapshot
}

// Walk applies session's chain to the view from its first entry. After
// each Stop and PreToolUse event with a payload it calls gated; for each
// gate decision recorded in the chain, recorded.
func (v *View) Walk(ctx context.Context, session string, gated func(Gated), recorded func(schemas.GateDecision)) error {
	if v.js == nil {
		return errors.New("walk: the view has no JetStream to read the ledger from")
	}
	return ledger.NewReader(v.js, stream.Ledger).Walk(ctx, session, 0, func(st ledger.Stored) error {
		v.applyLedger(ctx, session, st.Seq, st.Raw)
		var e schemas.Entry
		if err := json.Unmarshal(st.Raw, &e, json.RejectUnknownMembers(false)); err != nil ||
			e.Kind != schemas.EntryEvent || e.Payload == nil {
			return nil
		}
		switch e.HookEvent {
		case schemas.HookStop, schemas.HookPreToolUse:
			v.mu.RLock()
			snap := v.sessions[session].snapshot()
			v.mu.RUnlock()
			snap.StopSeen = true
			gated(Gated{Entry: e, Snapshot: snap})
		case schemas.GateDecisionEvent:
			var r schemas.GateRecord
			if json.Unmarshal([]byte(*e.Payload), &r, json.RejectUnknownMembers(false)) == nil {
				recorded(r.Decision)
			}
		}
		return nil
	})
}
