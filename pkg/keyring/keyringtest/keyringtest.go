// Package keyringtest makes signing keys for tests and benchmarks: a key
// in a directory with its signer, the key set that verifies it and the
// raw sigstore signer of its private key.
package keyringtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/schemas"
)

// Key is one generated key and what signs and verifies with it.
type Key struct {
	Key    schemas.Key
	Dir    keyring.Dir
	Signer *keyring.Signer // signing as of the time given to Make
	Set    *keyring.Set
	Raw    signature.Signer // sigstore's signer of the private key
}

// Keys is the key alone, as a registry lists it.
func (k Key) Keys() []schemas.Key { return []schemas.Key{k.Key} }

// Make generates key "v1" of algorithm alg (keyring.ECDSA, keyring.Ed25519)
// in dir, valid from an hour before now, with its signer as of now.
func Make(dir, alg string, now time.Time) (Key, error) {
	k := Key{Dir: keyring.Dir{Path: dir}}
	var err error
	if k.Key, err = k.Dir.Generate("v1", alg, now.Add(-time.Hour)); err != nil {
		return k, fmt.Errorf("generate %s key: %w", alg, err)
	}
	if k.Signer, err = keyring.NewSigner(k.Keys(), k.Dir, now); err != nil {
		return k, fmt.Errorf("signer: %w", err)
	}
	if k.Set, err = keyring.NewSet(k.Keys()); err != nil {
		return k, fmt.Errorf("key set: %w", err)
	}
	if k.Raw, err = k.Dir.Load(k.Key); err != nil {
		return k, fmt.Errorf("load the private key: %w", err)
	}
	return k, nil
}

// New is Make in dir for a test, which it fails on an error.
func New(tb testing.TB, dir, alg string, now time.Time) Key {
	tb.Helper()
	k, err := Make(dir, alg, now)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}
