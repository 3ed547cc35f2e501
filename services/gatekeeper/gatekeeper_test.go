package gatekeeper_test

import (
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/service/servicetest"
	"github.com/claimcheck/claimcheck/services/gatekeeper"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine"),
		goleak.IgnoreTopFunction("time.Sleep"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

func TestLifecycle(t *testing.T) {
	servicetest.Lifecycle(t, func(set service.Settings) (servicetest.Service, error) {
		return gatekeeper.New(gatekeeper.DefaultConfig(), set)
	})
}

func TestRejectsBadSettings(t *testing.T) {
	if _, err := gatekeeper.New(gatekeeper.DefaultConfig(), service.Settings{}); !errors.Is(err, service.ErrNoConn) {
		t.Fatalf("no connection: %v", err)
	}
	c := gatekeeper.DefaultConfig()
	c.Streams.Replicas = 0
	if _, err := gatekeeper.New(c, service.Settings{}); err == nil {
		t.Fatal("bad stream options accepted")
	}
}
