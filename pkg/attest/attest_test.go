package attest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/keyring/keyringtest"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/schemas/validation"
)

func verdict(t testing.TB) schemas.Verdict {
	req := "01JDB3H5KX0000000000000001"
	att, err := ID(req)
	if err != nil {
		t.Fatal(err)
	}
	return schemas.Verdict{V: 1, RequestID: req, SessionID: "sess-1", Claim: "done", Validator: "test_pass",
		Args: []byte(`{"command_substring":"npm test"}`), Verdict: schemas.Pass, Reasons: []string{},
		Matched: []schemas.Position{{N: 5, Hash: "sha256:" + strings.Repeat("5", 64)}},
		Range:   schemas.Range{From: 1, To: 6, HeadHash: "sha256:" + strings.Repeat("6", 64)},
		Policy:  schemas.PolicyRef{Version: "p1", Digest: "sha256:" + strings.Repeat("a", 64)}, Verifier: "test", AttestationID: att}
}

func setup(t *testing.T) (*keyring.Signer, *keyring.Set, schemas.Key) {
	k := keyringtest.New(t, filepath.Join(t.TempDir(), "k"), keyring.ECDSA, time.Now())
	return k.Signer, k.Set, k.Key
}

func TestSignVerifyAndSchema(t *testing.T) {
	s, set, _ := setup(t)
	v := verdict(t)
	st := Statement(v, &schemas.Position{N: 8, Hash: "sha256:" + strings.Repeat("8", 64)}, time.Now())
	env, dig, err := Sign(context.Background(), s, st)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Verify(set, env, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c.Digest != dig || c.KeyIDs[0] != "v1" || c.Statement.Predicate.Verdict.SessionID != "sess-1" {
		t.Fatalf("checked %+v", c)
	}
	// Offline: judged at the statement's own signed_at.
	if _, err := Verify(set, env, time.Time{}); err != nil {
		t.Fatal(err)
	}
	val, _ := validation.New()
	payload, _ := Encode(st)
	if err := val.Validate(schemas.StatementV1, payload); err != nil {
		t.Fatalf("statement invalid: %v", err)
	}
}

func TestInconsistentStatementsAreRejected(t *testing.T) {
	s, set, _ := setup(t)
	for name, mutate := range map[string]func(*schemas.Statement){
		"other session in subject": func(st *schemas.Statement) { st.Subject[0].Name = SubjectName("sess-2", 1, 6) },
		"other range":              func(st *schemas.Statement) { st.Subject[0].Name = SubjectName("sess-1", 1, 9) },
		"other head":               func(st *schemas.Statement) { st.Subject[0].Digest["sha256"] = strings.Repeat("7", 64) },
		"a FAIL":                   func(st *schemas.Statement) { st.Predicate.Verdict.Verdict = schemas.Fail },
		"foreign attestation id": func(st *schemas.Statement) {
			st.Predicate.AttestationID = "01JDB3H5KX0000000000000009"
			st.Predicate.Verdict.AttestationID = "01JDB3H5KX0000000000000009"
		},
	} {
		st := Statement(verdict(t), nil, time.Now())
		mutate(&st)
		env, _, err := Sign(context.Background(), s, st)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(set, env, time.Now()); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// ecdsaVerifier is an independent DSSE verifier: Go's crypto/ecdsa, no
// sigstore, checked through go-securesystemslib's envelope verifier.
type ecdsaVerifier struct {
	pub   *ecdsa.PublicKey
	keyID string
}

func (v ecdsaVerifier) Verify(_ context.Context, data, sig []byte) error {
	h := sha256.Sum256(data)
	if !ecdsa.VerifyASN1(v.pub, h[:], sig) {
		return errors.New("bad signature")
	}
	return nil
}
func (v ecdsaVerifier) KeyID() (string, error)   { return v.keyID, nil }
func (v ecdsaVerifier) Public() crypto.PublicKey { return v.pub }

func TestIndependentDSSEVerifierAccepts(t *testing.T) {
	s, _, k := setup(t)
	env, _, err := Sign(context.Background(), s, Statement(verdict(t), nil, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := cryptoutils.UnmarshalPEMToPublicKey([]byte(k.PublicKeyPEM))
	ev, err := dsse.NewEnvelopeVerifier(ecdsaVerifier{pub: pub.(*ecdsa.PublicKey), keyID: k.KeyID})
	if err != nil {
		t.Fatal(err)
	}
	var e dsse.Envelope
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Verify(context.Background(), &e); err != nil {
		t.Fatalf("independent DSSE verification failed: %v", err)
	}
	e.Payload = e.Payload[:len(e.Payload)-4] + "AAAA"
	if _, err := ev.Verify(context.Background(), &e); err == nil {
		t.Fatal("independent verifier accepted a changed payload")
	}
}
