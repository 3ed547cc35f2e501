// Package decision checks signed gate decisions the way claimcheck-hook must:
// with the standard library's crypto only (the hook stays lean: no sigstore,
// no NATS client), against a key set the hook trusts locally, pinned to the
// request it made (session, event, nonce) and to a short validity.
//
// The gatekeeper signs decisions through keyring.Signer (sigstore/sigstore):
// a DSSE envelope whose payload type is schemas.GateDecisionType. ECDSA
// signatures are ASN.1 over SHA-256 of the DSSE pre-authentication encoding,
// Ed25519 signatures are over the encoding itself, as sigstore makes them.
package decision

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/schemas"
)

// ErrRejected is wrapped by every verification failure: the hook must not
// honour the decision (it blocks or denies instead).
var ErrRejected = errors.New("gate decision rejected")

// Key algorithms (the registry's names).
const (
	ECDSA   = "ecdsa-p256-sha256"
	Ed25519 = "ed25519"
)

// MaxEnvelope bounds a reply the hook will parse.
const MaxEnvelope = 64 << 10

// Keys is a trusted key set.
type Keys struct {
	keys map[string]trusted
}

type trusted struct {
	meta  schemas.Key
	ecdsa *ecdsa.PublicKey
	ed    ed25519.PublicKey
	from  time.Time
	until *time.Time
	rev   *time.Time
}

// ParseKeys reads a key set as `claimcheck keys export` prints it.
func ParseKeys(raw []byte) (*Keys, error) {
	var list []schemas.Key
	if err := json.Unmarshal(raw, &list, json.RejectUnknownMembers(false)); err != nil {
		return nil, fmt.Errorf("key set: %w", err)
	}
	if len(list) == 0 {
		return nil, errors.New("key set: empty")
	}
	ks := &Keys{keys: make(map[string]trusted, len(list))}
	for _, k := range list {
		t, err := parseKey(k)
		if err != nil {
			return nil, fmt.Errorf("key set: key %q: %w", k.KeyID, err)
		}
		ks.keys[k.KeyID] = t
	}
	return ks, nil
}

// LoadKeys reads a key set file. The file must not be writable by others
// (whoever can write it decides which gate answers the hook believes).
func LoadKeys(path string) (*Keys, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("gate key set: %w", err)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("gate key set %s is writable by group or others (mode %v)", path, fi.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gate key set: %w", err)
	}
	ks, err := ParseKeys(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ks, nil
}

func parseKey(k schemas.Key) (trusted, error) {
	t := trusted{meta: k}
	from, err := time.Parse(time.RFC3339Nano, k.ValidFrom)
	if err != nil {
		return t, fmt.Errorf("valid_from %q", k.ValidFrom)
	}
	t.from = from
	for _, f := range []struct {
		s   *string
		dst **time.Time
		nm  string
	}{{k.ValidUntil, &t.until, "valid_until"}, {k.RevokedAt, &t.rev, "revoked_at"}} {
		if f.s == nil {
			continue
		}
		v, err := time.Parse(time.RFC3339Nano, *f.s)
		if err != nil {
			return t, fmt.Errorf("%s %q", f.nm, *f.s)
		}
		*f.dst = &v
	}
	block, _ := pem.Decode([]byte(k.PublicKeyPEM))
	if block == nil {
		return t, errors.New("public_key_pem is not PEM")
	}
	pub, err := parsePublicKey(block.Bytes)
	if err != nil {
		return t, fmt.Errorf("public key: %w", err)
	}
	switch k.Algorithm {
	case ECDSA:
		p, ok := pub.(*ecdsa.PublicKey)
		if !ok {
			return t, fmt.Errorf("algorithm %s but a %T key", k.Algorithm, pub)
		}
		t.ecdsa = p
	case Ed25519:
		p, ok := pub.(ed25519.PublicKey)
		if !ok {
			return t, fmt.Errorf("algorithm %s but a %T key", k.Algorithm, pub)
		}
		t.ed = p
	default:
		return t, fmt.Errorf("unknown algorithm %q", k.Algorithm)
	}
	return t, nil
}

// ValidAt counts the keys whose signatures made at t would count.
func (ks *Keys) ValidAt(t time.Time) int {
	n := 0
	for _, k := range ks.keys {
		if k.validAt(t) == nil {
			n++
		}
	}
	return n
}

// validAt reports whether a signature by k made at t counts.
func (k trusted) validAt(t time.Time) error {
	switch {
	case t.Before(k.from):
		return fmt.Errorf("key %s is not valid before %s", k.meta.KeyID, k.meta.ValidFrom)
	case k.rev != nil && !t.Before(*k.rev):
		return fmt.Errorf("key %s was revoked at %s", k.meta.KeyID, *k.meta.RevokedAt)
	case k.until != nil && !t.Before(*k.until):
		return fmt.Errorf("key %s was retired at %s", k.meta.KeyID, *k.meta.ValidUntil)
	}
	return nil
}

func (k trusted) verify(msg, sig []byte) bool {
	if k.ecdsa != nil {
		d := sha256.Sum256(msg)
		return ecdsa.VerifyASN1(k.ecdsa, d[:], sig)
	}
	return ed25519.Verify(k.ed, msg, sig)
}

// PAE is DSSE's pre-authentication encoding.
func PAE(payloadType string, payload []byte) []byte {
	var b strings.Builder
	b.Grow(len(payloadType) + len(payload) + 32)
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(payload)))
	b.WriteByte(' ')
	b.Write(payload)
	return []byte(b.String())
}

// Expect is what the hook asked: the decision must answer exactly this.
type Expect struct {
	SessionID string
	HookEvent string
	Nonce     string
	Now       time.Time
	// Skew tolerates clocks ahead of the hook's by this much.
	Skew time.Duration
}

type envelope struct {
	PayloadType string `json:"payloadType"`
	Payload     string `json:"payload"`
	Signatures  []struct {
		KeyID string `json:"keyid"`
		Sig   string `json:"sig"`
	} `json:"signatures"`
}

// Verify checks a signed decision and returns it. It fails, wrapping
// ErrRejected with the reason, unless the envelope has the gate decision
// payload type, at least one signature verifies under a trusted key valid
// now, and the decision answers exp: same session, event and nonce, issued
// no later than now+skew, not expired, with a decision value that the event
// allows.
func (ks *Keys) Verify(raw []byte, exp Expect) (schemas.GateDecision, error) {
	var d schemas.GateDecision
	if len(raw) > MaxEnvelope {
		return d, fmt.Errorf("%w: reply of %d bytes exceeds %d", ErrRejected, len(raw), MaxEnvelope)
	}
	var env envelope
	if err := json.Unmarshal(raw, &env, json.RejectUnknownMembers(false)); err != nil {
		return d, fmt.Errorf("%w: not a signed decision (DSSE envelope): %w", ErrRejected, err)
	}
	if env.PayloadType != schemas.GateDecisionType {
		return d, fmt.Errorf("%w: payload type %q, want %q", ErrRejected, env.PayloadType, schemas.GateDecisionType)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return d, fmt.Errorf("%w: payload is not base64", ErrRejected)
	}
	if len(env.Signatures) == 0 {
		return d, fmt.Errorf("%w: unsigned", ErrRejected)
	}
	sigs := make([]schemas.Signature, len(env.Signatures))
	for i, s := range env.Signatures {
		sigs[i] = schemas.Signature{KeyID: s.KeyID, Sig: s.Sig}
	}
	if err := ks.verifyAny(PAE(env.PayloadType, payload), sigs, exp.Now); err != nil {
		return d, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	if err := json.Unmarshal(payload, &d, json.RejectUnknownMembers(false)); err != nil {
		return d, fmt.Errorf("%w: payload: %w", ErrRejected, err)
	}
	if err := check(d, exp); err != nil {
		return schemas.GateDecision{}, err
	}
	return d, nil
}

// verifyAny succeeds when one signature verifies over pae under a trusted
// key valid at t; otherwise it says what was wrong with each.
func (ks *Keys) verifyAny(pae []byte, sigs []schemas.Signature, t time.Time) error {
	var problems []string
	for _, s := range sigs {
		k, known := ks.keys[s.KeyID]
		if !known {
			problems = append(problems, fmt.Sprintf("signature by unknown key %q", s.KeyID))
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(s.Sig)
		if err != nil || !k.verify(pae, sig) {
			problems = append(problems, fmt.Sprintf("signature by %s does not verify", s.KeyID))
			continue
		}
		if err := k.validAt(t); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		return nil
	}
	if len(problems) == 0 {
		return errors.New("unsigned")
	}
	return errors.New(strings.Join(problems, "; "))
}

// check compares a decision with the request it must answer.
func check(d schemas.GateDecision, exp Expect) error {
	switch {
	case d.V != 1:
		return fmt.Errorf("%w: version %d", ErrRejected, d.V)
	case d.SessionID != exp.SessionID:
		return fmt.Errorf("%w: decision for session %q, not %q", ErrRejected, d.SessionID, exp.SessionID)
	case d.HookEvent != exp.HookEvent:
		return fmt.Errorf("%w: decision for %q, not %q", ErrRejected, d.HookEvent, exp.HookEvent)
	case d.Nonce != exp.Nonce:
		return fmt.Errorf("%w: nonce mismatch (a replayed or foreign decision)", ErrRejected)
	}
	issued, err1 := time.Parse(time.RFC3339Nano, d.IssuedAt)
	expires, err2 := time.Parse(time.RFC3339Nano, d.ExpiresAt)
	switch {
	case err1 != nil || err2 != nil:
		return fmt.Errorf("%w: bad issued_at or expires_at", ErrRejected)
	case issued.After(exp.Now.Add(exp.Skew)):
		return fmt.Errorf("%w: issued in the future (%s)", ErrRejected, d.IssuedAt)
	case !exp.Now.Before(expires):
		return fmt.Errorf("%w: expired at %s (stale)", ErrRejected, d.ExpiresAt)
	}
	if !Allowed(exp.HookEvent, d.Decision) {
		return fmt.Errorf("%w: decision %q is not an answer to %s", ErrRejected, d.Decision, exp.HookEvent)
	}
	return nil
}

// Allowed reports whether value answers hookEvent.
func Allowed(hookEvent, value string) bool {
	switch hookEvent {
	case schemas.HookStop, schemas.HookSubagentStop:
		return value == schemas.GateAllow || value == schemas.GateBlock
	case schemas.HookPreToolUse:
		return value == schemas.GateAllow || value == schemas.GateDeny || value == schemas.GateAsk
	case schemas.HookPostToolUse:
		return value == schemas.GateAllow || value == schemas.GateBlock
	}
	return value == schemas.GateAllow
}
