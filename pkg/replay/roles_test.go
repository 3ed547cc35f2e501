package replay

import (
	"context"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/ledger"
	"github.com/claimcheck/claimcheck/pkg/natstest"
)

// The people who replay and export the ledger read it as operator or
// auditor: their permissions (docs/identity.md) cover the ordered consumer
// from a start time, the predecessor lookups (batched direct gets) and the
// anchors; the hook's do not.
func TestRunWithTheReadingRoles(t *testing.T) {
	s := natstest.RunSecured(t)
	_, ingestJS := s.Connect(t, identity.Request{Role: identity.RoleIngest, Name: "ingest-1"})
	f := &fixture{js: ingestJS, app: ledger.NewAppender(ingestJS, ledger.AppenderConfig{})}
	f.standard(t)
	for _, role := range []string{identity.RoleOperator, identity.RoleAuditor} {
		_, js := s.Connect(t, identity.Request{Role: role, Name: "reader"})
		var n int
		sum, err := Run(t.Context(), Config{JS: js, Anchors: ledger.NewAnchors(js), Window: Window{Since: t0.Add(5 * 60e9)}},
			func(r *Record) error {
				if r.Check != CheckOK {
					t.Errorf("%s: %s", role, show(r))
				}
				n++
				return nil
			})
		if err != nil || n != 15 || sum.Starts["hot"]+sum.Starts["genesis"] != 2 {
			t.Fatalf("%s: %d entries, %+v, %v", role, n, sum, err)
		}
	}
	_, hookJS := s.Connect(t, identity.Request{Role: identity.RoleHook, Host: "dev1.example.com"})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if _, err := Run(ctx, Config{JS: hookJS}, func(*Record) error { return nil }); err == nil {
		t.Fatal("a hook identity read the ledger")
	}
}
