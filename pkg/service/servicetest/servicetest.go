// Package servicetest checks the lifecycle every claimcheck service shares:
// not ready before Run, ready while running against a real JetStream server
// (with the streams ensured), stopped and not ready after its context ends.
package servicetest

import (
	"context"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/service"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// Service is what the check drives.
type Service interface {
	Run(ctx context.Context) error
	Ready() error
}

// Lifecycle starts a server, builds the service with newSvc and checks it.
func Lifecycle(t *testing.T, newSvc func(service.Settings) (Service, error)) {
	t.Helper()
	s := natstest.RunServer(t)
	nc, js := natstest.Connect(t, s.ClientURL())
	svc, err := newSvc(service.Settings{Conn: nc})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Ready() == nil {
		t.Fatal("ready before Run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
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
		t.Fatal("did not stop within 10s of its context ending")
	}
	if svc.Ready() == nil {
		t.Fatal("still ready after stopping")
	}
}
