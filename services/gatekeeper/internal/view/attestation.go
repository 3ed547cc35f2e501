package view

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// Attestation is a stored attestation as the view knows it.
type Attestation struct {
	Session  string    // the session it was made in (its ATTEST subject's)
	Seq      uint64    // its ATTEST sequence
	Envelope []byte    // the signed DSSE envelope
	StoredAt time.Time // when ATTEST stored it
	// FromStream says the envelope was read back from ATTEST (it was no
	// longer kept in memory).
	FromStream bool
}

// Attestation looks up an attestation by id, its envelope read back from
// ATTEST when it is no longer kept in memory. An id the view does not know
// yet is looked up again once the view has applied ATTEST up to the
// stream's last message: the verifier writes an attestation before it
// answers PASS, so one cited at a Stop is in the stream, but the view
// follows ATTEST on its own and may not have applied it yet.
//
// found false with a nil error means there is no such attestation; with an
// error, that it could not be looked up (ctx ended first, or ATTEST could
// not be asked). found true with an error means it is known but its
// envelope could not be read back.
func (v *View) Attestation(ctx context.Context, id string) (a Attestation, found bool, err error) {
	v.mu.RLock()
	st, found := v.atts[id]
	if found {
		a = st.public()
	}
	js, follows := v.js, v.followsAttest
	v.mu.RUnlock()
	if !found && js != nil && follows {
		if err := v.catchUpAttest(ctx, js); err != nil {
			return a, false, err
		}
		v.mu.RLock()
		if st, found = v.atts[id]; found {
			a = st.public()
		}
		v.mu.RUnlock()
	}
	if !found || a.Envelope != nil {
		return a, found, nil
	}
	a.FromStream = true
	if js == nil {
		return a, true, errors.New("ATTEST is not being followed")
	}
	s, err := js.Stream(ctx, stream.Attest)
	if err != nil {
		return a, true, fmt.Errorf("read attestation %s: %w", id, err)
	}
	m, err := s.GetMsg(ctx, a.Seq)
	if err != nil {
		return a, true, fmt.Errorf("read attestation %s (ATTEST seq %d): %w", id, a.Seq, err)
	}
	if m.Subject != subject.AttestPrefix+"."+a.Session+"."+id {
		return a, true, fmt.Errorf("ATTEST seq %d holds %s, not attestation %s", a.Seq, m.Subject, id)
	}
	a.Envelope = m.Data
	return a, true, nil
}

func (st *stored) public() Attestation {
	return Attestation{Session: st.session, Seq: st.seq, Envelope: st.envelope, StoredAt: st.storedAt}
}

// catchUpAttest waits until the view has applied ATTEST up to the stream's
// last message at the time of the call, or ctx ends.
func (v *View) catchUpAttest(ctx context.Context, js jetstream.JetStream) error {
	s, err := js.Stream(ctx, stream.Attest)
	if err != nil {
		return fmt.Errorf("look up ATTEST's last message: %w", err)
	}
	last := s.CachedInfo().State.LastSeq
	for {
		v.mu.RLock()
		done, ch := v.attestSeq >= last, v.changed
		v.mu.RUnlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("the gatekeeper has not yet read ATTEST up to seq %d: %w", last, ctx.Err())
		}
	}
}
