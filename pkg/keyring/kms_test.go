package keyring

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// installPlugin builds testdata/kmsplugin as sigstore-kms-cctest and puts it
// on PATH, where sigstore's kms.Get finds plugins.
func installPlugin(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "sigstore-kms-cctest"), "./testdata/kmsplugin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the KMS plugin: %v\n%s", err, out)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestKMSKeysSignThroughSigstorePlugins(t *testing.T) {
	installPlugin(t)
	r := openTestRegistry(t)
	ctx := t.Context()
	dir := Dir{Path: filepath.Join(t.TempDir(), "keys")}
	if _, _, err := EnsureFirst(ctx, r, dir, "", t0); err != nil {
		t.Fatal(err)
	}
	kmsKey := filepath.Join(t.TempDir(), "kms-key.pem")
	res, err := Rotate(ctx, r, dir, NewKey{KMSRef: "cctest://" + kmsKey}, 0, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if res.New.KeyID != "v2" || res.New.KMSRef != "cctest://"+kmsKey || res.New.Algorithm != ECDSA {
		t.Fatalf("kms key entry %+v", res.New)
	}
	if _, err := os.Stat(filepath.Join(dir.Path, "v2.pem")); !os.IsNotExist(err) {
		t.Fatal("a KMS key left a private key file")
	}
	keys, _ := r.List(ctx)
	at := t0.Add(2 * time.Hour)
	s, err := NewSigner(keys, dir, at)
	if err != nil {
		t.Fatal(err)
	}
	if ids := s.KeyIDs(); strings.Join(ids, ",") != "v2" {
		t.Fatalf("signing keys %v, want the KMS key alone", ids)
	}
	env, err := s.SignAt(context.Background(), at, pt, []byte(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	set, _ := NewSet(keys)
	v, err := set.Verify(env, pt, at)
	if err != nil || v.KeyIDs[0] != "v2" {
		t.Fatalf("KMS signature: %+v %v", v, err)
	}

	// The KMS holding another key than the registry says is refused.
	swapped := keys[1]
	swapped.PublicKeyPEM = keys[0].PublicKeyPEM
	if _, err := dir.Load(swapped); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("mismatched KMS key loaded: %v", err)
	}
	// An unknown provider is a clear error.
	if _, err := KMSEntry(ctx, "v9", "nosuchkms://x", t0); err == nil || !strings.Contains(err.Error(), "nosuchkms") {
		t.Fatalf("unknown provider: %v", err)
	}
}
