package rotator_test

import (
	"errors"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/service/servicetest"
	"github.com/claimcheck/claimcheck/services/rotator"
)

func TestMain(m *testing.M) {
	if os.Getenv("ROTATOR_CRASH_CHILD") == "1" {
		os.Exit(crashChild()) //nolint:forbidigo // the re-executed test binary is the child's main
	}
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine"),
		goleak.IgnoreTopFunction("time.Sleep"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

func TestLifecycle(t *testing.T) {
	servicetest.Lifecycle(t, func(set service.Settings) (servicetest.Service, error) {
		return rotator.New(validConfig(t), set)
	})
}

func TestRejectsBadSettings(t *testing.T) {
	if _, err := rotator.New(validConfig(t), service.Settings{}); !errors.Is(err, service.ErrNoConn) {
		t.Fatalf("no connection: %v", err)
	}
	c := validConfig(t)
	c.Streams.Replicas = 0
	if _, err := rotator.New(c, service.Settings{}); err == nil {
		t.Fatal("bad stream options accepted")
	}
}
