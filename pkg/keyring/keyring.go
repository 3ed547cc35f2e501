// Package keyring holds claimcheck's signing keys: a registry of versioned
// public keys with validity windows (a JetStream KV bucket, every change a
// compare-and-set), private keys as files readable only by their owner, DSSE
// envelopes signed through sigstore/sigstore (one signature per active key,
// so a rotation overlap carries two), and verification that judges each
// signature by the window of the key that made it. Rotation adds a key and
// closes the old one's window; it never invalidates what was signed before.
// A Follower keeps a running process's signer and verification set current
// with the registry.
package keyring

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	sdsse "github.com/sigstore/sigstore/pkg/signature/dsse"

	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
)

// Algorithms.
const (
	ECDSA   = "ecdsa-p256-sha256" // the default
	Ed25519 = "ed25519"
)

// Statuses, as exported.
const (
	Active  = "active"
	Retired = "retired"
	Revoked = "revoked"
)

// TimeFormat is how key times are written.
const TimeFormat = time.RFC3339Nano

// Errors callers react to.
var (
	ErrNoKeys     = errors.New("no signing key is active")
	ErrUnverified = errors.New("attestation does not verify")
)

// ---- registry ----------------------------------------------------------------

// Registry is the key registry in the "keys" KV bucket (key "key.<keyid>").
type Registry struct {
	kv jetstream.KeyValue
	nc *nats.Conn // its reconnects restart the watches
}

// OpenRegistry opens the registry bucket (created by stream.Ensure).
func OpenRegistry(ctx context.Context, js jetstream.JetStream) (*Registry, error) {
	kv, err := js.KeyValue(ctx, stream.BucketKeys)
	if err != nil {
		return nil, fmt.Errorf("key registry: %w", err)
	}
	return &Registry{kv: kv, nc: js.Conn()}, nil
}

func kvKey(keyid string) string { return "key." + keyid }

// List returns every registered key, by version.
func (r *Registry) List(ctx context.Context) ([]schemas.Key, error) {
	lister, err := r.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	var out []schemas.Key
	for k := range lister.Keys() {
		if !strings.HasPrefix(k, "key.") {
			continue
		}
		e, err := r.kv.Get(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k, err)
		}
		var key schemas.Key
		if err := json.Unmarshal(e.Value(), &key); err != nil {
			return nil, fmt.Errorf("key %s: corrupt registry entry: %w", k, err)
		}
		out = append(out, key)
	}
	sort.Slice(out, func(i, j int) bool { return version(out[i].KeyID) < version(out[j].KeyID) })
	return out, nil
}

// Set returns the verification set of every registered key (List, then
// NewSet).
func (r *Registry) Set(ctx context.Context) (*Set, error) {
	keys, err := r.List(ctx)
	if err != nil {
		return nil, err
	}
	return NewSet(keys)
}

// Add registers a new key; it fails if the key id exists.
func (r *Registry) Add(ctx context.Context, k schemas.Key) error {
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	if _, err := r.kv.Create(ctx, kvKey(k.KeyID), b); err != nil {
		return fmt.Errorf("register key %s: %w", k.KeyID, err)
	}
	return nil
}

// Update changes a key with compare-and-set, retrying when another writer
// changed it in between.
func (r *Registry) Update(ctx context.Context, keyid string, change func(*schemas.Key) error) (schemas.Key, error) {
	for attempt := 0; attempt < 10; attempt++ {
		e, err := r.kv.Get(ctx, kvKey(keyid))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return schemas.Key{}, fmt.Errorf("key %s is not registered", keyid)
		}
		if err != nil {
			return schemas.Key{}, err
		}
		var k schemas.Key
		if err := json.Unmarshal(e.Value(), &k); err != nil {
			return k, err
		}
		if err := change(&k); err != nil {
			return k, err
		}
		b, _ := json.Marshal(k)
		if _, err := r.kv.Update(ctx, kvKey(keyid), b, e.Revision()); err == nil {
			return k, nil
		} else if !errors.Is(err, jetstream.ErrKeyExists) && !isWrongSeq(err) {
			return k, err
		}
	}
	return schemas.Key{}, fmt.Errorf("update key %s: too many concurrent changes", keyid)
}

func isWrongSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Watch calls changed whenever the registry changes, until ctx ends. A
// watch does not outlive a restart of the NATS server: after the connection
// reconnects (or the watch ends) it is started again, and changed is called
// then too, for what changed meanwhile.
func (r *Registry) Watch(ctx context.Context, changed func()) error {
	_, err := r.watch(ctx, changed)
	return err
}

// watch is Watch; the channel is closed once the watch has stopped.
func (r *Registry) watch(ctx context.Context, changed func()) (<-chan struct{}, error) {
	w, err := r.kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.follow(ctx, w, changed)
	}()
	return done, nil
}

// rewatchEvery is how often a watch checks for a reconnect, and retries
// starting again after one.
const rewatchEvery = time.Second

func (r *Registry) follow(ctx context.Context, w jetstream.KeyWatcher, changed func()) {
	defer func() {
		if w != nil {
			_ = w.Stop()
		}
	}()
	updates := w.Updates()
	check := time.NewTicker(rewatchEvery)
	defer check.Stop()
	seen, stale := r.reconnects(), false
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-updates:
			if !ok {
				updates, stale = nil, true
				continue
			}
			if e != nil {
				changed()
			}
		case <-check.C:
			if n := r.reconnects(); n != seen {
				seen, stale = n, true
			}
			if !stale {
				continue
			}
			if w != nil {
				_ = w.Stop()
			}
			w, updates = nil, nil
			nw, err := r.kv.WatchAll(ctx, jetstream.UpdatesOnly())
			if err != nil {
				continue // JetStream is not back yet: the next tick tries again
			}
			w, updates, stale = nw, nw.Updates(), false
			changed()
		}
	}
}

func (r *Registry) reconnects() uint64 {
	if r.nc == nil {
		return 0
	}
	return r.nc.Stats().Reconnects
}

func version(keyid string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(keyid, "v"))
	return n
}

// NextKeyID is the id after the highest registered version.
func NextKeyID(keys []schemas.Key) string {
	highest := 0
	for _, k := range keys {
		highest = max(highest, version(k.KeyID))
	}
	return "v" + strconv.Itoa(highest+1)
}

// Status reports a key's status at t.
func Status(k schemas.Key, t time.Time) string {
	if k.RevokedAt != nil {
		return Revoked
	}
	if k.ValidUntil != nil {
		if until, err := time.Parse(TimeFormat, *k.ValidUntil); err == nil && !t.Before(until) {
			return Retired
		}
	}
	return Active
}

// ValidAt reports whether a signature made at t by k counts, and why not.
func ValidAt(k schemas.Key, t time.Time) error {
	from, err := time.Parse(TimeFormat, k.ValidFrom)
	if err != nil {
		return fmt.Errorf("key %s: bad valid_from %q", k.KeyID, k.ValidFrom)
	}
	if t.Before(from) {
		return fmt.Errorf("key %s was not yet valid at %s (valid from %s)", k.KeyID, t.UTC().Format(TimeFormat), k.ValidFrom)
	}
	if k.RevokedAt != nil {
		rev, err := time.Parse(TimeFormat, *k.RevokedAt)
		if err != nil || !t.Before(rev) {
			return fmt.Errorf("key %s was revoked at %s; this signature is from %s", k.KeyID, *k.RevokedAt, t.UTC().Format(TimeFormat))
		}
	}
	if k.ValidUntil != nil {
		until, err := time.Parse(TimeFormat, *k.ValidUntil)
		if err != nil || !t.Before(until) {
			return fmt.Errorf("key %s was retired at %s; this signature is from %s", k.KeyID, *k.ValidUntil, t.UTC().Format(TimeFormat))
		}
	}
	return nil
}

// ---- private keys ------------------------------------------------------------

// Dir holds private keys as <keyid>.pem (PKCS#8, mode 0600, directory 0700).
type Dir struct{ Path string }

func (d Dir) file(keyid string) (string, error) {
	if version(keyid) <= 0 || "v"+strconv.Itoa(version(keyid)) != keyid {
		return "", fmt.Errorf("key id %q: want v<number>", keyid)
	}
	return filepath.Join(d.Path, keyid+".pem"), nil
}

// Generate creates a key pair, writes the private key and returns the
// registry entry (valid from now, open-ended).
func (d Dir) Generate(keyid, algorithm string, now time.Time) (schemas.Key, error) {
	path, err := d.file(keyid)
	if err != nil {
		return schemas.Key{}, err
	}
	var priv crypto.Signer
	switch algorithm {
	case ECDSA, "":
		algorithm = ECDSA
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case Ed25519:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		return schemas.Key{}, fmt.Errorf("algorithm %q: want %s or %s", algorithm, ECDSA, Ed25519)
	}
	if err != nil {
		return schemas.Key{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return schemas.Key{}, err
	}
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return schemas.Key{}, fmt.Errorf("key dir: %w", err)
	}
	if err := os.Chmod(d.Path, 0o700); err != nil {
		return schemas.Key{}, fmt.Errorf("key dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return schemas.Key{}, fmt.Errorf("write private key: %w", err)
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		_ = f.Close()
		return schemas.Key{}, err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return schemas.Key{}, err
	}
	if err := f.Close(); err != nil {
		return schemas.Key{}, err
	}
	return PublicEntry(keyid, algorithm, priv.Public(), now)
}

// Fingerprint is the fingerprint of a PEM public key as the registry
// records it: sha256: and the hex SHA-256 of its DER (SPKI) encoding.
func Fingerprint(publicKeyPEM string) (string, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(publicKeyPEM))
	if err != nil {
		return "", fmt.Errorf("public key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// PublicEntry makes the registry entry of a public key.
func PublicEntry(keyid, algorithm string, pub crypto.PublicKey, from time.Time) (schemas.Key, error) {
	pemBytes, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		return schemas.Key{}, err
	}
	der, _ := x509.MarshalPKIXPublicKey(pub)
	sum := sha256.Sum256(der)
	return schemas.Key{
		KeyID: keyid, Algorithm: algorithm, PublicKeyPEM: string(pemBytes), Status: Active,
		ValidFrom: from.UTC().Format(TimeFormat), Fingerprint: "sha256:" + hex.EncodeToString(sum[:]),
	}, nil
}

// Load returns the signer of a registered key, checked against the
// registry's public key: the private key file in d, or the KMS key the
// entry names.
func (d Dir) Load(k schemas.Key) (signature.Signer, error) {
	if k.KMSRef != "" {
		return loadKMS(k)
	}
	path, err := d.file(k.KeyID)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("private key %s: %w", k.KeyID, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("private key %s: %s is readable by others (mode %v); chmod 600 it", k.KeyID, path, fi.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("private key %s: %w", k.KeyID, err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, fmt.Errorf("private key %s: %s is not PEM", k.KeyID, path)
	}
	priv, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("private key %s: %w", k.KeyID, err)
	}
	var s signature.Signer
	switch p := priv.(type) {
	case *ecdsa.PrivateKey:
		s, err = signature.LoadECDSASignerVerifier(p, crypto.SHA256)
	case ed25519.PrivateKey:
		s, err = signature.LoadED25519SignerVerifier(p)
	default:
		return nil, fmt.Errorf("private key %s: unsupported type %T", k.KeyID, priv)
	}
	if err != nil {
		return nil, err
	}
	pub, _ := s.PublicKey()
	want, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(k.PublicKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("key %s: registry public key: %w", k.KeyID, err)
	}
	if err := cryptoutils.EqualKeys(pub, want); err != nil {
		return nil, fmt.Errorf("private key %s does not match the registered public key", k.KeyID)
	}
	return s, nil
}

// ---- signing -------------------------------------------------------------------

// Signer signs DSSE envelopes with every key that is active now and whose
// private key is available.
type Signer struct {
	mu      sync.RWMutex
	signers []signingKey
}

type signingKey struct {
	keyid string
	meta  schemas.Key
	s     signature.Signer
	pub   crypto.PublicKey
}

// NewSigner loads the active keys' private halves from dir. It fails with
// ErrNoKeys when none is available.
func NewSigner(keys []schemas.Key, dir Dir, now time.Time) (*Signer, error) {
	s := &Signer{}
	return s, s.Reload(keys, dir, now)
}

// Reload replaces the signing keys (after a rotation).
func (s *Signer) Reload(keys []schemas.Key, dir Dir, now time.Time) error {
	var out []signingKey
	var errs []error
	for _, k := range keys {
		if Status(k, now) != Active || ValidAt(k, now) != nil {
			continue
		}
		sg, err := dir.Load(k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pub, _ := sg.PublicKey()
		out = append(out, signingKey{keyid: k.KeyID, meta: k, s: sg, pub: pub})
	}
	if len(out) == 0 {
		if len(errs) == 0 {
			return fmt.Errorf("%w at %s (in %s): every registered key is retired, revoked or not yet valid", ErrNoKeys,
				now.UTC().Format(TimeFormat), dir.Path)
		}
		return fmt.Errorf("%w (in %s): %w", ErrNoKeys, dir.Path, errors.Join(errs...))
	}
	s.mu.Lock()
	s.signers = out
	s.mu.Unlock()
	return nil
}

// KeyIDs lists the keys that sign.
func (s *Signer) KeyIDs() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ids []string
	for _, k := range s.signers {
		ids = append(ids, k.keyid)
	}
	return ids
}

// Sign returns a DSSE envelope (JSON) over payload with one signature per
// signing key valid now, each tagged with its key id.
func (s *Signer) Sign(ctx context.Context, payloadType string, payload []byte) ([]byte, error) {
	return s.SignAt(ctx, time.Now(), payloadType, payload)
}

// SignAt is Sign for a signature dated at: only keys whose window covers at
// sign (a key retired or revoked since the last Reload no longer does).
func (s *Signer) SignAt(ctx context.Context, at time.Time, payloadType string, payload []byte) ([]byte, error) {
	s.mu.RLock()
	adapters := make([]dsse.Signer, 0, len(s.signers))
	for _, k := range s.signers {
		if ValidAt(k.meta, at) != nil {
			continue
		}
		adapters = append(adapters, &sdsse.SignerAdapter{SignatureSigner: k.s, Pub: k.pub, PubKeyID: k.keyid})
	}
	s.mu.RUnlock()
	if len(adapters) == 0 {
		return nil, fmt.Errorf("%w at %s", ErrNoKeys, at.UTC().Format(TimeFormat))
	}
	es, err := dsse.NewEnvelopeSigner(adapters...)
	if err != nil {
		return nil, err
	}
	env, err := es.SignPayload(ctx, payloadType, payload)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return json.Marshal(env)
}

// ---- verification ------------------------------------------------------------

// Set is a key set for verification (from the registry or an export).
type Set struct {
	keys map[string]verifyKey
}

type verifyKey struct {
	meta schemas.Key
	v    signature.Verifier
}

// NewSet builds a set from registry entries.
func NewSet(keys []schemas.Key) (*Set, error) {
	s := &Set{keys: map[string]verifyKey{}}
	for _, k := range keys {
		pub, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(k.PublicKeyPEM))
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k.KeyID, err)
		}
		var v signature.Verifier
		switch k.Algorithm {
		case ECDSA:
			ep, ok := pub.(*ecdsa.PublicKey)
			if !ok {
				return nil, fmt.Errorf("key %s: algorithm %s but a %T key", k.KeyID, k.Algorithm, pub)
			}
			v, err = signature.LoadECDSAVerifier(ep, crypto.SHA256)
		case Ed25519:
			ep, ok := pub.(ed25519.PublicKey)
			if !ok {
				return nil, fmt.Errorf("key %s: algorithm %s but a %T key", k.KeyID, k.Algorithm, pub)
			}
			v, err = signature.LoadED25519Verifier(ep)
		default:
			return nil, fmt.Errorf("key %s: unknown algorithm %q", k.KeyID, k.Algorithm)
		}
		if err != nil {
			return nil, err
		}
		s.keys[k.KeyID] = verifyKey{meta: k, v: v}
	}
	return s, nil
}

// Verified is the outcome of a successful verification.
type Verified struct {
	Payload []byte
	KeyIDs  []string // the keys whose signatures verified and were valid at the time
}

// Verify checks a DSSE envelope: its payload type must be payloadType, and
// at least one signature must verify under a known key that was valid at
// time at. Signatures by unknown keys are ignored, never counted; several
// signatures by one key count once. Every failure wraps ErrUnverified and
// says why.
func (s *Set) Verify(envelope []byte, payloadType string, at time.Time) (Verified, error) {
	var env dsse.Envelope
	if err := json.Unmarshal(envelope, &env); err != nil {
		return Verified{}, fmt.Errorf("%w: not a DSSE envelope: %w", ErrUnverified, err)
	}
	if env.PayloadType != payloadType {
		return Verified{}, fmt.Errorf("%w: payload type mismatch: got %q, want %q", ErrUnverified, env.PayloadType, payloadType)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return Verified{}, fmt.Errorf("%w: payload is not base64: %w", ErrUnverified, err)
	}
	if len(env.Signatures) == 0 {
		return Verified{}, fmt.Errorf("%w: no signatures", ErrUnverified)
	}
	pae := dsse.PAE(env.PayloadType, payload)
	var ok []string
	var problems []string
	for _, sig := range env.Signatures {
		k, known := s.keys[sig.KeyID]
		if !known {
			problems = append(problems, fmt.Sprintf("signature by unknown key %q", sig.KeyID))
			continue
		}
		if slices.Contains(ok, sig.KeyID) {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(sig.Sig)
		if err != nil {
			problems = append(problems, fmt.Sprintf("signature by %s is not base64", sig.KeyID))
			continue
		}
		if err := k.v.VerifySignature(bytesReader(raw), bytesReader(pae)); err != nil {
			problems = append(problems,
				fmt.Sprintf("signature by %s does not verify (payload, payload type or signature altered)", sig.KeyID))
			continue
		}
		if err := ValidAt(k.meta, at); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		ok = append(ok, sig.KeyID)
	}
	if len(ok) == 0 {
		return Verified{}, fmt.Errorf("%w: %s", ErrUnverified, strings.Join(problems, "; "))
	}
	return Verified{Payload: payload, KeyIDs: ok}, nil
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
