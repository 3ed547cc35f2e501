package decision

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/schemas"
)

// Ref keeps of a signed decision envelope what a ledger record needs: the
// payload's type and digest and the signatures. The payload is not kept:
// it is the deterministic JSON encoding of the decision the record carries
// in the clear (Payload), so VerifyRecord can rebuild it. Ref fails when
// the envelope's payload is not that encoding of d.
func Ref(raw []byte, d schemas.GateDecision) (*schemas.SignedRef, error) {
	want, err := Payload(d)
	if err != nil {
		return nil, err
	}
	return refOf(raw, want)
}

// FindingRef is Ref for a signed finding.
func FindingRef(raw []byte, f schemas.GateFinding) (*schemas.SignedRef, error) {
	want, err := FindingPayload(f)
	if err != nil {
		return nil, err
	}
	return refOf(raw, want)
}

// FindingPayload is the signed encoding of a finding.
func FindingPayload(f schemas.GateFinding) ([]byte, error) {
	return json.Marshal(f, json.Deterministic(true))
}

// refOf keeps the signatures of the DSSE envelope raw, whose payload must
// be want.
func refOf(raw, want []byte) (*schemas.SignedRef, error) {
	var env envelope
	if err := json.Unmarshal(raw, &env, json.RejectUnknownMembers(false)); err != nil {
		return nil, fmt.Errorf("not a DSSE envelope: %w", err)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, errors.New("payload is not base64")
	}
	if string(payload) != string(want) {
		return nil, errors.New("the envelope's payload is not the deterministic encoding of the record's content")
	}
	ref := &schemas.SignedRef{PayloadType: env.PayloadType, PayloadSHA256: digest(payload)}
	for _, s := range env.Signatures {
		ref.Signatures = append(ref.Signatures, schemas.Signature{KeyID: s.KeyID, Sig: s.Sig})
	}
	return ref, nil
}

// Payload is the signed encoding of a decision (what the gatekeeper signs).
func Payload(d schemas.GateDecision) ([]byte, error) {
	return json.Marshal(d, json.Deterministic(true))
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// VerifyRecord checks a decision record from the ledger: its decision,
// encoded as the gatekeeper signed it, has the recorded digest, and a
// signature verifies under a key that was valid when the decision was
// issued (a key revoked before that time does not count; a key retired
// or revoked later still does). A record whose decision text was changed
// after signing (by the secret scrubber, say) fails.
func (ks *Keys) VerifyRecord(rec schemas.GateRecord) error {
	ref := rec.Signed
	if ref == nil {
		return errors.New("the record carries no signatures (the hook decided itself)")
	}
	if ref.PayloadType != schemas.GateDecisionType {
		return fmt.Errorf("payload type %q, want %q", ref.PayloadType, schemas.GateDecisionType)
	}
	payload, err := Payload(rec.Decision)
	if err != nil {
		return err
	}
	if digest(payload) != ref.PayloadSHA256 {
		return errors.New("the recorded decision does not match the signed payload's digest")
	}
	issued, err := time.Parse(time.RFC3339Nano, rec.Decision.IssuedAt)
	if err != nil {
		return fmt.Errorf("issued_at: %w", err)
	}
	// A key revoked before the decision was issued does not count; one
	// retired or revoked later still does.
	return ks.verifyAny(PAE(ref.PayloadType, payload), ref.Signatures, issued)
}

// VerifyFinding checks a finding record from the ledger as VerifyRecord
// checks a decision record: the finding, encoded as the gatekeeper signed
// it, has the recorded digest and a signature verifies under a key valid
// when it was issued.
func (ks *Keys) VerifyFinding(rec schemas.FindingRecord) error {
	ref := rec.Signed
	if ref == nil {
		return errors.New("the finding carries no signatures")
	}
	if ref.PayloadType != schemas.GateFindingType {
		return fmt.Errorf("payload type %q, want %q", ref.PayloadType, schemas.GateFindingType)
	}
	payload, err := FindingPayload(rec.Finding)
	if err != nil {
		return err
	}
	if digest(payload) != ref.PayloadSHA256 {
		return errors.New("the recorded finding does not match the signed payload's digest")
	}
	issued, err := time.Parse(time.RFC3339Nano, rec.Finding.IssuedAt)
	if err != nil {
		return fmt.Errorf("issued_at: %w", err)
	}
	return ks.verifyAny(PAE(ref.PayloadType, payload), ref.Signatures, issued)
}
