package keyring

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/schemas"
)

const pt = schemas.AttestationFormat

var t0 = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

func strp(t time.Time) *string { s := t.UTC().Format(TimeFormat); return &s }

func TestRotationKeepsHistoryAndRevocationCutsAtItsTime(t *testing.T) {
	dir := Dir{Path: filepath.Join(t.TempDir(), "keys")}
	v1, err := dir.Generate("v1", ECDSA, t0)
	if err != nil {
		t.Fatal(err)
	}
	// Before rotation: v1 signs alone.
	s, err := NewSigner([]schemas.Key{v1}, dir, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	old, err := s.SignAt(context.Background(), t0.Add(time.Hour), pt, []byte(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	// Rotate at t0+10h with a 1h overlap: v2 starts, v1 retires at t0+11h.
	rot := t0.Add(10 * time.Hour)
	v2, err := dir.Generate("v2", Ed25519, rot)
	if err != nil {
		t.Fatal(err)
	}
	v1.ValidUntil = strp(rot.Add(time.Hour))
	keys := []schemas.Key{v1, v2}
	if err := s.Reload(keys, dir, rot.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ids := s.KeyIDs(); len(ids) != 2 {
		t.Fatalf("during the overlap both keys sign: %v", ids)
	}
	overlap, _ := s.SignAt(context.Background(), rot.Add(30*time.Minute), pt, []byte(`{"n":2}`))
	if err := s.Reload(keys, dir, rot.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if ids := s.KeyIDs(); len(ids) != 1 || ids[0] != "v2" {
		t.Fatalf("after the overlap only v2 signs: %v", ids)
	}
	newer, _ := s.SignAt(context.Background(), rot.Add(2*time.Hour), pt, []byte(`{"n":3}`))

	set, err := NewSet(keys)
	if err != nil {
		t.Fatal(err)
	}
	mustVerify := func(env []byte, at time.Time, wantIDs string) {
		t.Helper()
		v, err := set.Verify(env, pt, at)
		if err != nil {
			t.Fatalf("verify at %s: %v", at, err)
		}
		if strings.Join(v.KeyIDs, ",") != wantIDs {
			t.Fatalf("verified by %v, want %s", v.KeyIDs, wantIDs)
		}
	}
	mustFail := func(env []byte, at time.Time, want string) {
		t.Helper()
		_, err := set.Verify(env, pt, at)
		if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), want) {
			t.Fatalf("verify at %s: %v, want ErrUnverified mentioning %q", at, err, want)
		}
	}
	// Everything signed before the rotation still verifies after it.
	mustVerify(old, t0.Add(time.Hour), "v1")
	mustVerify(overlap, rot.Add(30*time.Minute), "v1,v2")
	mustVerify(newer, rot.Add(2*time.Hour), "v2")
	// A v1 signature claiming a time after its retirement does not count.
	mustFail(old, rot.Add(3*time.Hour), "retired")

	// Revoke v2 at rot+5h: signatures before stay valid, after fail.
	rev := rot.Add(5 * time.Hour)
	keys[1].RevokedAt = strp(rev)
	set, _ = NewSet(keys)
	mustVerify(newer, rot.Add(2*time.Hour), "v2")
	mustFail(newer, rev.Add(time.Minute), "revoked")
	if Status(keys[1], rev) != Revoked || Status(keys[0], rot.Add(2*time.Hour)) != Retired || Status(v2, rot) != Active {
		t.Fatal("status")
	}
}

func TestForgeriesAreRejected(t *testing.T) {
	dir := Dir{Path: filepath.Join(t.TempDir(), "keys")}
	v1, _ := dir.Generate("v1", ECDSA, t0)
	s, _ := NewSigner([]schemas.Key{v1}, dir, t0)
	env, _ := s.Sign(context.Background(), pt, []byte(`{"range":"1-5"}`))
	set, _ := NewSet([]schemas.Key{v1})
	at := t0.Add(time.Minute)

	// Signed by a key the registry does not know (same id claimed).
	otherDir := Dir{Path: filepath.Join(t.TempDir(), "other")}
	rogue, _ := otherDir.Generate("v1", ECDSA, t0)
	rs, _ := NewSigner([]schemas.Key{rogue}, otherDir, t0)
	forged, _ := rs.Sign(context.Background(), pt, []byte(`{"range":"1-5"}`))
	if _, err := set.Verify(forged, pt, at); !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("signature by a rogue key: %v", err)
	}
	// Unknown key id.
	var e dsse.Envelope
	_ = json.Unmarshal(env, &e)
	e.Signatures[0].KeyID = "v9"
	b, _ := json.Marshal(e)
	if _, err := set.Verify(b, pt, at); err == nil || !strings.Contains(err.Error(), `unknown key "v9"`) {
		t.Errorf("unknown key id: %v", err)
	}
	// The right key over a different payload type.
	other, _ := s.Sign(context.Background(), "application/vnd.other+json", []byte(`{"range":"1-5"}`))
	if _, err := set.Verify(other, pt, at); err == nil || !strings.Contains(err.Error(), "payload type mismatch") {
		t.Errorf("other payload type: %v", err)
	}
	// The payload type field swapped after signing.
	_ = json.Unmarshal(other, &e)
	e.PayloadType = pt
	b, _ = json.Marshal(e)
	if _, err := set.Verify(b, pt, at); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("payload type swapped: %v", err)
	}
	// A signature copied onto another range.
	_ = json.Unmarshal(env, &e)
	e.Payload = base64.StdEncoding.EncodeToString([]byte(`{"range":"1-9"}`))
	b, _ = json.Marshal(e)
	if _, err := set.Verify(b, pt, at); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("copied signature: %v", err)
	}
	// No signatures, garbage.
	e.Signatures = nil
	b, _ = json.Marshal(e)
	for _, bad := range [][]byte{b, []byte(`{`), []byte(`{"payloadType":"` + pt + `","payload":"!!","signatures":[{"keyid":"v1","sig":"x"}]}`)} {
		if _, err := set.Verify(bad, pt, at); !errors.Is(err, ErrUnverified) {
			t.Errorf("bad envelope %s: %v", bad, err)
		}
	}
	// Before the key existed.
	if _, err := set.Verify(env, pt, t0.Add(-time.Hour)); err == nil || !strings.Contains(err.Error(), "not yet valid") {
		t.Errorf("before valid_from: %v", err)
	}
}

func TestPrivateKeyFilesAreProtected(t *testing.T) {
	dir := Dir{Path: filepath.Join(t.TempDir(), "keys")}
	v1, _ := dir.Generate("v1", ECDSA, t0)
	fi, _ := os.Stat(filepath.Join(dir.Path, "v1.pem"))
	di, _ := os.Stat(dir.Path)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes %v %v", fi.Mode().Perm(), di.Mode().Perm())
	}
	if _, err := dir.Generate("v1", ECDSA, t0); err == nil {
		t.Fatal("overwrote an existing key")
	}
	_ = os.Chmod(filepath.Join(dir.Path, "v1.pem"), 0o644)
	if _, err := dir.Load(v1); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("world-readable key loaded: %v", err)
	}
	_ = os.Chmod(filepath.Join(dir.Path, "v1.pem"), 0o600)
	v2, _ := dir.Generate("v2", ECDSA, t0)
	swapped := v1
	swapped.PublicKeyPEM = v2.PublicKeyPEM
	if _, err := dir.Load(swapped); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("mismatched key loaded: %v", err)
	}
	for _, bad := range []string{"../x", "v0", "v01", "key"} {
		if _, err := dir.Generate(bad, ECDSA, t0); err == nil {
			t.Errorf("key id %q accepted", bad)
		}
	}
	if _, err := NewSigner(nil, dir, t0); !errors.Is(err, ErrNoKeys) {
		t.Fatalf("no keys: %v", err)
	}
}

func TestRegistryCompareAndSet(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.Connect(t, srv.ClientURL())
	natstest.Bootstrap(t, js, nil)
	ctx := t.Context()
	r, err := OpenRegistry(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	dir := Dir{Path: t.TempDir()}
	v1, _ := dir.Generate("v1", ECDSA, t0)
	if err := r.Add(ctx, v1); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(ctx, v1); err == nil {
		t.Fatal("registered the same key id twice")
	}
	changed := make(chan struct{}, 100)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := r.Watch(wctx, func() { changed <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			if _, err := r.Update(ctx, "v1", func(k *schemas.Key) error {
				k.Fingerprint = strings.Repeat("x", i)
				return nil
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	keys, err := r.List(ctx)
	if err != nil || len(keys) != 1 || keys[0].PublicKeyPEM != v1.PublicKeyPEM {
		t.Fatalf("list: %v %v", keys, err)
	}
	if NextKeyID(keys) != "v2" {
		t.Fatal("next key id")
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not report the change")
	}
	if _, err := r.Update(ctx, "v7", func(*schemas.Key) error { return nil }); err == nil {
		t.Fatal("updated a key that does not exist")
	}
}
