package identity_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/claimcheck/claimcheck/pkg/identity"
)

// TestServerConfigRunsAStandaloneServer: the file `claimcheck creds
// server-config` prints, included from a plain nats-server configuration,
// gives a server that admits the authority's identities and nobody else,
// and takes a revocation pushed to it while it runs.
func TestServerConfigRunsAStandaloneServer(t *testing.T) {
	dir := t.TempDir()
	au, _, err := identity.Open(filepath.Join(dir, "auth"))
	if err != nil {
		t.Fatal(err)
	}
	auth, err := au.ServerConfig(filepath.Join(dir, "resolver"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "auth.conf"), auth, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "nats.conf")
	main := "listen: 127.0.0.1:-1\njetstream { store_dir: " + `"` + filepath.Join(dir, "js") + `"` + " }\ninclude \"auth.conf\"\n"
	if err := os.WriteFile(conf, []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("nats-server does not accept the configuration: %v\n%s", err, auth)
	}
	if len(opts.TrustedOperators) != 1 || opts.SystemAccount != au.SystemKey() || opts.AccountResolver == nil {
		t.Fatalf("operator mode not configured: operators %d, system %q, resolver %v", len(opts.TrustedOperators), opts.SystemAccount,
			opts.AccountResolver)
	}
	opts.NoSigs, opts.NoLog = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	url := s.ClientURL()

	if nc, err := nats.Connect(url, nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("a connection without credentials was admitted")
	}
	c, err := au.Issue(identity.Request{Role: identity.RoleAuditor, Name: "reader", Record: true})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, c.Option(), nats.NoReconnect())
	if err != nil {
		t.Fatalf("an identity of the authority was refused: %v", err)
	}
	defer nc.Close()
	if _, err := nc.JetStream(); err != nil {
		t.Fatal(err)
	}

	// Revoked and pushed: the server closes the connection and refuses a
	// new one.
	if _, err := au.Revoke(identity.RoleAuditor, "reader", time.Now()); err != nil {
		t.Fatal(err)
	}
	sys, err := au.SystemUser()
	if err != nil {
		t.Fatal(err)
	}
	snc, err := nats.Connect(url, sys.Option())
	if err != nil {
		t.Fatal(err)
	}
	defer snc.Close()
	acc, err := au.AccountJWT()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := identity.Push(ctx, snc, acc); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for nc.IsConnected() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if nc.IsConnected() {
		t.Fatal("the revoked identity's connection is still open")
	}
	if nc2, err := nats.Connect(url, c.Option(), nats.NoReconnect()); err == nil {
		nc2.Close()
		t.Fatal("the revoked identity was admitted again")
	}
}

func TestServerConfigRefusesAResolverDirItCannotQuote(t *testing.T) {
	au, _, err := identity.Open(filepath.Join(t.TempDir(), "auth"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"", "/data/\"x", "/data/x\ninclude /etc/passwd"} {
		if _, err := au.ServerConfig(d); err == nil || !strings.Contains(err.Error(), "resolver dir") {
			t.Errorf("%q: %v, want an error naming the resolver dir", d, err)
		}
	}
}
