package identity_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/identity/identitytest"
	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/subject"
)

// TestAttemptsPerRole runs the attack table against a secured server as
// every role and without credentials: each attempt succeeds for the roles
// allowed it and is refused for everyone else.
func TestAttemptsPerRole(t *testing.T) {
	s := natstest.RunSecured(t)
	// Two sessions with entries: one of this host, one of another.
	_, adminJS := s.Connect(t, identity.Request{Role: identity.RoleIngest})
	ctx := t.Context()
	for _, sess := range []string{"sess-own", "sess-other"} {
		if _, err := adminJS.Publish(ctx, subject.Ledger(sess), []byte(`{"n":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	target := identitytest.Target{Session: "sess-own", OtherSession: "sess-other", OtherHost: "other-host"}
	who := []string{"none"}
	who = append(who, identity.Roles...)
	for _, role := range who {
		var opts []nats.Option
		var self identity.Identity
		if role != "none" {
			req := identity.Request{Role: role}
			if role == identity.RoleHook {
				req.Host = "laptop.example"
			}
			c := s.Issue(t, req)
			opts, self = []nats.Option{c.Option()}, c.Identity
		}
		for _, a := range append(identitytest.Attempts(), identitytest.Own()...) {
			t.Run(fmt.Sprintf("%s/%s", role, a.Name), func(t *testing.T) {
				want := identitytest.Expect(a, role)
				got, err := identitytest.Run(context.Background(), s.ClientURL(), opts, a, target, self)
				if got != want {
					t.Errorf("%s as %s: %s (%v), want %s", a.Name, role, got, err, want)
				}
			})
		}
	}
}
