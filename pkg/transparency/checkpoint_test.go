package transparency

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/keyring/keyringtest"
	"github.com/claimcheck/claimcheck/schemas"
)

const testOrigin = "claimcheck.test/ledger/01JDB3H5KX"

// logKey makes a registry key of alg with its note signer and verifiers.
func logKey(t *testing.T, alg string) (note.Signer, []note.Verifier, keyringtest.Key) {
	t.Helper()
	k := keyringtest.New(t, filepath.Join(t.TempDir(), "keys"), alg, time.Now())
	s, err := NoteSigner(testOrigin, k.Key, k.Raw)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := LogVerifiers(testOrigin, k.Keys())
	if err != nil {
		t.Fatal(err)
	}
	return s, vs, k
}

// cosigner makes a witness's cosignature/v1 signer and verifier.
func cosigner(t *testing.T, name string) (note.Signer, note.Verifier) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tnote.NewVerifierForCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

// TestCheckpointsSignAndOpen: a checkpoint signed with an ECDSA or an
// Ed25519 registry key opens with the registry's verifiers (formats/note's,
// as any C2SP client reads them), with the witnesses whose cosignatures
// verify; every way of getting it wrong is refused with a reason.
func TestCheckpointsSignAndOpen(t *testing.T) {
	tree := tlog.Tree{N: 1500, Hash: tlog.RecordHash([]byte("root"))}
	for _, alg := range []string{keyring.ECDSA, keyring.Ed25519} {
		t.Run(alg, func(t *testing.T) {
			s, vs, k := logKey(t, alg)
			signed, err := Sign(Body(testOrigin, tree), s)
			if err != nil {
				t.Fatal(err)
			}
			cp, err := Open(signed, testOrigin, vs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if cp.Tree != tree || cp.Origin != testOrigin || len(cp.Witnesses) != 0 {
				t.Fatalf("opened %+v", cp)
			}
			ws, wv := cosigner(t, "witness.test/w1")
			cosigned, err := note.Sign(&note.Note{Text: string(Body(testOrigin, tree))}, s, ws)
			if err != nil {
				t.Fatal(err)
			}
			if cp, err = Open(cosigned, testOrigin, vs, []note.Verifier{wv}); err != nil || len(cp.Witnesses) != 1 {
				t.Fatalf("cosigned: %+v, %v", cp, err)
			}

			other, otherVs, _ := logKey(t, alg)
			forged, err := Sign(Body(testOrigin, tree), other)
			if err != nil {
				t.Fatal(err)
			}
			onlyWitness, err := note.Sign(&note.Note{Text: string(Body(testOrigin, tree))}, ws)
			if err != nil {
				t.Fatal(err)
			}
			bigger := bytes.Replace(signed, []byte("\n1500\n"), []byte("\n1600\n"), 1)
			wrongOrigin, err := Sign(Body("claimcheck.test/other", tree), s)
			if err != nil {
				t.Fatal(err)
			}
			extra, err := Sign(append(Body(testOrigin, tree), "ext\n"...), s)
			if err != nil {
				t.Fatal(err)
			}
			revoked := k.Key
			at := "2026-01-01T00:00:00Z"
			revoked.Status, revoked.RevokedAt = keyring.Revoked, &at
			for _, tc := range []struct {
				name   string
				signed []byte
				vs     []note.Verifier
				want   string
			}{
				{"another log's key", forged, vs, "no signature of the log's keys"},
				{"only a witness", onlyWitness, vs, "no signature of the log's keys"},
				{"size changed after signing", bigger, vs, "invalid signature"},
				{"another origin", wrongOrigin, vs, "origin"},
				{"extension lines", extra, vs, "after the root hash"},
				{"verified with the other key", signed, otherVs, "no signature of the log's keys"},
				{"not a note", []byte("hello"), vs, "checkpoint"},
			} {
				if _, err := Open(tc.signed, testOrigin, tc.vs, []note.Verifier{wv}); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
				}
			}
			if _, err := LogVerifiers(testOrigin, []schemas.Key{revoked}); err == nil {
				t.Error("a registry of revoked keys gave verifiers")
			}
		})
	}
}

// TestVerifierKeysAreNoteKeys: the verifier key of an Ed25519 registry
// key is the one x/mod/sumdb/note makes for the same public key.
func TestVerifierKeysAreNoteKeys(t *testing.T) {
	_, _, k := logKey(t, keyring.Ed25519)
	got, err := VerifierKey(testOrigin, k.Key)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := k.Raw.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	want, err := note.NewEd25519VerifierKey(testOrigin, pub.(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("verifier key %q, want %q", got, want)
	}
}
