package rotator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

func (e *env) keyRequest(req schemas.KeyRequest) schemas.KeyReply {
	e.t.Helper()
	raw, _ := json.Marshal(req)
	m, err := e.nc.Request(subject.RotatorKeys, raw, 10*time.Second)
	if err != nil {
		e.t.Fatalf("request: %v", err)
	}
	var rep schemas.KeyReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		e.t.Fatalf("reply %s: %v", m.Data, err)
	}
	return rep
}

// The rotator is the key registry's writer: `claimcheck keys rotate|revoke`
// ask it over NATS; each change is in its chain before it answers; bad
// requests change nothing.
func TestKeyRequestsAreServedAndLedgered(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.rot.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done }) //nolint:errcheck // Run returns nil on cancel
	natstest.Eventually(t, 10*time.Second, e.rot.Ready)

	rep := e.keyRequest(schemas.KeyRequest{Op: "rotate", Overlap: "1h"})
	if rep.Error != "" || rep.Key == nil || rep.Key.KeyID != "v2" || len(rep.Retired) != 1 {
		t.Fatalf("rotate: %+v", rep)
	}
	at := e.clock.Now().Add(-time.Minute).Format(time.RFC3339Nano)
	if rep := e.keyRequest(schemas.KeyRequest{Op: "revoke", KeyID: "v1", At: at}); rep.Error != "" || rep.Key == nil || rep.Key.RevokedAt == nil {
		t.Fatalf("revoke: %+v", rep)
	}
	for _, tc := range []struct {
		req  schemas.KeyRequest
		want string
	}{
		{schemas.KeyRequest{Op: "delete", KeyID: "v1"}, "unknown op"},
		{schemas.KeyRequest{Op: "rotate", Overlap: "soon"}, "overlap"},
		{schemas.KeyRequest{Op: "rotate", Algorithm: "rsa"}, "rsa"},
		{schemas.KeyRequest{Op: "revoke", KeyID: "v1", At: "yesterday"}, "RFC 3339"},
		{schemas.KeyRequest{Op: "revoke", KeyID: "v7", At: at}, "v7"},
	} {
		if rep := e.keyRequest(tc.req); !strings.Contains(rep.Error, tc.want) {
			t.Errorf("%+v: %+v, want an error naming %q", tc.req, rep, tc.want)
		}
	}
	keys, _ := e.reg.List(t.Context())
	if len(keys) != 2 {
		t.Fatalf("%d keys after bad requests, want 2", len(keys))
	}
	kinds := map[string]int{}
	_ = ledger.NewReader(e.js, stream.Ledger).Walk(t.Context(), schemas.RotatorChain, 0, func(s ledger.Stored) error {
		var en schemas.Entry
		if err := json.Unmarshal(s.Raw, &en); err == nil {
			kinds[en.HookEvent]++
		}
		return nil
	})
	if kinds[schemas.RotatorKeyRotated] != 2 || kinds[schemas.RotatorKeyRevoked] != 1 || kinds[schemas.RotatorKeyRetired] != 1 {
		t.Fatalf("rotator records: %v", kinds)
	}
}
