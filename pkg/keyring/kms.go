package keyring

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"fmt"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/kms"
	"github.com/sigstore/sigstore/pkg/signature/options"

	"github.com/claimcheck/claimcheck/schemas"
)

// kmsTimeout bounds one KMS call made while loading a key.
const kmsTimeout = 30 * time.Second

// KMSEntry makes the registry entry of a key held in a KMS, named by a
// sigstore key reference: awskms://, gcpkms://, azurekms:// and
// hashivault:// when their providers are compiled in (they are not, in the
// claimcheck binaries: each pulls a cloud SDK), or <name>:// for a
// sigstore-kms-<name> plugin executable on PATH (sigstore's cliplugin
// protocol), which works with any of them. The key is created in the KMS if
// it has no public key yet. KMS keys are ECDSA P-256.
func KMSEntry(ctx context.Context, keyid, ref string, now time.Time) (schemas.Key, error) {
	if _, err := (Dir{}).file(keyid); err != nil {
		return schemas.Key{}, err
	}
	sv, err := kms.Get(ctx, ref, crypto.SHA256)
	if err != nil {
		return schemas.Key{}, fmt.Errorf("kms key %s: %w", ref, err)
	}
	pub, err := sv.PublicKey(options.WithContext(ctx))
	if err != nil {
		if pub, err = sv.CreateKey(ctx, sv.DefaultAlgorithm()); err != nil {
			return schemas.Key{}, fmt.Errorf("kms key %s: no public key and cannot create one: %w", ref, err)
		}
	}
	if ep, ok := pub.(*ecdsa.PublicKey); !ok || ep.Curve != elliptic.P256() {
		return schemas.Key{}, fmt.Errorf("kms key %s is a %T; claimcheck signs with ECDSA P-256 KMS keys", ref, pub)
	}
	k, err := PublicEntry(keyid, ECDSA, pub, now)
	if err != nil {
		return schemas.Key{}, err
	}
	k.KMSRef = ref
	return k, nil
}

// loadKMS returns the signer of a KMS key after checking that the KMS holds
// the key the registry has.
func loadKMS(k schemas.Key) (signature.Signer, error) {
	if k.Algorithm != ECDSA {
		return nil, fmt.Errorf("key %s: kms keys must be %s, not %s", k.KeyID, ECDSA, k.Algorithm)
	}
	ctx, cancel := context.WithTimeout(context.Background(), kmsTimeout)
	defer cancel()
	sv, err := kms.Get(ctx, k.KMSRef, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("key %s: kms %s: %w", k.KeyID, k.KMSRef, err)
	}
	pub, err := sv.PublicKey(options.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("key %s: kms %s: public key: %w", k.KeyID, k.KMSRef, err)
	}
	want, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(k.PublicKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("key %s: registry public key: %w", k.KeyID, err)
	}
	if err := cryptoutils.EqualKeys(pub, want); err != nil {
		return nil, fmt.Errorf("kms key %s (%s) does not match the registered public key", k.KeyID, k.KMSRef)
	}
	return sv, nil
}
