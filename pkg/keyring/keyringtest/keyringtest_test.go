package keyringtest

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/claimcheck/claimcheck/pkg/keyring"
)

// A made key signs through both signers, and its set verifies what the
// keyring signer signed; an unknown algorithm is an error.
func TestMake(t *testing.T) {
	for _, alg := range []string{keyring.ECDSA, keyring.Ed25519} {
		k := New(t, filepath.Join(t.TempDir(), "k"), alg, time.Now())
		if k.Key.KeyID != "v1" || k.Key.Algorithm != alg {
			t.Fatalf("%s: key %+v", alg, k.Key)
		}
		env, err := k.Signer.SignAt(t.Context(), time.Now(), "application/x-test", []byte("payload"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.Set.Verify(env, "application/x-test", time.Now()); err != nil {
			t.Fatalf("%s: the set does not verify the signer's envelope: %v", alg, err)
		}
		sig, err := k.Raw.SignMessage(bytes.NewReader([]byte("m")))
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := k.Raw.(signature.Verifier); !ok || v.VerifySignature(bytes.NewReader(sig), bytes.NewReader([]byte("m"))) != nil {
			t.Fatalf("%s: the raw signer's signature does not verify", alg)
		}
	}
	if _, err := Make(t.TempDir(), "rsa-1024", time.Now()); err == nil {
		t.Fatal("an unknown algorithm was accepted")
	}
}
