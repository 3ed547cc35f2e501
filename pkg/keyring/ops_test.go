package keyring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/natstest"
)

func openTestRegistry(t *testing.T) *Registry {
	t.Helper()
	srv := natstest.RunServer(t)
	_, js := natstest.Connect(t, srv.ClientURL())
	natstest.Bootstrap(t, js, nil)
	r, err := OpenRegistry(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEnsureFirstCreatesOnlyOnce(t *testing.T) {
	r := openTestRegistry(t)
	ctx := t.Context()
	dir := Dir{Path: filepath.Join(t.TempDir(), "keys")}
	k, created, err := EnsureFirst(ctx, r, dir, "", t0)
	if err != nil || !created || k.KeyID != "v1" || k.Algorithm != ECDSA {
		t.Fatalf("first: %+v %v %v", k, created, err)
	}
	again, created, err := EnsureFirst(ctx, r, dir, Ed25519, t0.Add(time.Hour))
	if err != nil || created || again.KeyID != "v1" || again.PublicKeyPEM != k.PublicKeyPEM {
		t.Fatalf("second call must keep v1: %+v %v %v", again, created, err)
	}
	// Another host registered v1 first: the private key written here is
	// removed, never left to sign under a key id it does not own.
	other := Dir{Path: filepath.Join(t.TempDir(), "other")}
	r2 := openTestRegistry(t)
	mine, _ := other.Generate("v1", ECDSA, t0)
	if err := r2.Add(ctx, mine); err != nil {
		t.Fatal(err)
	}
	racer := Dir{Path: filepath.Join(t.TempDir(), "racer")}
	got, created, err := EnsureFirst(ctx, r2, racer, "", t0)
	if err != nil || created || got.PublicKeyPEM != mine.PublicKeyPEM {
		t.Fatalf("registry already had v1: %+v %v %v", got, created, err)
	}
	if _, err := os.Stat(filepath.Join(racer.Path, "v1.pem")); !os.IsNotExist(err) {
		t.Fatalf("EnsureFirst wrote a key although v1 existed: %v", err)
	}
}

func TestRotateAndRevokeThroughTheRegistry(t *testing.T) {
	r := openTestRegistry(t)
	ctx := t.Context()
	dir := Dir{Path: filepath.Join(t.TempDir(), "keys")}
	if _, _, err := EnsureFirst(ctx, r, dir, "", t0); err != nil {
		t.Fatal(err)
	}
	keys, _ := r.List(ctx)
	signer, err := NewSigner(keys, dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := signer.SignAt(ctx, t0.Add(time.Hour), pt, []byte(`{"n":1}`))

	rot := t0.Add(10 * time.Hour)
	res, err := Rotate(ctx, r, dir, NewKey{Algorithm: Ed25519}, 15*time.Minute, rot)
	if err != nil {
		t.Fatal(err)
	}
	if res.New.KeyID != "v2" || len(res.Retired) != 1 || *res.Retired[0].ValidUntil != rot.Add(15*time.Minute).Format(TimeFormat) {
		t.Fatalf("rotation: %+v", res)
	}
	keys, _ = r.List(ctx)
	if err := signer.Reload(keys, dir, rot); err != nil {
		t.Fatal(err)
	}
	// A signer that has not reloaded since the overlap ended stops using the
	// retired key by itself.
	late, err := signer.SignAt(ctx, rot.Add(time.Hour), pt, []byte(`{"n":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(late), `"keyid":"v1"`) {
		t.Fatal("retired key signed after its window closed")
	}
	set, _ := NewSet(keys)
	if _, err := set.Verify(before, pt, t0.Add(time.Hour)); err != nil {
		t.Fatalf("rotation invalidated an earlier signature: %v", err)
	}
	if v, err := set.Verify(late, pt, rot.Add(time.Hour)); err != nil || v.KeyIDs[0] != "v2" {
		t.Fatalf("new key: %v %v", v, err)
	}

	// Rotating again retires v2 only (v1 closed before then).
	res, err = Rotate(ctx, r, dir, NewKey{}, 0, rot.Add(2*time.Hour))
	if err != nil || res.New.KeyID != "v3" || len(res.Retired) != 1 || res.Retired[0].KeyID != "v2" {
		t.Fatalf("second rotation: %+v %v", res, err)
	}
	// A rotation with a shorter overlap cuts a longer pending one short:
	// v3 was given an hour below, v4 ends it after a minute.
	if _, err := Rotate(ctx, r, dir, NewKey{}, time.Hour, rot.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	res, err = Rotate(ctx, r, dir, NewKey{}, time.Minute, rot.Add(3*time.Hour+time.Second))
	if err != nil || len(res.Retired) != 2 {
		t.Fatalf("third rotation retired %+v (%v), want v3 and v4 cut to one minute", res.Retired, err)
	}
	for _, k := range res.Retired {
		if *k.ValidUntil != rot.Add(3*time.Hour+time.Second+time.Minute).Format(TimeFormat) {
			t.Fatalf("%s valid until %s", k.KeyID, *k.ValidUntil)
		}
	}
	if _, err := Rotate(ctx, r, dir, NewKey{Algorithm: "rsa"}, 0, rot); err == nil {
		t.Fatal("unknown algorithm accepted")
	}
	if _, err := Rotate(ctx, r, dir, NewKey{}, -time.Second, rot); err == nil {
		t.Fatal("negative overlap accepted")
	}

	// Revoke v2 at rot+30m: its signature at rot+1h fails, v1's still holds.
	revAt := rot.Add(30 * time.Minute)
	k, err := Revoke(ctx, r, "v2", revAt)
	if err != nil || k.Status != Revoked {
		t.Fatalf("revoke: %+v %v", k, err)
	}
	if _, err := Revoke(ctx, r, "v2", revAt.Add(time.Hour)); err == nil || !strings.Contains(err.Error(), "only move earlier") {
		t.Fatalf("revocation moved later: %v", err)
	}
	if _, err := Revoke(ctx, r, "v2", revAt.Add(-time.Minute)); err != nil {
		t.Fatalf("revocation moved earlier: %v", err)
	}
	if _, err := Revoke(ctx, r, "v9", revAt); err == nil {
		t.Fatal("revoked an unknown key")
	}
	keys, _ = r.List(ctx)
	set, _ = NewSet(keys)
	if _, err := set.Verify(late, pt, rot.Add(time.Hour)); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("signature after revocation verified: %v", err)
	}
	if _, err := set.Verify(before, pt, t0.Add(time.Hour)); err != nil {
		t.Fatalf("revoking v2 touched v1: %v", err)
	}
	exp := Export(keys, rot.Add(4*time.Hour))
	var got []string
	for _, k := range exp {
		got = append(got, k.KeyID+"="+k.Status)
	}
	if strings.Join(got, ",") != "v1=retired,v2=revoked,v3=retired,v4=retired,v5=active" {
		t.Fatalf("export statuses: %v", got)
	}
}
