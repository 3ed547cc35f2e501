package keyring

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/schemas"
)

// EnsureFirst creates and registers key v1 when the registry holds no key
// at all (what `claimcheck up` does on a fresh data directory). It returns
// the key and whether it was created here. When another process registers
// v1 first, the private key written here is removed again.
func EnsureFirst(ctx context.Context, r *Registry, dir Dir, algorithm string, now time.Time) (schemas.Key, bool, error) {
	keys, err := r.List(ctx)
	if err != nil {
		return schemas.Key{}, false, err
	}
	if len(keys) > 0 {
		return keys[len(keys)-1], false, nil
	}
	k, err := dir.Generate("v1", algorithm, now)
	if err != nil {
		return schemas.Key{}, false, fmt.Errorf("first signing key: %w", err)
	}
	if err := r.Add(ctx, k); err != nil {
		path, _ := dir.file("v1")
		_ = os.Remove(path)
		if errors.Is(err, jetstream.ErrKeyExists) {
			keys, lerr := r.List(ctx)
			if lerr == nil && len(keys) > 0 {
				return keys[0], false, nil
			}
		}
		return schemas.Key{}, false, err
	}
	return k, true, nil
}

// Rotation is the outcome of Rotate.
type Rotation struct {
	New     schemas.Key
	Retired []schemas.Key // keys whose window now closes at New.ValidFrom + overlap
}

// NewKey says how Rotate makes the next key.
type NewKey struct {
	Algorithm string // of a file key in the key directory (default ECDSA)
	KMSRef    string // a KMS key (sigstore key reference) instead of a file
}

// Rotate generates the next key version in dir, registers it (valid from
// now) and closes the window of every older key at now+overlap at the
// latest (an earlier rotation's longer overlap is cut short): they keep
// signing beside the new key until then, and afterwards verify only what
// they signed before. Nothing signed earlier stops verifying.
func Rotate(ctx context.Context, r *Registry, dir Dir, nk NewKey, overlap time.Duration, now time.Time) (Rotation, error) {
	if overlap < 0 {
		return Rotation{}, fmt.Errorf("overlap %s: must not be negative", overlap)
	}
	keys, err := r.List(ctx)
	if err != nil {
		return Rotation{}, err
	}
	keyid := NextKeyID(keys)
	var k schemas.Key
	if nk.KMSRef != "" {
		k, err = KMSEntry(ctx, keyid, nk.KMSRef, now)
	} else {
		k, err = dir.Generate(keyid, nk.Algorithm, now)
	}
	if err != nil {
		return Rotation{}, err
	}
	if err := r.Add(ctx, k); err != nil {
		if nk.KMSRef == "" {
			path, _ := dir.file(keyid)
			_ = os.Remove(path)
		}
		if errors.Is(err, jetstream.ErrKeyExists) {
			return Rotation{}, fmt.Errorf("key %s was registered by someone else meanwhile; run the rotation again", keyid)
		}
		return Rotation{}, err
	}
	out := Rotation{New: k}
	end := now.Add(overlap)
	until := end.UTC().Format(TimeFormat)
	closesLater := func(k schemas.Key) bool {
		if k.RevokedAt != nil {
			return false
		}
		if k.ValidUntil == nil {
			return true
		}
		t, err := time.Parse(TimeFormat, *k.ValidUntil)
		return err != nil || t.After(end)
	}
	for _, old := range keys {
		if !closesLater(old) {
			continue
		}
		updated, err := r.Update(ctx, old.KeyID, func(k *schemas.Key) error {
			if closesLater(*k) {
				k.ValidUntil = &until
			}
			return nil
		})
		if err != nil {
			return out, fmt.Errorf(
				"key %s registered, but retiring %s failed (run the rotation's retire step again with `claimcheck keys rotate`): %w", keyid, old.KeyID, err)
		}
		out.Retired = append(out.Retired, updated)
	}
	return out, nil
}

// Revoke marks a key compromised from time at: signatures it made at or
// after at no longer verify; earlier ones still do. A key already revoked
// may only have its revocation moved earlier.
func Revoke(ctx context.Context, r *Registry, keyid string, at time.Time) (schemas.Key, error) {
	ts := at.UTC().Format(TimeFormat)
	return r.Update(ctx, keyid, func(k *schemas.Key) error {
		if k.RevokedAt != nil {
			prev, err := time.Parse(TimeFormat, *k.RevokedAt)
			if err == nil && !at.Before(prev) {
				return fmt.Errorf("key %s is already revoked at %s; a revocation can only move earlier", keyid, *k.RevokedAt)
			}
		}
		k.RevokedAt = &ts
		k.Status = Revoked
		return nil
	})
}

// Export returns the registry's keys for `claimcheck keys export`, each with
// its status at now.
func Export(keys []schemas.Key, now time.Time) []schemas.Key {
	out := make([]schemas.Key, len(keys))
	for i, k := range keys {
		k.Status = Status(k, now)
		out[i] = k
	}
	return out
}
