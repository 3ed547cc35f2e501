package attest

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/keyring/keyringtest"
	"github.com/claimcheck/claimcheck/schemas"
)

// BenchmarkSignVerify splits an attestation's cost: the raw sigstore
// signature over the same payload, then claimcheck's steps around it
// (canonical JSON, DSSE pre-authentication encoding and envelope,
// statement checks).
func BenchmarkSignVerify(b *testing.B) {
	k := keyringtest.New(b, filepath.Join(b.TempDir(), "k"), keyring.ECDSA, time.Now())
	s, set, raw := k.Signer, k.Set, k.Raw
	st := Statement(verdict(b), &schemas.Position{N: 8, Hash: "sha256:" + strings.Repeat("8", 64)}, time.Now())
	payload, err := Encode(st)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	env, _, err := Sign(ctx, s, st)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("raw-sign", func(b *testing.B) {
		for b.Loop() {
			if _, err := raw.SignMessage(bytes.NewReader(payload)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := Encode(st); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pae", func(b *testing.B) {
		for b.Loop() {
			_ = dsse.PAE(schemas.AttestationFormat, payload)
		}
	})
	b.Run("sign", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := Sign(ctx, s, st); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verify", func(b *testing.B) {
		for b.Loop() {
			if _, err := Verify(set, env, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
