package oneshot_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/oneshot"
)

func startServer(t *testing.T, o *server.Options) string {
	t.Helper()
	return natstest.RunWithOptions(t, o).ClientURL()
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// request answers a request through the server (a PING is not enough: a
// refused CONNECT surfaces on the first request).
func request(t *testing.T, url, creds string) error {
	t.Helper()
	c, err := oneshot.Dial(ctx(t), oneshot.Options{URL: url, Creds: creds, Verify: true})
	if err != nil {
		return err
	}
	return c.Close()
}

// nkey authentication: the server knows the user's public key; the client
// signs the server's nonce with the seed.
func TestNKeySeedAuth(t *testing.T) {
	user, _ := nkeys.CreateUser()
	pub, _ := user.PublicKey()
	seed, _ := user.Seed()
	url := startServer(t, &server.Options{Nkeys: []*server.NkeyUser{{Nkey: pub}}})
	if err := request(t, url, writeFile(t, "user.nk", seed)); err != nil {
		t.Fatalf("nkey seed: %v", err)
	}
	other, _ := nkeys.CreateUser()
	otherSeed, _ := other.Seed()
	if err := request(t, url, writeFile(t, "other.nk", otherSeed)); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("unknown nkey: %v", err)
	}
	if err := request(t, url, ""); err == nil {
		t.Fatal("no credentials accepted by an nkey server")
	}
	if err := request(t, url, filepath.Join(t.TempDir(), "missing.creds")); err == nil || !strings.Contains(err.Error(), "missing.creds") {
		t.Fatalf("missing file: %v", err)
	}
	if err := request(t, url, writeFile(t, "junk.creds", []byte("not a credentials file"))); err == nil || !strings.Contains(err.Error(), "nkey seed") {
		t.Fatalf("junk file: %v", err)
	}
}

// JWT authentication (operator mode): a .creds file with the user JWT and
// its seed, as nsc writes it.
func TestCredsFileAuth(t *testing.T) {
	url, creds, otherSeed := natstest.OperatorMode(t)
	if err := request(t, url, writeFile(t, "user.creds", creds)); err != nil {
		t.Fatalf("creds: %v", err)
	}
	// The JWT with another user's seed: the signature does not match.
	userJWT, err := nkeys.ParseDecoratedJWT(creds)
	if err != nil {
		t.Fatal(err)
	}
	forged, _ := jwt.FormatUserConfig(userJWT, otherSeed)
	if err := request(t, url, writeFile(t, "forged.creds", forged)); err == nil {
		t.Fatal("a JWT signed for with another seed was accepted")
	}
}
