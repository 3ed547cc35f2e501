package gatekeeper_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/services/gatekeeper"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine"),
		goleak.IgnoreTopFunction("time.Sleep"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

func TestStartsReportsReadyAndStops(t *testing.T) {
	s := natstest.RunServer(t)
	nc, js := natstest.Connect(t, s.ClientURL())
	svc, err := gatekeeper.New(gatekeeper.DefaultConfig(), service.Settings{Conn: nc})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Ready() == nil {
		t.Fatal("ready before Run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	natstest.Eventually(t, 10*time.Second, svc.Ready)
	if _, err := js.Stream(t.Context(), stream.Ledger); err != nil {
		t.Fatalf("streams not ensured: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop")
	}
	if svc.Ready() == nil {
		t.Fatal("still ready after stopping")
	}
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
