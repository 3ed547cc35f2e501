// Package bundle writes and checks an attestation bundle: everything an
// outsider needs to check one attestation offline, with no NATS and no
// data directory: the DSSE envelope, the public keys with their windows,
// and, for every ledger entry the attestation cites, a c2sp.org/tlog-proof
// of the LEDGER message that holds it (the message in the proof's extra
// data) against one checkpoint of the ledger's Merkle tree with its
// witnesses' cosignatures.
//
// What the outsider trusts is theirs to pin: the keys' fingerprints (from
// the operator), and the witnesses' keys (--witness-key), whose
// cosignatures show that the checkpoint is the one everybody was shown.
package bundle

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	tnote "github.com/transparency-dev/formats/note"
	tproof "github.com/transparency-dev/formats/proof"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/claimcheck/claimcheck/pkg/attest"
	"github.com/claimcheck/claimcheck/pkg/chain"
	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/transparency"
	"github.com/claimcheck/claimcheck/schemas"
)

// Format names this bundle format.
const Format = "claimcheck.dev/bundle/v1"

// ErrInvalid is wrapped by every reason a bundle does not check.
var ErrInvalid = errors.New("bundle does not check")

// Bundle is the file `claimcheck attest bundle` writes.
type Bundle struct {
	Format      string         `json:"format"`
	Attestation jsontext.Value `json:"attestation"` // the DSSE envelope, as stored
	Keys        []schemas.Key  `json:"keys"`        // the registry's public keys with their windows
	Origin      string         `json:"origin"`      // the ledger's log
	Proofs      []string       `json:"proofs"`      // c2sp.org/tlog-proofs of the messages holding the cited entries
}

// Cited are the ledger positions an attestation's statement cites: the
// contract, the matched entries, the verdict's own entry and the head of
// the range it was decided over.
func Cited(st schemas.Statement) []schemas.Position {
	v := st.Predicate.Verdict
	var out []schemas.Position
	add := func(p schemas.Position) {
		if p.N > 0 && !slices.ContainsFunc(out, func(o schemas.Position) bool { return o.N == p.N }) {
			out = append(out, p)
		}
	}
	if v.Contract != nil {
		add(*v.Contract)
	}
	for _, m := range v.Matched {
		add(m)
	}
	if e := st.Predicate.VerdictEntry; e != nil {
		add(*e)
	}
	add(schemas.Position{N: v.Range.To, Hash: v.Range.HeadHash})
	slices.SortFunc(out, func(a, b schemas.Position) int { return int(a.N) - int(b.N) })
	return out
}

// Options are what the outsider requires.
type Options struct {
	WitnessKeys  []string // cosignature/v1 verifier keys whose cosignatures count
	MinWitnesses int
}

// Report is what a bundle proved.
type Report struct {
	AttestationID string
	Session       string
	Claim         string
	Validator     string
	Entries       []uint64 // the cited entries found in the proofs
	Checkpoint    tlog.Tree
	Witnesses     []string
	KeyIDs        []string
}

// Verify checks a bundle: the attestation's signatures under its keys at
// its signing time; each proof's checkpoint under the same keys (the log
// signs with the registry's), with MinWitnesses cosignatures of the
// WitnessKeys; each proof's message at its index under the root; each
// cited entry in one of the messages, its stored bytes hashing to the hash
// the attestation cites. Every failure names what failed.
func Verify(raw []byte, o Options) (Report, error) {
	var rep Report
	var b Bundle
	if err := json.Unmarshal(raw, &b, json.RejectUnknownMembers(true)); err != nil {
		return rep, fmt.Errorf("%w: not a bundle: %w", ErrInvalid, err)
	}
	if b.Format != Format {
		return rep, fmt.Errorf("%w: format %q, want %q", ErrInvalid, b.Format, Format)
	}
	set, err := keyring.NewSet(b.Keys)
	if err != nil {
		return rep, fmt.Errorf("%w: keys: %w", ErrInvalid, err)
	}
	if err := canonicalEnvelope(b.Attestation); err != nil {
		return rep, fmt.Errorf("%w: the attestation: %w", ErrInvalid, err)
	}
	c, err := attest.Verify(set, b.Attestation, time.Time{})
	if err != nil {
		return rep, fmt.Errorf("%w: the attestation: %w", ErrInvalid, err)
	}
	v := c.Statement.Predicate.Verdict
	rep.AttestationID, rep.Session, rep.Claim, rep.Validator, rep.KeyIDs = c.Statement.Predicate.AttestationID, v.SessionID, v.Claim,
		v.Validator, c.KeyIDs
	logKeys, err := transparency.LogVerifiers(b.Origin, b.Keys)
	if err != nil {
		return rep, fmt.Errorf("%w: the log's keys: %w", ErrInvalid, err)
	}
	var wvs []note.Verifier
	for _, k := range o.WitnessKeys {
		wv, err := tnote.NewVerifierForCosignatureV1(k)
		if err != nil {
			return rep, fmt.Errorf("witness key %q: %w", k, err)
		}
		wvs = append(wvs, wv)
	}
	found := map[uint64]string{} // n → hash of the session's entries in the proofs
	var records []entry          // the rotator's key records in the proofs
	var checkpoint []byte
	for i, text := range b.Proofs {
		cp, entries, err := checkProof([]byte(text), b.Origin, logKeys, wvs)
		if err != nil {
			return rep, fmt.Errorf("%w: proof %d: %w", ErrInvalid, i+1, err)
		}
		if checkpoint == nil {
			checkpoint, rep.Checkpoint, rep.Witnesses = cp.Note, cp.Tree, cp.Witnesses
		} else if !bytes.Equal(checkpoint, cp.Note) {
			return rep, fmt.Errorf("%w: proof %d is against another checkpoint than proof 1", ErrInvalid, i+1)
		}
		for _, e := range entries {
			switch {
			case e.SessionID == v.SessionID:
				found[e.N] = e.Hash
			case e.Chain == schemas.RotatorChain:
				records = append(records, e)
			}
		}
	}
	if err := keysRecorded(b.Keys, records); err != nil {
		return rep, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(rep.Witnesses) < o.MinWitnesses {
		return rep, fmt.Errorf("%w: the checkpoint has %d cosignature(s) of the witnesses given, %d required", ErrInvalid,
			len(rep.Witnesses), o.MinWitnesses)
	}
	for _, p := range Cited(c.Statement) {
		h, ok := found[p.N]
		switch {
		case !ok:
			return rep, fmt.Errorf("%w: entry %d of session %s, which the attestation cites, is in none of the proofs", ErrInvalid, p.N,
				v.SessionID)
		case h != p.Hash:
			return rep, fmt.Errorf("%w: entry %d of session %s hashes to %s, the attestation cites %s", ErrInvalid, p.N, v.SessionID,
				h, p.Hash)
		}
		rep.Entries = append(rep.Entries, p.N)
	}
	return rep, nil
}

// keysRecorded checks each key of the bundle against the log: its
// fingerprint is its public key's, and the rotator's records in the proofs
// say the same algorithm, fingerprint and window (valid from, valid until,
// revoked at). A bundle cannot show that no later record exists (a
// revocation after the checkpoint, or one left out): ask the operator or
// the log for a key's current state.
func keysRecorded(keys []schemas.Key, records []entry) error {
	byKey := map[string]map[string]keyRecord{} // keyid → record type → record
	for _, r := range records {
		var k keyRecord
		if err := json.Unmarshal([]byte(r.Payload), &k, json.RejectUnknownMembers(false)); err != nil {
			return fmt.Errorf("the rotator's record %d: %w", r.N, err)
		}
		if byKey[k.KeyID] == nil {
			byKey[k.KeyID] = map[string]keyRecord{}
		}
		byKey[k.KeyID][r.HookEvent] = k
	}
	same := func(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	for _, k := range keys {
		fp, err := keyring.Fingerprint(k.PublicKeyPEM)
		if err != nil || fp != k.Fingerprint {
			return fmt.Errorf("key %s: its fingerprint %s is not its public key's (%s)", k.KeyID, k.Fingerprint, fp)
		}
		statuses := []string{keyring.Active, keyring.Retired, keyring.Revoked}
		if (k.Status == keyring.Revoked) != (k.RevokedAt != nil) || !slices.Contains(statuses, k.Status) {
			return fmt.Errorf("key %s: status %q with revoked_at %v", k.KeyID, k.Status, k.RevokedAt)
		}
		rec, ok := byKey[k.KeyID][schemas.RotatorKeyRotated]
		if !ok {
			return fmt.Errorf("key %s: the log's record of it (KeyRotated) is in none of the proofs", k.KeyID)
		}
		if rec.Algorithm != k.Algorithm || rec.Fingerprint != k.Fingerprint || rec.ValidFrom != k.ValidFrom {
			return fmt.Errorf("key %s: %s %s from %s, the log recorded %s %s from %s", k.KeyID, k.Algorithm, k.Fingerprint, k.ValidFrom,
				rec.Algorithm, rec.Fingerprint, rec.ValidFrom)
		}
		for kind, at := range map[string]*string{schemas.RotatorKeyRetired: k.ValidUntil, schemas.RotatorKeyRevoked: k.RevokedAt} {
			rec, ok := byKey[k.KeyID][kind]
			got := rec.ValidUntil
			if kind == schemas.RotatorKeyRevoked {
				got = rec.RevokedAt
			}
			if at != nil && (!ok || !same(at, got)) {
				return fmt.Errorf("key %s: its %s time %s is not the log's (%v)", k.KeyID, kind, *at, got)
			}
		}
	}
	return nil
}

// entry is what a bundle reads of a ledger entry.
type entry struct {
	Chain     string `json:"chain"`
	SessionID string `json:"session_id"`
	N         uint64 `json:"n"`
	Hash      string `json:"hash"`
	HookEvent string `json:"hook_event"`
	Payload   string `json:"payload"`
}

// keyRecord is the payload of the rotator's key records (services/rotator
// KeyChange): the log's account of each key's window.
type keyRecord struct {
	KeyID       string  `json:"keyid"`
	Algorithm   string  `json:"algorithm"`
	Fingerprint string  `json:"fingerprint"`
	ValidFrom   string  `json:"valid_from"`
	ValidUntil  *string `json:"valid_until"`
	RevokedAt   *string `json:"revoked_at"`
}

// checkProof checks one tlog-proof and returns its checkpoint and the
// entries its message holds, each entry's hash recomputed from its bytes.
func checkProof(raw []byte, origin string, logKeys, witnesses []note.Verifier) (*transparency.Checkpoint, []entry, error) {
	var p tproof.TLogProof
	if err := p.Unmarshal(raw); err != nil {
		return nil, nil, fmt.Errorf("not a tlog-proof: %w", err)
	}
	// One proof has one text: base64 with other padding bits, say, is not
	// it (the decoder would read it as the same bytes).
	if !bytes.Equal(p.Marshal(), raw) {
		return nil, nil, errors.New("the proof is not in its canonical form (c2sp.org/tlog-proof, standard base64)")
	}
	cp, err := transparency.Open(p.Checkpoint, origin, logKeys, witnesses)
	if err != nil {
		return nil, nil, err
	}
	if int64(p.Index) >= cp.Tree.N {
		return nil, nil, fmt.Errorf("index %d is outside the checkpoint of %d", p.Index, cp.Tree.N)
	}
	proof := make(tlog.RecordProof, len(p.Hashes))
	for i, h := range p.Hashes {
		proof[i] = h
	}
	if err := tlog.CheckRecord(proof, cp.Tree.N, cp.Tree.Hash, int64(p.Index), transparency.LeafHash(p.ExtraData)); err != nil {
		return nil, nil, fmt.Errorf("LEDGER message %d is not leaf %d of the checkpoint of %d: %w", p.Index+1, p.Index, cp.Tree.N, err)
	}
	var out []entry
	for _, raw := range ledger.SplitBlock(p.ExtraData) {
		var e entry
		if err := json.Unmarshal(raw, &e, json.RejectUnknownMembers(false)); err != nil {
			return nil, nil, fmt.Errorf("LEDGER message %d holds something that is not an entry: %w", p.Index+1, err)
		}
		h, err := chain.Hash(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("LEDGER message %d: entry %d of %s: %w", p.Index+1, e.N, e.SessionID, err)
		}
		if h != e.Hash {
			return nil, nil, fmt.Errorf("LEDGER message %d: entry %d of %s hashes to %s, not to its hash %s", p.Index+1, e.N, e.SessionID,
				h, e.Hash)
		}
		out = append(out, e)
	}
	return cp, out, nil
}

// canonicalEnvelope requires the envelope's base64 fields in their one
// standard form: the DSSE decoder reads other padding bits as the same
// bytes, and a bundle must have one text.
func canonicalEnvelope(env []byte) error {
	var e struct {
		Payload    string `json:"payload"`
		Signatures []struct {
			Sig string `json:"sig"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(env, &e, json.RejectUnknownMembers(false)); err != nil {
		return fmt.Errorf("not a DSSE envelope: %w", err)
	}
	fields := []string{e.Payload}
	for _, s := range e.Signatures {
		fields = append(fields, s.Sig)
	}
	for _, f := range fields {
		if b, err := base64.StdEncoding.Strict().DecodeString(f); err != nil || base64.StdEncoding.EncodeToString(b) != f {
			return errors.New("a base64 field of the envelope is not in its standard form")
		}
	}
	return nil
}

// Marshal writes a bundle.
func Marshal(b Bundle) ([]byte, error) {
	b.Format = Format
	return json.Marshal(b, jsontext.Multiline(true), jsontext.WithIndent("  "))
}
