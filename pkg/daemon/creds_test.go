package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/claimcheck/claimcheck/pkg/daemon"
	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// The services and the CLI authenticate with a credentials file: an nkey
// seed against a server that knows the public key, a .creds file against a
// server in operator mode; anything else is refused naming the file.
func TestCredsOption(t *testing.T) {
	user, _ := nkeys.CreateUser()
	pub, _ := user.PublicKey()
	seed, _ := user.Seed()
	srv := natstest.RunWithOptions(t, &server.Options{Nkeys: []*server.NkeyUser{{Nkey: pub}}})
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	opt, err := daemon.CredsOption(write("svc.nk", seed))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(srv.ClientURL(), opt)
	if err != nil {
		t.Fatalf("nkey seed: %v", err)
	}
	nc.Close()
	if nc, err := nats.Connect(srv.ClientURL()); err == nil {
		nc.Close()
		t.Fatal("the server accepts clients without credentials: the test shows nothing")
	}
	// A .creds file against a server in operator (JWT) mode.
	jwtURL, creds, _ := natstest.OperatorMode(t)
	opt, err = daemon.CredsOption(write("svc.creds", creds))
	if err != nil {
		t.Fatalf(".creds file: %v", err)
	}
	if nc, err = nats.Connect(jwtURL, opt); err != nil {
		t.Fatalf(".creds file: %v", err)
	}
	nc.Close()
	if _, err := daemon.CredsOption(filepath.Join(dir, "missing.creds")); err == nil || !strings.Contains(err.Error(), "missing.creds") {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := daemon.CredsOption(write("junk", []byte("hello"))); err == nil || !strings.Contains(err.Error(), "junk") {
		t.Fatalf("junk file: %v", err)
	}
}
