package verifier_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"go.uber.org/goleak"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/service/servicetest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/schemas"
	"github.com/claimcheck/claimcheck/services/verifier"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine"),
		goleak.IgnoreTopFunction("time.Sleep"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

func TestLifecycle(t *testing.T) {
	keyDir := t.TempDir()
	servicetest.Lifecycle(t, func(set service.Settings) (servicetest.Service, error) {
		js, err := jetstream.New(set.Conn)
		if err != nil {
			return nil, err
		}
		if err := stream.Ensure(t.Context(), js, stream.DefaultOptions()); err != nil {
			return nil, err
		}
		reg, err := keyring.OpenRegistry(t.Context(), js)
		if err != nil {
			return nil, err
		}
		if _, _, err := keyring.EnsureFirst(t.Context(), reg, keyring.Dir{Path: keyDir}, "", time.Now()); err != nil {
			return nil, err
		}
		cfg := verifier.DefaultConfig()
		cfg.KeyDir = keyDir
		return verifier.New(cfg, set)
	})
}

func TestRejectsBadSettings(t *testing.T) {
	good := verifier.DefaultConfig()
	good.KeyDir = t.TempDir()
	if _, err := verifier.New(good, service.Settings{}); !errors.Is(err, service.ErrNoConn) {
		t.Fatalf("no connection: %v", err)
	}
	for name, mutate := range map[string]func(*verifier.Config){
		"verifier.key_dir":        func(c *verifier.Config) { c.KeyDir = "" },
		"verifier.workers":        func(c *verifier.Config) { c.Workers = 0 },
		"verifier.ack_wait":       func(c *verifier.Config) { c.AckWait = time.Millisecond },
		"verifier.purge_interval": func(c *verifier.Config) { c.PurgeInterval = time.Microsecond },
		"replicas":                func(c *verifier.Config) { c.Streams.Replicas = 0 },
	} {
		c := good
		mutate(&c)
		if _, err := verifier.New(c, service.Settings{}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming it", name, err)
		}
	}
}

func TestMissingSigningKeyStopsStartWithAHint(t *testing.T) {
	srv := natstest.RunServer(t)
	nc, _ := natstest.Connect(t, srv.ClientURL())
	cfg := verifier.DefaultConfig()
	cfg.KeyDir = t.TempDir()
	svc, err := verifier.New(cfg, service.Settings{Conn: nc})
	if err != nil {
		t.Fatal(err)
	}
	err = svc.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "claimcheck keys rotate") {
		t.Fatalf("a verifier without keys started: %v", err)
	}
}

func TestBadPolicyFileStopsStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.json")
	orig, _ := schemas.Policies.ReadFile(schemas.DefaultPolicy)
	bad := strings.Replace(string(orig), `"version"`, `"colour": "blue", "version"`, 1)
	writeFile(t, path, []byte(bad))
	cfg := verifier.DefaultConfig()
	cfg.KeyDir, cfg.PolicyFile = t.TempDir(), path
	srv := natstest.RunServer(t)
	nc, _ := natstest.Connect(t, srv.ClientURL())
	_, err := verifier.New(cfg, service.Settings{Conn: nc})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "colour") {
		t.Fatalf("a policy with an unknown field was accepted: %v", err)
	}
}
