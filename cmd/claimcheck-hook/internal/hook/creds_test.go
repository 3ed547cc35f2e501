//go:build !oneshot_notls

package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// The TLS build authenticates with NATS credentials (--creds /
// CLAIMCHECK_NATS_CREDS): against a server that accepts only a known nkey,
// the event is delivered with the seed; without it the event is spooled
// and the hook exits 1 saying NATS refused it (not an outage: the agent
// CLI shows the message).
func TestCredsAuthenticateTheHook(t *testing.T) {
	user, _ := nkeys.CreateUser()
	pub, _ := user.PublicKey()
	seed, _ := user.Seed()
	srv := natstest.RunWithOptions(t, &server.Options{JetStream: true, Nkeys: []*server.NkeyUser{{Nkey: pub}}})
	seedFile := filepath.Join(t.TempDir(), "hook.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	opt, err := nats.NkeyOptionFromSeed(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(srv.ClientURL(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	natstest.Bootstrap(t, js, nil)

	f := setup(t, false)
	f.env["CLAIMCHECK_NATS_URL"] = srv.ClientURL()
	f.js = js
	if r := runHook(t, f.env, hookJSON("s-creds", "PostToolUse", "")); r.code != ExitFailed || !strings.Contains(r.stderr, "NATS refused the credentials: Authorization Violation") || !strings.Contains(r.stderr, "kept in the spool") {
		t.Fatalf("without credentials: %+v", r)
	}
	spooled, _ := filepath.Glob(filepath.Join(f.env["CLAIMCHECK_HOOK_STATE_DIR"], "spool", "*.evt"))
	if len(spooled) != 1 || len(f.intake(t)) != 0 {
		t.Fatalf("without credentials: %d spooled, %d delivered; want 1 and 0", len(spooled), len(f.intake(t)))
	}
	f.env["CLAIMCHECK_NATS_CREDS"] = seedFile
	f.env["CLAIMCHECK_HOOK_RETRY_AFTER"] = "1ms"
	time.Sleep(5 * time.Millisecond)
	if r := runHook(t, f.env, hookJSON("s-creds", "PostToolUse", "")); r.code != 0 {
		t.Fatalf("with credentials: %+v", r)
	}
	if n := len(f.intake(t)); n != 2 {
		t.Fatalf("with credentials: %d events in INTAKE, want 2 (the spooled one first)", n)
	}
}
