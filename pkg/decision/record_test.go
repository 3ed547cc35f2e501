package decision_test

import (
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/schemas"
)

func signedRecord(t *testing.T, f fixture, d schemas.GateDecision) schemas.GateRecord {
	t.Helper()
	p, err := decision.Payload(d)
	if err != nil {
		t.Fatal(err)
	}
	env, err := f.signer.SignAt(t.Context(), t0, schemas.GateDecisionType, p)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := decision.Ref(env, d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(mustJSON(t, ref), "payload\"") {
		t.Fatalf("the ref repeats the payload: %s", mustJSON(t, ref))
	}
	return schemas.GateRecord{SessionID: d.SessionID, HookEvent: schemas.GateDecisionEvent, Decision: d, Signed: ref}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRecordedDecisionsVerifyFromTheLedgerAlone(t *testing.T) {
	for _, alg := range []string{keyring.ECDSA, keyring.Ed25519} {
		t.Run(alg, func(t *testing.T) {
			f := newFixture(t, alg)
			rec := signedRecord(t, f, goodDecision())
			// Through JSON, as ingest stores it.
			var back schemas.GateRecord
			if err := json.Unmarshal([]byte(mustJSON(t, rec)), &back); err != nil {
				t.Fatal(err)
			}
			if err := f.set.VerifyRecord(back); err != nil {
				t.Fatalf("VerifyRecord: %v", err)
			}
		})
	}
}

func TestRecordRejections(t *testing.T) {
	f := newFixture(t, keyring.ECDSA)
	other := newFixture(t, keyring.ECDSA)
	for _, tc := range []struct {
		name string
		edit func(*schemas.GateRecord)
		keys *decision.Keys
		want string
	}{
		{"decision text edited (e.g. scrubbed)", func(r *schemas.GateRecord) { r.Decision.Reason = "[REDACTED]" }, f.set, "does not match"},
		{"decision value flipped", func(r *schemas.GateRecord) { r.Decision.Decision = schemas.GateAllow }, f.set, "does not match"},
		{"no signatures", func(r *schemas.GateRecord) { r.Signed.Signatures = nil }, f.set, "unsigned"},
		{"no ref", func(r *schemas.GateRecord) { r.Signed = nil }, f.set, "no signatures"},
		{"other payload type", func(r *schemas.GateRecord) { r.Signed.PayloadType = schemas.AttestationFormat }, f.set, "payload type"},
		{"signature bytes changed", func(r *schemas.GateRecord) {
			s := []byte(r.Signed.Signatures[0].Sig)
			s[10] ^= 1
			r.Signed.Signatures[0].Sig = string(s)
		}, f.set, "does not verify"},
		{"unknown key id", func(r *schemas.GateRecord) { r.Signed.Signatures[0].KeyID = "v9" }, f.set, "unknown key"},
		{"same key id, another key", func(*schemas.GateRecord) {}, other.set, "does not verify"},
		{"issued_at unreadable", func(r *schemas.GateRecord) { r.Decision.IssuedAt = "yesterday" }, f.set, "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := signedRecord(t, f, goodDecision())
			tc.edit(&rec)
			if err := tc.keys.VerifyRecord(rec); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestRecordKeyValidityIsJudgedAtIssue(t *testing.T) {
	f := newFixture(t, keyring.ECDSA)
	rec := signedRecord(t, f, goodDecision())
	for _, tc := range []struct {
		name string
		edit func(*schemas.Key)
		ok   bool
	}{
		{"revoked before issue", func(k *schemas.Key) { s := t0.Add(-time.Minute).Format(time.RFC3339Nano); k.RevokedAt = &s }, false},
		{"revoked after issue", func(k *schemas.Key) { s := t0.Add(time.Hour).Format(time.RFC3339Nano); k.RevokedAt = &s }, true},
		{"retired after issue", func(k *schemas.Key) { s := t0.Add(time.Hour).Format(time.RFC3339Nano); k.ValidUntil = &s }, true},
		{"retired before issue", func(k *schemas.Key) { s := t0.Add(-time.Minute).Format(time.RFC3339Nano); k.ValidUntil = &s }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := f.keys[0]
			tc.edit(&k)
			raw, _ := json.Marshal([]schemas.Key{k})
			set, err := decision.ParseKeys(raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := set.VerifyRecord(rec); (err == nil) != tc.ok {
				t.Fatalf("got %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestRefRefusesAnEnvelopeForAnotherDecision(t *testing.T) {
	f := newFixture(t, keyring.ECDSA)
	d := goodDecision()
	p, _ := decision.Payload(d)
	env, err := f.signer.SignAt(t.Context(), t0, schemas.GateDecisionType, p)
	if err != nil {
		t.Fatal(err)
	}
	d.Reason = "something else"
	if _, err := decision.Ref(env, d); err == nil {
		t.Fatal("Ref accepted an envelope whose payload is another decision")
	}
	if _, err := decision.Ref([]byte("{"), d); err == nil {
		t.Fatal("Ref accepted a broken envelope")
	}
}
