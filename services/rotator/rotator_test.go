package rotator_test

import (
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/service/servicetest"
	"github.com/claimcheck/claimcheck/services/rotator"
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
		return rotator.New(rotator.DefaultConfig(), set)
	})
}

func TestRejectsBadSettings(t *testing.T) {
	if _, err := rotator.New(rotator.DefaultConfig(), service.Settings{}); !errors.Is(err, service.ErrNoConn) {
		t.Fatalf("no connection: %v", err)
	}
	c := rotator.DefaultConfig()
	c.Streams.Replicas = 0
	if _, err := rotator.New(c, service.Settings{}); err == nil {
		t.Fatal("bad stream options accepted")
	}
}
