package decision

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"errors"
	"fmt"
)

// The DER prefixes of the two SubjectPublicKeyInfo encodings the key
// registry writes (x509.MarshalPKIXPublicKey): id-ecPublicKey with
// prime256v1 and an uncompressed point, and id-Ed25519 (RFC 8410).
var (
	spkiP256 = []byte{0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce,
		0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00}
	spkiEd25519 = []byte{0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00}
)

// parsePublicKey reads a P-256 or Ed25519 public key from its
// SubjectPublicKeyInfo DER, accepting exactly the encodings above and
// nothing else. It replaces x509.ParsePKIXPublicKey so that the hook does
// not link crypto/x509, whose package initialisation is a measurable part
// of the hook's start-up. FuzzParsePublicKey holds it to x509's answer.
func parsePublicKey(der []byte) (any, error) {
	switch {
	case len(der) == len(spkiP256)+65 && bytes.HasPrefix(der, spkiP256):
		k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), der[len(spkiP256):])
		if err != nil {
			return nil, fmt.Errorf("P-256 public key: %w", err)
		}
		return k, nil
	case len(der) == len(spkiEd25519)+ed25519.PublicKeySize && bytes.HasPrefix(der, spkiEd25519):
		return ed25519.PublicKey(bytes.Clone(der[len(spkiEd25519):])), nil
	}
	return nil, errors.New("not a P-256 or Ed25519 SubjectPublicKeyInfo (the only keys the registry makes)")
}
