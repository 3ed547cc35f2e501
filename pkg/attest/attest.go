// Package attest makes and checks claimcheck attestations: in-toto Statement
// v1 documents whose subject is a session and the ledger range a verdict was
// computed over (with the digest of the range's last entry), wrapped in DSSE
// envelopes signed by the key ring. Verification pins the payload type and
// checks that the statement is internally consistent (subject, session,
// range, verdict) before anyone relies on it.
package attest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/oklog/ulid/v2"

	"github.com/claimcheck/claimcheck/pkg/canon"
	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/schemas"
)

// ErrInvalid is wrapped when an attestation is malformed or inconsistent.
var ErrInvalid = errors.New("invalid attestation")

// ID returns the attestation id of a claim request: a ULID with the
// request's time and entropy from its id, so that a redelivered request can
// never produce a second attestation.
func ID(requestID string) (string, error) {
	r, err := ulid.ParseStrict(requestID)
	if err != nil {
		return "", fmt.Errorf("request id %q: %w", requestID, err)
	}
	sum := sha256.Sum256([]byte("claimcheck attestation\x00" + requestID))
	var u ulid.ULID
	_ = u.SetTime(r.Time())
	_ = u.SetEntropy(sum[:10])
	return u.String(), nil
}

// SubjectName names a session's ledger range.
func SubjectName(session string, from, to uint64) string {
	return fmt.Sprintf("claimcheck:session:%s:%d-%d", session, from, to)
}

// Statement builds the statement of a PASS verdict recorded at entry.
func Statement(v schemas.Verdict, entry *schemas.Position, signedAt time.Time) schemas.Statement {
	return schemas.Statement{
		Type: schemas.StatementType,
		Subject: []schemas.Subject{{
			Name:   SubjectName(v.SessionID, v.Range.From, v.Range.To),
			Digest: map[string]string{"sha256": digest.Hex(v.Range.HeadHash)},
		}},
		PredicateType: schemas.PredicateType,
		Predicate: schemas.Predicate{
			AttestationID: v.AttestationID,
			Verdict:       v,
			VerdictEntry:  entry,
			SignedAt:      signedAt.UTC().Format(time.RFC3339Nano),
		},
	}
}

// Encode returns the statement's canonical bytes (the DSSE payload).
func Encode(st schemas.Statement) ([]byte, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return canon.Canonicalize(b)
}

// Sign encodes and signs a statement. It returns the envelope and the
// statement's digest.
func Sign(ctx context.Context, s *keyring.Signer, st schemas.Statement) ([]byte, string, error) {
	payload, err := Encode(st)
	if err != nil {
		return nil, "", err
	}
	at, err := time.Parse(time.RFC3339Nano, st.Predicate.SignedAt)
	if err != nil {
		return nil, "", fmt.Errorf("signed_at %q: %w", st.Predicate.SignedAt, err)
	}
	env, err := s.SignAt(ctx, at, schemas.AttestationFormat, payload)
	if err != nil {
		return nil, "", err
	}
	return env, digest.SHA256(payload), nil
}

// Checked is a verified attestation.
type Checked struct {
	Statement schemas.Statement
	KeyIDs    []string
	Digest    string // of the statement
}

// Verify checks an envelope against a key set. at is the time the
// signatures are judged at: the time the attestation was stored (trusted),
// or, when that is unknown (offline), the statement's own signed_at.
func Verify(set *keyring.Set, envelope []byte, at time.Time) (Checked, error) {
	var c Checked
	if at.IsZero() {
		st, err := peek(envelope)
		if err != nil {
			return c, err
		}
		if at, err = time.Parse(time.RFC3339Nano, st.Predicate.SignedAt); err != nil {
			return c, fmt.Errorf("%w: signed_at %q: %w", ErrInvalid, st.Predicate.SignedAt, err)
		}
	}
	v, err := set.Verify(envelope, schemas.AttestationFormat, at)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(v.Payload, &c.Statement, json.RejectUnknownMembers(true)); err != nil {
		return c, fmt.Errorf("%w: statement: %w", ErrInvalid, err)
	}
	if err := Consistent(c.Statement); err != nil {
		return c, err
	}
	c.KeyIDs, c.Digest = v.KeyIDs, digest.SHA256(v.Payload)
	return c, nil
}

// peek decodes the statement without checking signatures (to learn its
// claimed time).
func peek(envelope []byte) (schemas.Statement, error) {
	var env struct {
		Payload []byte `json:"payload"`
	}
	var st schemas.Statement
	if err := json.Unmarshal(envelope, &env, json.RejectUnknownMembers(false)); err != nil {
		return st, fmt.Errorf("%w: not a DSSE envelope: %w", ErrInvalid, err)
	}
	if err := json.Unmarshal(env.Payload, &st, json.RejectUnknownMembers(false)); err != nil {
		return st, fmt.Errorf("%w: statement: %w", ErrInvalid, err)
	}
	return st, nil
}

// Consistent checks what a signature cannot: that the statement says one
// thing about one session and range.
func Consistent(st schemas.Statement) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	v := st.Predicate.Verdict
	switch {
	case st.Type != schemas.StatementType:
		return bad("_type %q", st.Type)
	case st.PredicateType != schemas.PredicateType:
		return bad("predicateType %q", st.PredicateType)
	case len(st.Subject) != 1:
		return bad("%d subjects, want 1", len(st.Subject))
	case v.Verdict != schemas.Pass:
		return bad("verdict %s: only PASS verdicts are attested", v.Verdict)
	case st.Predicate.AttestationID == "" || st.Predicate.AttestationID != v.AttestationID:
		return bad("attestation id %q does not match the verdict's %q", st.Predicate.AttestationID, v.AttestationID)
	}
	want := SubjectName(v.SessionID, v.Range.From, v.Range.To)
	if st.Subject[0].Name != want {
		return bad("subject %q does not name the verdict's session and range (%s)", st.Subject[0].Name, want)
	}
	if d := st.Subject[0].Digest["sha256"]; d == "" || "sha256:"+d != v.Range.HeadHash {
		return bad("subject digest %q is not the range's head hash %s", d, v.Range.HeadHash)
	}
	if id, err := ID(v.RequestID); err != nil || id != v.AttestationID {
		return bad("attestation id %s does not belong to request %s", v.AttestationID, v.RequestID)
	}
	if !strings.HasPrefix(v.Policy.Digest, digest.Prefix) {
		return bad("no policy digest")
	}
	return nil
}
