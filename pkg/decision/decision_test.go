package decision_test

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/decision"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/schemas"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

type fixture struct {
	keys   []schemas.Key
	signer *keyring.Signer
	set    *decision.Keys
}

func newFixture(t testing.TB, algorithm string) fixture {
	t.Helper()
	dir := keyring.Dir{Path: filepath.Join(t.TempDir(), "keys")}
	k, err := dir.Generate("v1", algorithm, t0.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	s, err := keyring.NewSigner([]schemas.Key{k}, dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal([]schemas.Key{k})
	set, err := decision.ParseKeys(raw)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{keys: []schemas.Key{k}, signer: s, set: set}
}

func goodDecision() schemas.GateDecision {
	return schemas.GateDecision{
		V: 1, DecisionID: "01KAB0000000000000000000AA", SessionID: "s1", HookEvent: "Stop", Nonce: "n-123",
		Decision: schemas.GateBlock, Reason: "run the tests", Source: schemas.SourceGatekeeper,
		IssuedAt: t0.Format(time.RFC3339Nano), ExpiresAt: t0.Add(30 * time.Second).Format(time.RFC3339Nano),
		LedgerHead: schemas.Position{N: 7, Hash: "sha256:" + strings.Repeat("a", 64)},
	}
}

var expect = decision.Expect{SessionID: "s1", HookEvent: "Stop", Nonce: "n-123", Now: t0.Add(time.Second), Skew: 5 * time.Second}

func sign(t *testing.T, s *keyring.Signer, payloadType string, d schemas.GateDecision) []byte {
	t.Helper()
	p, _ := json.Marshal(d)
	env, err := s.SignAt(t.Context(), t0, payloadType, p)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestSigstoreSignedDecisionsVerifyWithStdlibCrypto(t *testing.T) {
	for _, alg := range []string{keyring.ECDSA, keyring.Ed25519} {
		t.Run(alg, func(t *testing.T) {
			f := newFixture(t, alg)
			env := sign(t, f.signer, schemas.GateDecisionType, goodDecision())
			d, err := f.set.Verify(env, expect)
			if err != nil {
				t.Fatal(err)
			}
			if d.Decision != schemas.GateBlock || d.Reason != "run the tests" {
				t.Fatalf("decision %+v", d)
			}
		})
	}
}

func TestRejections(t *testing.T) {
	f := newFixture(t, keyring.ECDSA)
	other := newFixture(t, keyring.ECDSA) // same key id "v1", different key
	good := sign(t, f.signer, schemas.GateDecisionType, goodDecision())
	mutate := func(fn func(*schemas.GateDecision)) []byte {
		d := goodDecision()
		fn(&d)
		return sign(t, f.signer, schemas.GateDecisionType, d)
	}
	var env map[string]any
	_ = json.Unmarshal(good, &env)
	unsigned := func() []byte {
		e := map[string]any{"payloadType": env["payloadType"], "payload": env["payload"], "signatures": []any{}}
		b, _ := json.Marshal(e)
		return b
	}()
	tampered := func() []byte {
		d := goodDecision()
		d.Decision = schemas.GateAllow
		p, _ := json.Marshal(d)
		e := map[string]any{"payloadType": env["payloadType"], "payload": base64.StdEncoding.EncodeToString(p), "signatures": env["signatures"]}
		b, _ := json.Marshal(e)
		return b
	}()
	renamed := strings.Replace(string(good), `"keyid":"v1"`, `"keyid":"v9"`, 1)
	tests := []struct {
		name string
		env  []byte
		exp  decision.Expect
		want string
	}{
		{"not json", []byte("allow"), expect, "not a signed decision"},
		{"unsigned", unsigned, expect, "unsigned"},
		{"unknown key id", []byte(renamed), expect, `unknown key "v9"`},
		{"signed by a key the hook does not trust", sign(t, other.signer, schemas.GateDecisionType, goodDecision()), expect, "does not verify"},
		{"payload altered after signing", tampered, expect, "does not verify"},
		{"another payload type", sign(t, f.signer, schemas.AttestationFormat, goodDecision()), expect, "payload type"},
		{"replayed: other nonce", good, decision.Expect{SessionID: "s1", HookEvent: "Stop", Nonce: "n-999", Now: expect.Now}, "nonce mismatch"},
		{"other session", mutate(func(d *schemas.GateDecision) { d.SessionID = "s2" }), expect, "session"},
		{"other event", good, decision.Expect{SessionID: "s1", HookEvent: "PreToolUse", Nonce: "n-123", Now: expect.Now}, "not \"PreToolUse\""},
		{"expired", good, decision.Expect{SessionID: "s1", HookEvent: "Stop", Nonce: "n-123", Now: t0.Add(time.Minute)}, "expired"},
		{"issued in the future", mutate(func(d *schemas.GateDecision) { d.IssuedAt = t0.Add(time.Hour).Format(time.RFC3339Nano) }), expect, "future"},
		{"deny is no answer to Stop", mutate(func(d *schemas.GateDecision) { d.Decision = schemas.GateDeny }), expect, "not an answer"},
		{"oversized", make([]byte, decision.MaxEnvelope+1), expect, "exceeds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.set.Verify(tc.env, tc.exp)
			if !errors.Is(err, decision.ErrRejected) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrRejected containing %q", err, tc.want)
			}
		})
	}
}

func TestRevokedAndRetiredKeysDoNotCount(t *testing.T) {
	f := newFixture(t, keyring.ECDSA)
	env := sign(t, f.signer, schemas.GateDecisionType, goodDecision())
	for _, tc := range []struct {
		name string
		edit func(*schemas.Key)
		want string
	}{
		{"revoked", func(k *schemas.Key) { s := t0.Format(time.RFC3339Nano); k.RevokedAt = &s }, "revoked"},
		{"retired", func(k *schemas.Key) { s := t0.Format(time.RFC3339Nano); k.ValidUntil = &s }, "retired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := f.keys[0]
			tc.edit(&k)
			raw, _ := json.Marshal([]schemas.Key{k})
			set, err := decision.ParseKeys(raw)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := set.Verify(env, expect); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestLoadKeysRefusesBadFiles(t *testing.T) {
	f := newFixture(t, keyring.ECDSA)
	dir := t.TempDir()
	good, _ := json.Marshal(f.keys)
	path := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := decision.LoadKeys(path); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(path, 0o666)
	if _, err := decision.LoadKeys(path); err == nil || !strings.Contains(err.Error(), "writable") {
		t.Fatalf("world-writable key set accepted: %v", err)
	}
	for name, body := range map[string]string{
		"empty":         `[]`,
		"not json":      `{`,
		"bad pem":       `[{"keyid":"v1","algorithm":"ecdsa-p256-sha256","public_key_pem":"x","status":"active","valid_from":"2026-01-01T00:00:00Z"}]`,
		"bad algorithm": strings.Replace(string(good), keyring.ECDSA, "rsa", 1),
	} {
		if _, err := decision.ParseKeys([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := decision.LoadKeys(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestAllowed(t *testing.T) {
	for _, tc := range []struct {
		event, value string
		ok           bool
	}{
		{"Stop", "block", true}, {"Stop", "allow", true}, {"Stop", "deny", false}, {"Stop", "ask", false},
		{"PreToolUse", "deny", true}, {"PreToolUse", "ask", true}, {"PreToolUse", "block", false},
		{"SubagentStop", "block", true}, {"Notification", "block", false}, {"Notification", "allow", true},
	} {
		if got := decision.Allowed(tc.event, tc.value); got != tc.ok {
			t.Errorf("Allowed(%s, %s) = %v", tc.event, tc.value, got)
		}
	}
}

func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"payloadType":"application/vnd.claimcheck.gate-decision+json","payload":"e30=","signatures":[{"keyid":"v1","sig":"AAAA"}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	fx := newFixture(f, keyring.Ed25519)
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := fx.set.Verify(raw, expect)
		if err == nil {
			t.Fatalf("accepted an unsigned fuzz input: %+v", d)
		}
		if !errors.Is(err, decision.ErrRejected) {
			t.Fatalf("error does not wrap ErrRejected: %v", err)
		}
	})
}
