package decision

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"testing"
)

func marshalSPKI(t testing.TB, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// The hand parser accepts exactly the registry's two encodings and agrees
// with crypto/x509 on them; anything else is refused.
func TestParsePublicKeyMatchesX509(t *testing.T) {
	for range 20 {
		ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		got, err := parsePublicKey(marshalSPKI(t, &ek.PublicKey))
		if err != nil || !ek.PublicKey.Equal(got) {
			t.Fatalf("P-256: %v %v", got, err)
		}
		pub, _, _ := ed25519.GenerateKey(rand.Reader)
		got, err = parsePublicKey(marshalSPKI(t, pub))
		if err != nil || !pub.Equal(got) {
			t.Fatalf("Ed25519: %v %v", got, err)
		}
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 1024)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	good := marshalSPKI(t, &ek.PublicKey)
	offCurve := append([]byte(nil), good...)
	offCurve[len(offCurve)-1] ^= 1
	otherOID := append([]byte(nil), good...)
	otherOID[20] ^= 1
	for name, der := range map[string][]byte{
		"P-384":           marshalSPKI(t, &p384.PublicKey),
		"RSA":             marshalSPKI(t, &rk.PublicKey),
		"point off curve": offCurve,
		"other curve OID": otherOID,
		"truncated":       good[:len(good)-1],
		"trailing byte":   append(append([]byte(nil), good...), 0),
		"empty":           nil,
	} {
		if k, err := parsePublicKey(der); err == nil {
			t.Errorf("%s: accepted as %T", name, k)
		}
	}
}

// FuzzParsePublicKey: whatever the hand parser accepts, crypto/x509 parses
// to the same key.
func FuzzParsePublicKey(f *testing.F) {
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	f.Add(marshalSPKI(f, &ek.PublicKey))
	f.Add(marshalSPKI(f, pub))
	f.Add([]byte{0x30, 0x00})
	f.Fuzz(func(t *testing.T, der []byte) {
		got, err := parsePublicKey(der)
		if err != nil {
			return
		}
		want, xerr := x509.ParsePKIXPublicKey(der)
		if xerr != nil {
			t.Fatalf("accepted %x, which x509 refuses: %v", der, xerr)
		}
		eq, ok := want.(interface{ Equal(crypto.PublicKey) bool })
		if !ok || !eq.Equal(got) {
			t.Fatalf("accepted %x as %v, x509 parses %v", der, got, want)
		}
	})
}
